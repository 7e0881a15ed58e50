"""Repro bundles: one folder per failing case x converter x check x backend under
`<results>/repro/`, enough to reproduce the failure without this repo's harness.

A bundle holds the standalone case (`<case>.py`, inputs, eager outputs), the converter's
artefacts (pnnx.param / ncnn.param ...), `inputs/*.npy`, `expected/*.npy` and, when the
backend produced outputs (a numeric failure), `actual/*.npy`, plus `result.json`
(status, error, metrics), `environment.json` and a README saying how to reproduce.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..artefacts import actual_dir, case_workdir, safe, save_arrays
from ..results import Result

REPRO = "repro"
FAILING = {"fail-numeric", "fail-format", "fail-convert", "fail-runtime", "crash", "timeout", "oom"}
COPIED = ("pnnx.param", "pnnx.bin", "pnnx.py", "pnnx.onnx", "ncnn.param", "ncnn.bin", "ncnn.py")


def bundle_name(r: Result) -> str:
    parts = [r.case, r.converter, r.check, r.backend or "", r.precision or ""]
    return safe("__".join(p for p in parts if p))


def bundle_dir(results_dir: Path, r: Result) -> Path:
    return Path(results_dir) / REPRO / bundle_name(r)


def _copy_artefacts(workdir: Path | None, dest: Path) -> dict[str, str]:
    """The converter's artefacts copied into the bundle: kind -> file name."""
    if workdir is None or not (workdir / "artefacts.json").is_file():
        return {}
    from ..artefacts import Artefacts

    arts = Artefacts.load(workdir)
    copied = {}
    for kind, path in sorted(arts.paths.items()):
        if kind in COPIED and Path(path).is_file():
            shutil.copy2(path, dest / Path(path).name)
            copied[kind] = Path(path).name
    return copied


def _actual_outputs(workdir: Path | None, backend: str, precision: str) -> list | None:
    folder = actual_dir(workdir, backend, precision) if workdir is not None else None
    if folder is None or not folder.is_dir():
        return None
    try:
        return [np.load(f, allow_pickle=False) for f in sorted(folder.glob("*.npy"), key=lambda p: int(p.stem))]
    except (OSError, ValueError):  # unreadable: the bundle says it has no outputs
        return None


# how to run each artefact kind outside the harness (<kind>: its file in the bundle), for the
# README of a bundle whose backend consumes it
RUN_ARTEFACT = {
    "pnnx.onnx": "run the ONNX file <pnnx.onnx> in your runtime (onnxruntime: `onnxruntime.InferenceSession("
                 "'<pnnx.onnx>').run(None, feeds)`), feeding inputs/*.npy in order as its graph inputs; a complex "
                 "tensor travels as reals with a trailing (real, imaginary) axis, at the positions the model's "
                 "metadata names (pnnx.complex_inputs / pnnx.complex_outputs)",
    "ncnn.param": "load <ncnn.param> and <ncnn.bin> with ncnn (`net.load_param`, `net.load_model`) and feed "
                  "inputs/*.npy as in0, in1, ... (<ncnn.py> declares each input's batch index)",
    "pnnx.py": "run <pnnx.py> with torch (it reads <pnnx.bin>) on inputs/*.npy",
    "pnnx.param": "load <pnnx.param> and <pnnx.bin> (the pnnx graph) in your runtime and feed inputs/*.npy",
}


def _how_to_run(consumes, artefacts: dict[str, str]) -> list[str]:
    """How to run the artefacts the failing backend ran (every kind when it is not known)."""
    lines = []
    for kind in consumes if consumes is not None else RUN_ARTEFACT:
        text = RUN_ARTEFACT.get(kind)
        if text:
            for k in COPIED:
                text = text.replace(f"<{k}>", artefacts.get(k, k))
            lines.append("then " + text)
    return lines


def readme_text(r: Result, artefacts: dict[str, str], has_actual: bool, consumes=None) -> str:
    """The bundle's README; `artefacts`: kind -> file copied; `consumes`: the failing backend's
    artefact kinds (None: unknown)."""
    name = safe(r.case.replace("/", "__"))
    stage = f" Stage: {r.stage}." if getattr(r, "stage", "") else ""
    lines = [
        f"# Repro: {r.case} [{r.converter} {r.check} {r.backend or ''} {r.precision or ''}]".rstrip() + "\n",
        f"Status: {r.status}.{stage} {r.error}\n",
        "Reproduce without the conformance harness:\n",
        "    python case/*.py   # runs the model eagerly and checks it against case/*.out*.npy",
    ]
    if consumes is None or r.converter == "upstream":
        lines.append("    pnnx case/*.pt inputshape=...   # upstream converter, on the traced TorchScript module")
    lines += _how_to_run(consumes, artefacts)
    lines += ["", "Compare the backend's outputs with expected/*.npy (np.load); the tolerance applied is in "
              "result.json (metrics.atol / metrics.rtol)."]
    if has_actual:
        lines.append("actual/*.npy holds what the backend produced in the run.")
    lines.append(f"Files: case/ (standalone {name}), {', '.join(artefacts.values()) or 'no converter artefacts'}, "
                 "inputs/, expected/, result.json, environment.json.")
    return "\n".join(lines) + "\n"


class CaseShare:
    """What every bundle of one case holds alike, built once for that case: its standalone files
    (`case_files`: a trace and an eager run) and its oracle per rounding. It keeps one case at
    a time (write_bundles hands records out case by case); a build that raises is not kept."""

    def __init__(self) -> None:
        self.case_id, self._files, self._subjects = None, None, {}

    def _enter(self, case) -> None:
        if case.id != self.case_id:
            self.case_id, self._files, self._subjects = case.id, None, {}

    def files(self, case) -> dict[str, bytes]:
        from pnnx_op_cases.standalone import case_files

        self._enter(case)
        if self._files is None:
            self._files = case_files(case)
        return self._files

    def subject(self, case, rounding):
        from ..oracle import Subject

        self._enter(case)
        if rounding not in self._subjects:
            self._subjects[rounding] = Subject(case, rounding)
        return self._subjects[rounding]


def write_bundle(results_dir: Path, r: Result, case, *, workdir: Path | None = None, backend=None,
                 environment: dict | None = None, share: CaseShare | None = None) -> Path:
    """One failure's bundle; returns its folder. `share`: the case's files and oracle when
    other bundles of the case are written too."""
    from pnnx_op_cases.standalone import write_files

    share = share or CaseShare()
    dest = bundle_dir(results_dir, r)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / "result.json").write_text(json.dumps(asdict(r), indent=1, sort_keys=True))
    (dest / "environment.json").write_text(json.dumps(environment or {}, indent=1, sort_keys=True))
    artefacts = _copy_artefacts(workdir, dest)
    actual = None
    try:
        write_files(share.files(case), dest / "case")
        rounding = backend.precisions.get(r.precision) if backend is not None and r.precision else None
        subject = share.subject(case, rounding)
        save_arrays(dest / "inputs", subject.numpy_inputs)
        save_arrays(dest / "expected", subject.expected)
        if r.status == "fail-numeric" and r.check == "parity":
            actual = _actual_outputs(workdir, r.backend, r.precision or "fp32")
    except Exception as e:  # a case that cannot even build: the bundle says so
        (dest / "case-error.txt").write_text(f"{type(e).__name__}: {e}\n")
    if actual is not None:
        save_arrays(dest / "actual", actual)
    consumes = getattr(backend, "consumes", None) if r.check == "parity" else None
    (dest / "README.md").write_text(readme_text(r, artefacts, actual is not None, consumes))
    return dest


def write_bundles(results_dir: Path, results: list[Result], cases: dict, *, workroot: Path | None = None,
                  backends: dict | None = None, environment: dict | None = None) -> list[Path]:
    """A bundle for every failing record whose case is known, in the records' order. `workroot`
    is where the worker kept artefacts (`<workroot>/<case.safe_name>/<converter>/`). Written
    case by case, so a case's files and oracle are built once for all its bundles."""
    failing = [r for r in results if r.status in FAILING and cases.get(r.case) is not None]
    share, written = CaseShare(), {}
    for i in sorted(range(len(failing)), key=lambda i: failing[i].case):
        r = failing[i]
        case = cases[r.case]
        backend = (backends or {}).get(r.backend) if r.backend else None
        rounding = backend.precisions.get(r.precision) if backend is not None and r.precision else None
        workdir = case_workdir(workroot, case, r.converter, rounding) if workroot else None
        written[i] = write_bundle(results_dir, r, case, workdir=workdir, backend=backend,
                                  environment=environment, share=share)
    return [written[i] for i in range(len(failing))]
