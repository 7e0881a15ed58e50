"""Running one unit in the current process. The worker keeps one Executor for its life:
converters, backends (and the Vulkan device they hold) are made once, the oracle and the
artefacts once per case."""
from __future__ import annotations

import hashlib
import time
import traceback
from pathlib import Path

import numpy as np
from pnnx_op_cases.case import TAG_RANDOM

from . import stages
from .artefacts import MANIFEST, Artefacts, case_workdir, keep_actual
from .backends import load_backend
from .cases import load_case
from .compare import bitwise_equal, compare
from .converters import load_converter
from .errors import (CheckOutcome, FormatFailed, HarnessError, NotApplicable, NotSupported, NumericFailed,
                     RuntimeFailed, Skipped)
from .oracle import Subject
from .results import Result
from .tolerances import SELF_CHECK_ROUNDING_FACTOR, accumulation, tolerance_for
from .units import Unit


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


class Executor:
    def __init__(self, workroot: Path, tier: str = "smoke") -> None:
        self.workroot = Path(workroot)
        self.tier = tier
        self._converters: dict = {}
        self._backends: dict = {}
        self._subjects: dict = {}
        self._artefacts: dict = {}
        self._outputs: dict = {}  # a pure backend's outputs by the content of the files it read
        self._case_id = None

    def close(self) -> None:
        for converter in self._converters.values():
            close = getattr(converter, "close", None)  # a plug-in converter need not have one
            if close is not None:
                close()

    # --- caches -----------------------------------------------------------------------
    def converter(self, name):
        if name not in self._converters:
            self._converters[name] = load_converter(name)
        return self._converters[name]

    def backend(self, spec):
        if spec not in self._backends:
            self._backends[spec] = load_backend(spec)
        return self._backends[spec]

    def _enter_case(self, case_id: str) -> None:
        if case_id != self._case_id:  # keep one case's oracle and artefacts in memory
            self._subjects.clear()
            self._artefacts.clear()
            self._outputs.clear()
            self._case_id = case_id

    def subject(self, case, rounding=None) -> Subject:
        self._enter_case(case.id)  # never another case's oracle, whoever calls
        if rounding not in self._subjects:
            self._subjects[rounding] = Subject(case, rounding)
        return self._subjects[rounding]

    def artefacts(self, case, converter: str, rounding=None) -> Artefacts:
        """The converter's artefacts (converted once; a restarted worker reuses the manifest).
        Raises the conversion's outcome when it did not succeed."""
        self._enter_case(case.id)  # never another case's artefacts, whoever calls
        key = (converter, rounding)
        if key not in self._artefacts:
            self._artefacts[key] = self._convert(case, converter, rounding)
        got = self._artefacts[key]
        if isinstance(got, CheckOutcome):
            raise got
        return got

    def _convert(self, case, converter, rounding):
        workdir = case_workdir(self.workroot, case, converter, rounding)
        if (workdir / MANIFEST).is_file():
            return Artefacts.load(workdir)
        from .oracle import build_model, has_lazy_weights, seed_lazy_weights

        inputs = [x.clone() for x in self.subject(case, rounding).inputs]
        model = build_model(case, rounding, keep_lazy=True)
        if has_lazy_weights(model):  # the converter's first forward draws the oracle's weights
            seed_lazy_weights(case)
        try:
            arts = self.converter(converter).convert(case, workdir, model, inputs, fp16=rounding == "fp16")
        except CheckOutcome as e:
            return e
        arts.save()
        return arts

    # --- running ----------------------------------------------------------------------
    def run_parity(self, unit: Unit):
        """(case, backend, subject, outputs) of one parity unit, for callers that judge the
        outputs beyond the tolerance table too (the unit tests pin some bounds of their own).
        Raises the unit's outcome when nothing ran."""
        case = load_case(unit.case)
        self._enter_case(case.id)
        return (case, *parity_outputs(self, case, unit))

    def execute(self, unit: Unit) -> Result:
        res = Result(case=unit.case, op="", table="", converter=unit.converter, check=unit.check,
                     status="pass", backend=unit.backend, precision=unit.precision, tier=self.tier)
        start = time.perf_counter()
        stages.mark("")
        try:
            case = load_case(unit.case)
            res.op, res.table = case.op, case.table
            self._enter_case(case.id)
            CHECKS[unit.check](self, case, unit, res)
        except CheckOutcome as e:
            res.status, res.error, res.detail = e.status, _first_line(e.message), e.detail
            if unit.check == "parity" and e.status not in ("skipped", "not-applicable"):
                res.stage = e.stage or stages.BY_STATUS.get(e.status, "")
        except MemoryError:
            res.status, res.error = "oom", "MemoryError: the worker's memory limit was reached"
            res.stage = stages.current() if unit.check == "parity" else ""
            res.detail = traceback.format_exc()[-4000:]
        except Exception as e:
            res.status, res.error = "harness-error", _first_line(f"{type(e).__name__}: {e}")
            res.detail = traceback.format_exc()[-4000:]
        res.time_s = round(time.perf_counter() - start, 4)
        # results must not depend on where this run kept its scratch files
        res.error = res.error.replace(str(self.workroot), "<work>")
        res.detail = res.detail.replace(str(self.workroot), "<work>")
        return res


def _upstream_outcome(e: CheckOutcome) -> CheckOutcome:
    """A check downstream of a failed conversion reports the conversion's outcome."""
    return type(e)(f"conversion: {e.message}" if not e.message.startswith("unsupported") else e.message)


def _artefacts_or_outcome(ex: Executor, case, unit: Unit, rounding=None) -> Artefacts:
    stages.mark("convert")
    try:
        return ex.artefacts(case, unit.converter, rounding)
    except CheckOutcome as e:
        outcome = _upstream_outcome(e)
        outcome.stage = "convert"
        raise outcome from None


def check_convert(ex: Executor, case, unit: Unit, res: Result) -> None:
    arts = ex.artefacts(case, unit.converter)
    res.sizes = arts.sizes()
    if arts.unsupported:
        res.detail = "\n".join(f"{k}: {v}" for k, v in sorted(arts.unsupported.items()))


def _validator():
    try:
        from pnnx_reference.validate import validate
    except ImportError as e:
        raise HarnessError(f"the format validator is not importable: {e}") from None
    return validate


def _ncnn_loads(arts: Artefacts) -> list[str]:
    import ncnn

    net = ncnn.Net()
    net.opt.use_vulkan_compute = False
    problems = []
    if net.load_param(str(arts.paths["ncnn.param"])) != 0:
        problems.append("ncnn.param: ncnn's load_param rejected it")
    elif net.load_model(str(arts.paths["ncnn.bin"])) != 0:
        problems.append("ncnn.bin: ncnn's load_model rejected it")
    net.clear()
    return problems


def check_format(ex: Executor, case, unit: Unit, res: Result) -> None:
    arts = _artefacts_or_outcome(ex, case, unit)
    validate = _validator()
    problems, checked, warnings = [], [], []
    for kind in ("pnnx.param", "ncnn.param"):
        if arts.has(kind):
            checked.append(kind)
            found = validate(arts.paths[kind])
            problems += [f"{kind}: {p}" for p in found if not p.warning]
            warnings += [f"{kind}: {p}" for p in found if p.warning]  # the validator's default: not a failure
    if arts.has("ncnn.param", "ncnn.bin"):
        checked.append("ncnn loader")
        problems += _ncnn_loads(arts)
    res.sizes = arts.sizes()
    if not checked:
        raise FormatFailed("no pnnx.param or ncnn.param to validate")
    if problems:
        raise FormatFailed(problems[0], "\n".join(problems))
    res.detail = "\n".join(["checked: " + ", ".join(checked), *warnings])


def check_roundtrip(ex: Executor, case, unit: Unit, res: Result) -> None:
    from .backends.pnnx_python import load_generated_model
    from .oracle import to_numpy

    if TAG_RANDOM in case.tags:
        raise Skipped(f"random output: {case.reasons.get(TAG_RANDOM, 'random')}")
    arts = _artefacts_or_outcome(ex, case, unit)
    if "onnx" in case.tags:
        raise NotApplicable("not applicable: bit-identity needs the oracle's own kernels, and an ONNX case's "
                            "oracle is onnxruntime (parity on pnnx-python compares them within tolerance)")
    if not getattr(ex.converter(unit.converter), "bit_identical", True):
        raise NotApplicable("not applicable: an export to ONNX rewrites operators (decompositions, reordered "
                            "arithmetic), so bit-identity with the PyTorch oracle is not promised; parity on "
                            "pnnx-python compares within tolerance")
    if not arts.has("pnnx.py", "pnnx.bin"):
        raise NotSupported(arts.missing_reason(("pnnx.py", "pnnx.bin")))
    subject = ex.subject(case)
    import torch

    try:
        model = load_generated_model(arts.paths["pnnx.py"])
        with torch.no_grad():
            out = to_numpy(model(*[x.clone() for x in subject.inputs]))
    except Exception as e:
        raise RuntimeFailed(_first_line(f"{type(e).__name__}: {e}"), traceback.format_exc()) from None
    why = bitwise_equal(out, subject.expected)
    if why:
        raise NumericFailed(f"not bit-identical to the oracle: {why}")


def check_reexport(ex: Executor, case, unit: Unit, res: Result) -> None:
    """The generated `_pnnx.py` model, converted again, gives the same pnnx.param."""
    from .backends.pnnx_python import load_generated_model

    arts = _artefacts_or_outcome(ex, case, unit)
    if not getattr(ex.converter(unit.converter), "reexports", True):
        raise NotApplicable("not applicable: this converter takes ONNX files and names operators after the "
                            "exporter's nodes, which a second export renames; the fixed point is checked on "
                            "the Python route (reference)")
    if not arts.has("pnnx.py", "pnnx.bin", "pnnx.param"):
        raise NotSupported(arts.missing_reason(("pnnx.py", "pnnx.bin", "pnnx.param")))
    try:
        model = load_generated_model(arts.paths["pnnx.py"])
    except Exception as e:
        raise RuntimeFailed(_first_line(f"generated code: {type(e).__name__}: {e}"), traceback.format_exc()) from None
    workdir = Path(arts.workdir).parent / f"{unit.converter}-reexport"
    inputs = [x.clone() for x in ex.subject(case).inputs]
    again = ex.converter(unit.converter).convert(case, workdir, model, inputs)
    if not again.has("pnnx.param"):
        raise NumericFailed("re-export wrote no pnnx.param")
    first = Path(arts.paths["pnnx.param"]).read_text().splitlines()
    second = Path(again.paths["pnnx.param"]).read_text().splitlines()
    for i, (a, b) in enumerate(zip(first, second), 1):
        if a != b:
            raise FormatFailed(f"pnnx.param line {i} differs after re-export", f"first:  {a}\nagain:  {b}")
    if len(first) != len(second):
        raise FormatFailed(f"pnnx.param has {len(first)} lines, {len(second)} after re-export")


def _accumulation_bound(subject, case, tol):
    terms = accumulation(case.op)
    if terms is None or tol.accum == 0:
        return None
    k = terms(subject)
    return [tol.accum * k * tol.unit * m for m in subject.magnitude()]


def parity_outputs(ex: Executor, case, unit: Unit, res: Result | None = None):
    """Run the unit's backend on the converter's artefacts: (backend, subject, outputs).
    Raises the outcome (not supported, skipped, runtime failure) when there is nothing to
    compare."""
    backend = ex.backend(unit.backend)
    if unit.precision not in backend.precisions:
        raise HarnessError(f"backend {unit.backend} has no precision {unit.precision!r}")
    reason = backend.applicable(case)
    if reason:
        raise NotSupported(reason, stage="load")
    if TAG_RANDOM in case.tags:
        raise Skipped(f"random output: {case.reasons.get(TAG_RANDOM, 'random')}")
    rounding = backend.precisions[unit.precision]
    subject = ex.subject(case, rounding)
    if not backend.consumes:  # runs the case itself, whatever the converter did
        arts = Artefacts(unit.converter, case.id, ex.workroot)
    else:
        arts = _artefacts_or_outcome(ex, case, unit, rounding)
    if not arts.has(*backend.consumes):
        raise NotSupported(arts.missing_reason(backend.consumes))
    if res is not None:
        res.sizes = {k: v for k, v in arts.sizes().items() if k in backend.consumes}
    key = _content_key(backend, arts, unit, rounding)
    if key is not None and key in ex._outputs:  # a record does not depend on which routes ran before
        return backend, subject, [np.copy(y) for y in ex._outputs[key]]
    outputs = _run_backend(backend, arts, unit.precision, subject.numpy_inputs)
    if key is not None:
        ex._outputs[key] = [np.copy(y) for y in outputs]
    return backend, subject, outputs


def _content_key(backend, arts: Artefacts, unit: Unit, rounding):
    """What a pure backend's outputs depend on: the backend, the precision, the oracle's
    rounding (which picks the inputs) and the backend's content (files by their bytes)."""
    if not getattr(backend, "pure", False):
        return None
    digest = hashlib.sha256()
    for item in backend.content(arts):
        if isinstance(item, bytes):
            digest.update(b"b%d;" % len(item) + item)
        elif item is None or not Path(item).is_file():
            digest.update(b"-;")
        else:
            digest.update(b"f%d;" % Path(item).stat().st_size)
            with open(item, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
    return unit.backend, unit.precision, rounding, digest.hexdigest()


def parity_verdict(case, unit: Unit, backend, subject, outputs):
    """The outputs against the oracle under the tolerance table: (tolerance, Verdict)."""
    tol = tolerance_for(case, backend.name or unit.backend, unit.precision, backend.compute_type(unit.precision))
    return tol, compare(outputs, subject.expected, tol, _accumulation_bound(subject, case, tol),
                        loose_rank=bool(backend.consumes) and backend.consumes[0].startswith("ncnn"))


def check_parity(ex: Executor, case, unit: Unit, res: Result) -> None:
    backend, subject, outputs = parity_outputs(ex, case, unit, res)
    res.device = backend.device or ""
    tol, verdict = parity_verdict(case, unit, backend, subject, outputs)
    res.metrics = verdict.metrics
    if subject.rounding is not None:  # fp32 ULPs say nothing about an fp16 pipeline
        res.metrics.max_ulp = None
    if not verdict.ok and _within_network_rounding(ex, case, unit, subject, outputs, tol):
        res.detail = (f"{verdict.message}: within {SELF_CHECK_ROUNDING_FACTOR:g}x the network's own fp32 rounding "
                      f"of its fp64 result (the converter's self-check criterion)")
        return
    if not verdict.ok:
        keep_actual(case_workdir(ex.workroot, case, unit.converter, subject.rounding), backend.name or unit.backend,
                    unit.precision, outputs)
        raise NumericFailed(verdict.message, f"tolerance: {tol.reason}")
    _parity_at_second_shape(ex, case, unit, backend, subject, tol)


def _parity_at_second_shape(ex: Executor, case, unit: Unit, backend, subject, tol) -> None:
    """A case with a second shape (inputshape2) was converted at both: the same artefacts must
    match the oracle at the second shape too (a size frozen at the first one fails here)."""
    if subject.inputs2 is None or not backend.consumes:
        return
    arts = _artefacts_or_outcome(ex, case, unit, subject.rounding)
    outputs = _run_backend(backend, arts, unit.precision, [x.numpy().copy() for x in subject.inputs2])
    verdict = compare(outputs, subject.expected2, tol, None,
                      loose_rank=backend.consumes[0].startswith("ncnn"))
    if not verdict.ok:
        shapes = ",".join(str(list(x.shape)) for x in subject.inputs2)
        raise NumericFailed(f"at inputshape2={shapes}: {verdict.message}", f"tolerance: {tol.reason}")


def _within_network_rounding(ex: Executor, case, unit: Unit, subject, outputs, tol) -> bool:
    """A whole network on pnnx-python fp32 that misses the bound gets the converter self-check's
    second look (selfcheck.within_own_rounding): tens of conv+bn layers round more than the bound
    in fp32 alone, whichever converter folded them (tolerances.SELF_CHECK_ROUNDING_FACTOR)."""
    if case.table != "models" or unit.backend != "pnnx-python" or unit.precision != "fp32":
        return False
    import torch

    from pnnx_reference.selfcheck import within_own_rounding

    from .backends.pnnx_python import load_generated_model

    arts = _artefacts_or_outcome(ex, case, unit)
    try:
        model = load_generated_model(arts.paths["pnnx.py"])
    except Exception:
        return False
    expected = {i: torch.from_numpy(np.asarray(a)) for i, a in enumerate(subject.expected)}
    got = {i: torch.from_numpy(np.asarray(a)) for i, a in enumerate(outputs)}
    return within_own_rounding(model, [x.clone() for x in subject.inputs], expected, got, tol)


def _run_backend(backend, arts, precision, inputs):
    stage = "load"
    try:
        stages.mark(stage)
        backend.prepare(arts, precision)
        stage = "compile"
        stages.mark(stage)
        backend.compile()
        stage = "run"
        stages.mark(stage)
        return backend.run(inputs)
    except CheckOutcome as e:
        e.stage = e.stage or stage
        raise
    except MemoryError:
        raise
    except Exception as e:
        raise RuntimeFailed(stages.cause_line(f"{type(e).__name__}: {e}"), traceback.format_exc()[-4000:],
                            stage) from None
    finally:
        try:
            backend.release()
        except Exception:
            pass


CHECKS = {"convert": check_convert, "format": check_format, "roundtrip": check_roundtrip,
          "reexport": check_reexport, "parity": check_parity}
