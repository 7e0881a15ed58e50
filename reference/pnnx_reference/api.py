"""The Python API: `export(model, inputs, ...)` writes the PNNX artefacts, `capture(...)`
returns the optimised graph without writing anything.

Nothing but a `PnnxError` (one line) leaves either: an unexpected exception inside the
converter becomes a ConversionError saying so, with the original as its `__cause__`."""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn

from . import optional, selfcheck
from .frontends.python import trace
from .frontends.python.dynamic import merge_shapes
from .frontends.python.recorder import iter_values
from .frontends.python.spilled import SpilledValues
from .emit.ncnn import write_ncnn
from .emit.python.pnnx_py import write_python
from .errors import ConversionError, MissingPackage, PnnxError, UnsupportedOperator
from .files import Staging, onnx_data_path
from .input_sizes import check_fits, out_of_memory
from .formats import pnnx_param
from .ir import DTYPES, Graph, Operand
from .passes import PassContext, run_passes

ARTEFACTS = ("pnnxparam", "pnnxbin", "pnnxpy", "pnnxonnx", "ncnnparam", "ncnnbin", "ncnnpy")
_SUFFIXES = {"pnnxparam": ".pnnx.param", "pnnxbin": ".pnnx.bin", "pnnxpy": "_pnnx.py",
             "pnnxonnx": ".pnnx.onnx", "ncnnparam": ".ncnn.param", "ncnnbin": ".ncnn.bin",
             "ncnnpy": "_ncnn.py"}


@dataclass
class ExportResult:
    graph: Graph
    paths: dict[str, Path] = field(default_factory=dict)        # artefact -> file written
    unsupported: dict[str, str] = field(default_factory=dict)   # emitter -> why it wrote nothing
    notes: list[str] = field(default_factory=list)              # e.g. dynamic dims kept fixed
    value_dependent: list[str] = field(default_factory=list)    # accepted value-dependent conversions
    removed: list[Path] = field(default_factory=list)           # an earlier run's files no emitter rewrote
    warnings: list[str] = field(default_factory=list)           # e.g. an output NaN everywhere in the model
    self_check: str = "off"                                      # what the self-check found


def one_line_errors(function):
    """Only PnnxError leaves `function`: anything else is a converter bug, reported in one line
    (MemoryError and KeyboardInterrupt pass: the caller handles those)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (PnnxError, MemoryError):
            raise
        except RecursionError as err:
            raise ConversionError("the model nests too deeply to convert (Python's recursion limit "
                                  "was reached)") from err
        except Exception as err:
            text = (str(err).strip().splitlines() or [""])[0][:300]
            if (memory := out_of_memory(err)) is not None:
                raise memory from err
            raise ConversionError(f"internal error in the converter: {type(err).__name__}: {text} "
                                  "(please report it with the model)") from err
    return run


def make_inputs(input_shapes, input_types=None, device: str = "cpu") -> tuple:
    """Example inputs for shapes like [[1,3,224,224]]: seeded rand; ones for integer and bool
    types, as upstream feeds them (an index of 1 is valid for any axis longer than 1)."""
    types = list(input_types or [])
    generator = torch.Generator().manual_seed(0)
    tensors = []
    if not isinstance(input_shapes, (list, tuple)) or not all(_is_shape(s) for s in input_shapes):
        raise ConversionError(f"input_shapes must be a list of shapes of positive ints, e.g. [[1, 3, 224, 224]], "
                              f"not {str(input_shapes)[:80]!r}")
    for i, shape in enumerate(input_shapes):
        suffix = types[i] if i < len(types) and types[i] else "f32"
        if suffix not in DTYPES:
            raise ConversionError(f"unknown input type {suffix!r} (expected one of {', '.join(DTYPES)})")
        dtype = getattr(torch, DTYPES[suffix].numpy)
        check_fits(shape, DTYPES[suffix].itemsize, f"input shape {list(shape)}{suffix}")
        if DTYPES[suffix].is_integer:
            t = torch.ones(tuple(shape), dtype=dtype)
        else:
            t = torch.rand(tuple(shape), generator=generator).to(dtype)
        tensors.append(t.to(_device(device)))
    return tuple(tensors)


def _is_shape(shape) -> bool:
    return isinstance(shape, (list, tuple)) and all(
        isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape)


def _device(device: str) -> torch.device:
    if device in ("gpu", "cuda"):
        if not torch.cuda.is_available():
            raise ConversionError("device=gpu was asked for but no CUDA device is available")
        return torch.device("cuda")
    if device != "cpu":
        raise ConversionError(f"device must be cpu or gpu, not {device!r}")
    return torch.device("cpu")


def load_custom_ops(customop) -> None:
    for library in customop:
        path = Path(library)
        if not path.is_file():
            raise ConversionError(f"{library}: custom operator library not found")
        try:
            torch.ops.load_library(str(path))
        except OSError as err:
            raise ConversionError(f"{library}: cannot load: {err}") from None


def _resolve_inputs(inputs, input_shapes, input_types, device):
    if inputs is None:
        if input_shapes is None:
            raise ConversionError("give example inputs or input_shapes")
        return make_inputs(input_shapes, input_types, device)
    inputs = (inputs,) if isinstance(inputs, torch.Tensor) else tuple(inputs)
    return tuple(t.to(_device(device)) if isinstance(t, torch.Tensor) else t for t in inputs)


@dataclass
class _Captured:
    graph: Graph
    runs: list[selfcheck.Run]        # the example input sets, the outputs and every operand's value on them
    random: set[int]                 # the outputs that depend on a random operator
    value_dependent: list[str]


def _tensors(args) -> list:
    return [t for t in iter_values(args) if isinstance(t, torch.Tensor)]


def _unwritten(args) -> list:
    """The input tensors as they are before the trace: a model may write into its inputs
    (`x.view(...)[..., 2:5] = v`), and the self-check feeds the values it was traced on."""
    return [t.clone() for t in _tensors(args)]


class GivenUp:
    """A model whose caller holds no other reference to it (the command line): `export` drops
    it once the capture is checked against it, so that what the graph no longer uses (a
    TorchScript module, the original weights that fusion replaces) is freed before the passes."""

    def __init__(self, model: nn.Module):
        self._model = model

    def take(self) -> nn.Module:
        model, self._model = self._model, None
        if model is None:
            raise ConversionError("a given-up model can be exported once")
        return model


def _capture(model, inputs, inputs2, input_shapes, input_shapes2, input_types, optlevel, moduleop,
             customop, device, allow_value_dependent) -> _Captured:
    if optlevel not in (0, 1, 2):
        raise ConversionError(f"optlevel must be 0, 1 or 2, not {optlevel!r}")
    if _is_program(model):
        model, inputs, inputs2 = _from_program(model, inputs, inputs2, input_shapes, input_shapes2, input_types)
    load_custom_ops(customop)
    # a given-up model lives in _traced_runs' frame only: it is freed when that returns
    captured, runs, notes = _traced_runs(model.take() if isinstance(model, GivenUp) else model,
                                         _resolve_inputs(inputs, input_shapes, input_types, device), inputs2,
                                         input_shapes2, input_types, moduleop, device, allow_value_dependent)
    random = selfcheck.random_outputs(captured.graph)
    _optimise_bodies(captured, optlevel)
    graph = run_passes(captured.graph, optlevel, PassContext(captured.values, [r.values for r in runs if r.values is not captured.values]))
    return _Captured(graph, runs, random, notes)


def _traced_runs(model, args, inputs2, input_shapes2, input_types, moduleop, device, allow_value_dependent):
    """The checked capture at the example inputs (merged with the one at the second inputs, if
    any), the self-check's runs and the value-dependent notes."""
    # each module's own mode, put back after: model.train() would also switch the submodules the
    # user had put in eval mode (a wrapper in training mode around an eval() model)
    training = [m for m in model.modules() if m.training] if isinstance(model, nn.Module) else []
    if isinstance(model, nn.Module):
        model.to(_device(device)).eval()  # converted for inference, as upstream expects
    try:
        given = _unwritten(args)
        captured = _checked_trace(model, args, given, moduleop=moduleop, allow_value_dependent=allow_value_dependent)
        runs = [selfcheck.Run("example", given, selfcheck.traced_outputs(captured.graph, captured.values),
                              captured.values)]
        notes = captured.value_dependent
        if inputs2 is not None or input_shapes2 is not None:
            args2 = _resolve_inputs(inputs2, input_shapes2, input_types, device)
            given2 = _unwritten(args2)
            second = _checked_trace(model, args2, given2, moduleop=moduleop,
                                    allow_value_dependent=allow_value_dependent)
            captured = merge_shapes(captured, second)
            runs.append(selfcheck.Run("inputshape2", given2,
                                      selfcheck.traced_outputs(second.graph, second.values),
                                      _aligned_values(captured, second)))
            notes = list(dict.fromkeys(notes + second.value_dependent))
    finally:
        for module in training:
            module.training = True
    return captured, runs, notes


def _checked_trace(model, args, given: list, **options):
    """trace(); a module rebuilt from TorchScript checks the capture against its original
    (frontends.torchscript.rebuilt.Replay.checked_capture)."""
    checked = getattr(model, "checked_capture", None)
    if checked is None:
        return trace(model, args, **options)
    return checked(lambda: trace(model, args, **options), given, _compared_outputs)


def _compared_outputs(captured) -> list:
    """The traced outputs, None for those that depend on a random operator."""
    random = selfcheck.random_outputs(captured.graph)
    return [None if i in random else v for i, v in enumerate(selfcheck.traced_outputs(captured.graph, captured.values))]


def _aligned_values(first, second) -> dict[Operand, object]:
    """The second trace's values keyed by the first trace's operands (merge_shapes checked
    that both traces recorded the same operators and operands, in the same order)."""
    pairs = [(a, b) for a, b in zip(first.graph.operands, second.graph.operands) if b in second.values]
    if isinstance(second.values, SpilledValues):  # the same file, keyed anew: nothing read back
        return second.values.rekeyed(pairs)
    return {a: second.values[b] for a, b in pairs}


@one_line_errors
def capture(model: nn.Module, inputs=None, *, inputs2=None, input_shapes=None, input_shapes2=None,
            input_types=None, optlevel: int = 2, moduleop=(), customop=(), device: str = "cpu",
            allow_value_dependent: bool = False) -> Graph:
    """The graph of `model(*inputs)` after the passes of `optlevel`; writes no files.
    A value-dependent conversion in the model (`if x.sum() > 0:`, `int(x.max())`) is refused
    unless `allow_value_dependent` (then a ValueDependentWarning says where)."""
    return _capture(model, inputs, inputs2, input_shapes, input_shapes2, input_types, optlevel, moduleop,
                    customop, device, allow_value_dependent).graph


def _is_program(value) -> bool:
    """A torch.export ExportedProgram (frontends.export, and the sympy it needs, load only for one)."""
    return isinstance(value, torch.export.ExportedProgram)


def _from_program(program, inputs, inputs2, input_shapes, input_shapes2, input_types):
    """(rebuilt module, inputs, inputs2) for an ExportedProgram: the example inputs it was
    exported with unless others are given, and a second set at other sizes where it has
    dynamic dimensions (`torch.export.Dim`)."""
    from .frontends import export as exported

    if inputs is None and input_shapes is None:
        inputs = exported.example_inputs(program)
        if not inputs:
            raise ConversionError("the exported program holds no example inputs: give inputshape")
    args = _resolve_inputs(inputs, input_shapes, input_types, "cpu")
    exported.check_sizes(program, _tensors(args), "example")
    if inputs2 is None and input_shapes2 is not None:
        inputs2 = make_inputs(input_shapes2, input_types)
    if inputs2 is not None:
        exported.check_sizes(program, _tensors(_resolve_inputs(inputs2, None, None, "cpu")), "inputshape2")
    else:
        inputs2 = exported.second_inputs(program, args)
    return exported.rebuild(program, args), args, inputs2


def _optimise_bodies(captured, optlevel: int) -> None:
    """Moduleop bodies get the passes that keep their weights the operator's attributes."""
    for _, body in captured.bodies:
        _optimise_bodies(body, optlevel)
        run_passes(body.graph, optlevel, PassContext(body.values), keep_weights=True)


def default_paths(out_dir, name: str, overrides: dict) -> dict[str, Path]:
    return {key: Path(overrides[key]) if overrides.get(key) else Path(out_dir) / f"{name}{_SUFFIXES[key]}"
            for key in ARTEFACTS}


def _emitters(graph, staged, final, fp16, input_shapes):
    """(emitter, artefacts, write) per writer, in upstream's order; each writes its files at
    their `staged` paths."""
    def ncnn():
        write_ncnn(graph, staged["ncnnparam"], staged["ncnnbin"], staged["ncnnpy"], fp16=fp16,
                   input_shapes=input_shapes)
        _point_at_final(staged["ncnnpy"], [(staged[k], final[k]) for k in ("ncnnparam", "ncnnbin")])

    def onnx():
        optional.require("onnx", f"writing {final['pnnxonnx'].name}")
        from .emit.onnx import write_onnx

        write_onnx(graph, staged["pnnxonnx"], fp16=fp16)

    return (
        ("pnnx", ("pnnxparam", "pnnxbin"), lambda: pnnx_param.save(graph, staged["pnnxparam"], staged["pnnxbin"])),
        ("python", ("pnnxpy",), lambda: write_python(graph, staged["pnnxpy"], _reference(staged, final),
                                                     input_shapes=input_shapes)),
        ("onnx", ("pnnxonnx",), onnx),
        ("ncnn", ("ncnnparam", "ncnnbin", "ncnnpy"), ncnn),
    )


def _reference(staged, final) -> Path:
    """The pnnx.bin path to give the `_pnnx.py` writer so that the path it writes (relative
    to the file's folder) is the one from the final `_pnnx.py` to the final pnnx.bin."""
    return staged["pnnxpy"].parent / os.path.relpath(final["pnnxbin"], final["pnnxpy"].parent)


def _point_at_final(script: Path, moves: list[tuple[Path, Path]]) -> None:
    """`_ncnn.py` refers to its param and bin relative to itself when they share its folder
    (then they share its staging folder too) and by absolute path otherwise: such a path
    names the staging folder and becomes the final one."""
    if not script.exists():
        return
    text = script.read_text(encoding="utf-8")
    fixed = text
    for staged, final in moves:
        if staged.parent != script.parent:
            fixed = fixed.replace(repr(str(staged.resolve())), repr(str(final.resolve())))
    if fixed != text:
        script.write_text(fixed, encoding="utf-8")


def _example_shapes(graph: Graph, args) -> list[list[int]] | None:
    """test_inference() feeds the first example shapes, as upstream feeds `inputshape`; when
    the example tensors are not the graph inputs one for one (tensors nested in lists, non-tensor
    arguments), None: the emitters then use the pnnx.Input operand shapes."""
    inputs = [op.outputs[0] for op in graph.ops if op.type == "pnnx.Input"]
    tensors = [t for t in args if isinstance(t, torch.Tensor)]
    if len(tensors) != len(args) or len(tensors) != len(inputs):
        return None
    return [list(t.shape) for t in tensors]


@one_line_errors
def export(model: nn.Module, inputs=None, out_dir=".", name: str = "model", *, inputs2=None,
           input_shapes=None, input_shapes2=None, input_types=None, optlevel: int = 2, moduleop=(),
           customop=(), fp16: bool = True, device: str = "cpu", allow_value_dependent: bool = False,
           self_check: bool = True, pnnxparam=None, pnnxbin=None, pnnxpy=None, pnnxonnx=None,
           ncnnparam=None, ncnnbin=None, ncnnpy=None) -> ExportResult:
    """Convert `model` and write NAME.pnnx.param, NAME.pnnx.bin, NAME_pnnx.py, NAME.pnnx.onnx,
    NAME.ncnn.param, NAME.ncnn.bin and NAME_ncnn.py into `out_dir` (each path overridable).
    An emitter that cannot lower an operator is recorded in `.unsupported`; the others still write.

    Every file is written beside its target under a staging name and moved into place once all
    are written and the self-check passed; on any error no file is left. `self_check` runs the
    regenerated `_pnnx.py` on the example inputs (and `inputs2`) against the original model
    (selfcheck.py); a mismatch is a ConversionError naming the first differing operator.
    `allow_value_dependent`: see `capture`.

    `model` may be a torch.export ExportedProgram: its example inputs and dynamic dimensions
    then stand in for `inputs` and `inputs2` unless given."""
    if not isinstance(name, str) or not name:
        raise ConversionError(f"name must be a non-empty file name stem, not {name!r}")
    if _is_program(model):
        model, inputs, inputs2 = _from_program(model, inputs, inputs2, input_shapes, input_shapes2, input_types)
        input_shapes = input_shapes2 = None
    args = _resolve_inputs(inputs, input_shapes, input_types, device)
    captured = _capture(model, args, inputs2, input_shapes, input_shapes2, input_types, optlevel, moduleop,
                        customop, device, allow_value_dependent)
    graph = captured.graph
    overrides = dict(pnnxparam=pnnxparam, pnnxbin=pnnxbin, pnnxpy=pnnxpy, pnnxonnx=pnnxonnx,
                     ncnnparam=ncnnparam, ncnnbin=ncnnbin, ncnnpy=ncnnpy)
    paths = {k: Path(os.path.abspath(p)) for k, p in default_paths(out_dir, name, overrides).items()}
    _refuse_shared_paths(paths)
    shapes = _example_shapes(graph, args)
    result = ExportResult(graph, value_dependent=captured.value_dependent)
    with Staging() as stage:
        staged = {key: stage.path(path) for key, path in paths.items()}
        for emitter, artefacts, write in _emitters(graph, staged, paths, fp16, shapes):
            try:
                write()
            except (UnsupportedOperator, MissingPackage) as err:
                result.unsupported[emitter] = str(err)
                continue
            except OSError as err:
                raise ConversionError(f"{stage.final_of(err.filename) or err.filename or emitter}: cannot "
                                      f"write: {err.strerror or err}") from None
            except ValueError as err:  # a value the file format cannot hold (pnnx_param.dumps)
                if emitter != "pnnx":
                    raise
                raise ConversionError(f"pnnx.param cannot hold {err}") from None
            result.paths.update({a: paths[a] for a in artefacts if staged[a].exists()})
        if "pnnxonnx" in result.paths:  # its weights go to a data file beside it past 2 GiB
            if stage.path(onnx_data_path(paths["pnnxonnx"])).exists():
                result.paths["pnnxonnxdata"] = onnx_data_path(paths["pnnxonnx"])
        if self_check:
            result.self_check = _self_check(graph, staged, captured, device, result.unsupported)
        result.warnings.extend(selfcheck.all_nan_outputs(captured.runs))
        result.removed = _stale_files(paths, result.paths)
        for path in result.removed:
            stage.remove_at_commit(path)
        stage.commit()
    return result


def _refuse_shared_paths(paths: dict[str, Path]) -> None:
    """Two artefacts at one path: the later would silently replace the earlier."""
    seen: dict[str, str] = {}
    for key, path in paths.items():
        real = os.path.realpath(path)
        if real in seen:
            raise ConversionError(f"{path}: {seen[real]}= and {key}= name the same file; give each artefact "
                                  "its own path")
        seen[real] = key


def _stale_files(paths: dict[str, Path], written: dict[str, Path]) -> list[Path]:
    """The files at the paths of artefacts this run does not write (an emitter declined the
    model): left there from an earlier run, they would describe another model ("all or none")."""
    candidates = [path for key, path in paths.items() if key not in written]
    if "pnnxonnxdata" not in written:
        candidates.append(onnx_data_path(paths["pnnxonnx"]))
    return [path for path in candidates if path.is_file() or path.is_symlink()]


def _self_check(graph: Graph, staged: dict[str, Path], captured: _Captured, device: str, unsupported: dict) -> str:
    if "python" in unsupported or not staged["pnnxpy"].exists():
        return f"not run: no _pnnx.py ({unsupported.get('python', 'not written')})"
    script = staged["pnnxpy"]
    if staged["pnnxbin"].parent != script.parent:  # it refers to where pnnx.bin will be: a twin that
        script = staged["pnnxbin"].parent / ".selfcheck_pnnx.py"  # refers to where it is now
        write_python(graph, script, staged["pnnxbin"])
    return selfcheck.check(graph, script, captured.runs, _device(device), captured.random)


# --- ONNX files ----------------------------------------------------------------------------
@one_line_errors
def capture_onnx(onnx_model, *, input_shapes=None, input_shapes2=None, inputs=None, constant_inputs=None,
                 optlevel: int = 2) -> Graph:
    """The graph of an ONNX model (a path or a ModelProto); see `export_onnx`."""
    onnx_frontend = _onnx_frontend(onnx_model)
    loaded = onnx_frontend.load(onnx_model, input_shapes, input_shapes2, inputs=inputs,
                                constant_inputs=constant_inputs)
    graph, _ = _with_second_shape(loaded, lambda inputs2: capture(loaded.module, loaded.inputs, inputs2=inputs2,
                                                                  optlevel=optlevel))
    return graph


@one_line_errors
def export_onnx(onnx_model, out_dir=".", name="model", *, input_shapes=None, input_shapes2=None, inputs=None,
                input_types=None, constant_inputs=None, optlevel: int = 2, fp16: bool = True, device: str = "cpu",
                self_check: bool = True, allow_value_dependent: bool = False, **paths) -> ExportResult:
    """Convert an ONNX model (a path, its external data beside it, or a ModelProto) and write
    the seven artefacts as `export` does. `input_shapes` defaults to the graph's own shapes
    (`inputs`: example tensors instead); symbolic dims are traced at `input_shapes2` (default:
    doubled) and come out dynamic. `constant_inputs` ({name: value}) makes graph inputs
    constants, for graphs that read a shape or an axis from an input. `self_check` and
    `allow_value_dependent`: as `export`'s."""
    onnx_frontend = _onnx_frontend(onnx_model)
    loaded = onnx_frontend.load(onnx_model, input_shapes, input_shapes2, inputs=inputs,
                                input_types=input_types, constant_inputs=constant_inputs)
    result, note = _with_second_shape(loaded, lambda inputs2: export(
        loaded.module, loaded.inputs, out_dir, name, inputs2=inputs2, optlevel=optlevel, fp16=fp16,
        device=device, self_check=self_check, allow_value_dependent=allow_value_dependent, **paths))
    if note:
        result.notes.append(note)
    return result


def _onnx_frontend(onnx_model):
    what = onnx_model if isinstance(onnx_model, (str, os.PathLike)) else "an ONNX model"
    optional.require("onnx", f"reading {what}")
    from .frontends import onnx as onnx_frontend

    return onnx_frontend


def _with_second_shape(loaded, run):
    """`run(inputs2)`. The one fallback: when the second shape was our own choice (doubled
    symbolic dims) and the model does not run, or does not trace the same, at it (the exporter
    fixed those dims as constants), the dims stay fixed and a note says so. Any other error,
    and any error at a second shape the user gave, is the user's error as it is."""
    if loaded.inputs2 is None:
        return run(None), ""
    try:
        return run(loaded.inputs2), ""
    except ConversionError:
        why = _second_shape_fails(loaded, loaded.inputs2) if loaded.second_chosen else None
        if why is None:
            raise
    shapes = ", ".join(str(list(t.shape)) for t in loaded.inputs)
    some = _dims_that_follow(loaded)
    if some is not None:
        kept = ", ".join(str(list(t.shape)) for t in some)
        return run(some), (f"{loaded.what}: only the symbolic dims that convert doubled on their own follow the "
                           f"input (second shape {kept}; the model does not convert with every one doubled: "
                           f"{why}); give inputshape2 to choose another")
    return run(None), (f"{loaded.what}: the symbolic dims stay fixed at {shapes} (the model does not "
                       f"convert at the doubled shape: {why}); give inputshape2 to choose another")


def _dims_that_follow(loaded) -> tuple | None:
    """The second inputs with only the symbolic dims doubled whose doubling alone (and then all
    of them together) runs and traces alike, e.g. a sequence length but not the channels a
    convolution's weight fixes; None when no such dim is left."""
    first, second = loaded.inputs, loaded.inputs2
    doubled = [(i, d) for i, (a, b) in enumerate(zip(first, second)) for d in range(a.dim()) if a.shape[d] != b.shape[d]]
    keep = [(i, d) for i, d in doubled if _second_shape_fails(loaded, _doubling(first, second, {(i, d)})) is None]
    if not keep or len(keep) == len(doubled):
        return None
    some = _doubling(first, second, set(keep))
    return some if _second_shape_fails(loaded, some) is None else None


def _doubling(first, second, dims: set) -> tuple:
    """The first inputs with dims (input, dim) in `dims` at their second size (cut from the
    second inputs, so the values stay in their ranges)."""
    return tuple(b[tuple(slice(0, b.shape[d] if (i, d) in dims else a.shape[d]) for d in range(a.dim()))].clone()
                 for i, (a, b) in enumerate(zip(first, second)))


def _second_shape_fails(loaded, inputs2) -> str | None:
    """Why the rebuilt model does not run or trace alike at `inputs2`, or None when it does
    (or does not even trace at its first inputs: then the second shape is not the reason)."""
    try:
        first = trace(loaded.module, loaded.inputs)
    except Exception:  # noqa: BLE001 - the caller re-raises its own error
        return None
    try:
        merge_shapes(first, trace(loaded.module, inputs2))
    except Exception as err:  # noqa: BLE001 - any failure at the second shape is the reason
        return (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
    return None
