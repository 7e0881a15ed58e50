"""The Python API: `export(model, inputs, ...)` writes the PNNX artefacts, `capture(...)`
returns the optimised graph without writing anything."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn

from .frontends.python import trace
from .frontends.python.dynamic import merge_shapes
from .emit.ncnn import write_ncnn
from .emit.onnx import write_onnx
from .emit.python_code import write_python
from .errors import ConversionError, UnsupportedOperator
from .formats import pnnx_param
from .ir import DTYPES, Graph
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


def make_inputs(input_shapes, input_types=None, device: str = "cpu") -> tuple:
    """Example inputs for shapes like [[1,3,224,224]]: seeded rand (randint for integer types)."""
    types = list(input_types or [])
    generator = torch.Generator().manual_seed(0)
    tensors = []
    for i, shape in enumerate(input_shapes):
        suffix = types[i] if i < len(types) and types[i] else "f32"
        if suffix not in DTYPES:
            raise ConversionError(f"unknown input type {suffix!r} (expected one of {', '.join(DTYPES)})")
        dtype = getattr(torch, DTYPES[suffix].numpy)
        if DTYPES[suffix].is_integer:
            t = torch.randint(0, 10, tuple(shape), generator=generator).to(dtype)
        else:
            t = torch.rand(tuple(shape), generator=generator).to(dtype)
        tensors.append(t.to(_device(device)))
    return tuple(tensors)


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


def capture(model: nn.Module, inputs=None, *, inputs2=None, input_shapes=None, input_shapes2=None,
            input_types=None, optlevel: int = 2, moduleop=(), customop=(), device: str = "cpu") -> Graph:
    """The graph of `model(*inputs)` after the passes of `optlevel`; writes no files."""
    if optlevel not in (0, 1, 2):
        raise ConversionError(f"optlevel must be 0, 1 or 2, not {optlevel!r}")
    load_custom_ops(customop)
    args = _resolve_inputs(inputs, input_shapes, input_types, device)
    training = isinstance(model, nn.Module) and model.training
    if isinstance(model, nn.Module):
        model.to(_device(device)).eval()  # converted for inference, as upstream expects
    try:
        captured = trace(model, args, moduleop=moduleop)
        if inputs2 is not None or input_shapes2 is not None:
            args2 = _resolve_inputs(inputs2, input_shapes2, input_types, device)
            captured = merge_shapes(captured, trace(model, args2, moduleop=moduleop))
    finally:
        if training:
            model.train()
    _optimise_bodies(captured, optlevel)
    return run_passes(captured.graph, optlevel, PassContext(captured.values))


def _optimise_bodies(captured, optlevel: int) -> None:
    """Moduleop bodies get the passes that keep their weights the operator's attributes."""
    for _, body in captured.bodies:
        _optimise_bodies(body, optlevel)
        run_passes(body.graph, optlevel, PassContext(body.values), keep_weights=True)


def default_paths(out_dir, name: str, overrides: dict) -> dict[str, Path]:
    return {key: Path(overrides[key]) if overrides.get(key) else Path(out_dir) / f"{name}{_SUFFIXES[key]}"
            for key in ARTEFACTS}


def _emitters(graph, paths, fp16, input_shapes):
    """(emitter, artefacts, write) per writer, in upstream's order."""
    return (
        ("pnnx", ("pnnxparam", "pnnxbin"), lambda: pnnx_param.save(graph, paths["pnnxparam"], paths["pnnxbin"])),
        ("python", ("pnnxpy",),
         lambda: write_python(graph, paths["pnnxpy"], paths["pnnxbin"], input_shapes=input_shapes)),
        ("onnx", ("pnnxonnx",), lambda: write_onnx(graph, paths["pnnxonnx"], fp16=fp16)),
        ("ncnn", ("ncnnparam", "ncnnbin", "ncnnpy"),
         lambda: write_ncnn(graph, paths["ncnnparam"], paths["ncnnbin"], paths["ncnnpy"],
                            fp16=fp16, input_shapes=input_shapes)),
    )


def _example_shapes(graph: Graph, args) -> list[list[int]] | None:
    """test_inference() feeds the first example shapes, as upstream feeds `inputshape`; when
    the example tensors are not the graph inputs one for one (tensors nested in lists, non-tensor
    arguments), None: the emitters then use the pnnx.Input operand shapes."""
    inputs = [op.outputs[0] for op in graph.ops if op.type == "pnnx.Input"]
    tensors = [t for t in args if isinstance(t, torch.Tensor)]
    if len(tensors) != len(args) or len(tensors) != len(inputs):
        return None
    return [list(t.shape) for t in tensors]


def export(model: nn.Module, inputs=None, out_dir=".", name: str = "model", *, inputs2=None,
           input_shapes=None, input_shapes2=None, input_types=None, optlevel: int = 2, moduleop=(),
           customop=(), fp16: bool = True, device: str = "cpu", pnnxparam=None, pnnxbin=None,
           pnnxpy=None, pnnxonnx=None, ncnnparam=None, ncnnbin=None, ncnnpy=None) -> ExportResult:
    """Convert `model` and write NAME.pnnx.param, NAME.pnnx.bin, NAME_pnnx.py, NAME.pnnx.onnx,
    NAME.ncnn.param, NAME.ncnn.bin and NAME_ncnn.py into `out_dir` (each path overridable).
    An emitter that cannot lower an operator is recorded in `.unsupported`; the others still write."""
    args = _resolve_inputs(inputs, input_shapes, input_types, device)
    graph = capture(model, args, inputs2=inputs2, input_shapes2=input_shapes2, input_types=input_types,
                    optlevel=optlevel, moduleop=moduleop, customop=customop, device=device)
    overrides = dict(pnnxparam=pnnxparam, pnnxbin=pnnxbin, pnnxpy=pnnxpy, pnnxonnx=pnnxonnx,
                     ncnnparam=ncnnparam, ncnnbin=ncnnbin, ncnnpy=ncnnpy)
    paths = default_paths(out_dir, name, overrides)
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    shapes = _example_shapes(graph, args)
    result = ExportResult(graph)
    for emitter, artefacts, write in _emitters(graph, paths, fp16, shapes):
        try:
            write()
        except UnsupportedOperator as err:
            result.unsupported[emitter] = str(err)
            continue
        result.paths.update({a: paths[a] for a in artefacts if paths[a].exists()})
    return result


# --- ONNX files ----------------------------------------------------------------------------
def capture_onnx(onnx_model, *, input_shapes=None, input_shapes2=None, inputs=None, constant_inputs=None,
                 optlevel: int = 2) -> Graph:
    """The graph of an ONNX model (a path or a ModelProto); see `export_onnx`."""
    from .frontends import onnx as onnx_frontend

    loaded = onnx_frontend.load(onnx_model, input_shapes, input_shapes2, inputs=inputs,
                                constant_inputs=constant_inputs)
    graph, _ = _with_second_shape(loaded, lambda inputs2: capture(loaded.module, loaded.inputs, inputs2=inputs2,
                                                                  optlevel=optlevel))
    return graph


def export_onnx(onnx_model, out_dir=".", name="model", *, input_shapes=None, input_shapes2=None, inputs=None,
                input_types=None, constant_inputs=None, optlevel: int = 2, fp16: bool = True, device: str = "cpu",
                **paths) -> ExportResult:
    """Convert an ONNX model (a path, its external data beside it, or a ModelProto) and write
    the seven artefacts as `export` does. `input_shapes` defaults to the graph's own shapes
    (`inputs`: example tensors instead); symbolic dims are traced at `input_shapes2` (default:
    doubled) and come out dynamic. `constant_inputs` ({name: value}) makes graph inputs
    constants, for graphs that read a shape or an axis from an input."""
    from .frontends import onnx as onnx_frontend

    loaded = onnx_frontend.load(onnx_model, input_shapes, input_shapes2, inputs=inputs,
                                input_types=input_types, constant_inputs=constant_inputs)
    result, note = _with_second_shape(loaded, lambda inputs2: export(
        loaded.module, loaded.inputs, out_dir, name, inputs2=inputs2, optlevel=optlevel, fp16=fp16,
        device=device, **paths))
    if note:
        result.notes.append(note)
    return result


def _with_second_shape(loaded, run):
    """`run(inputs2)`; when the second shape was our own choice and the model does not run
    or trace the same at it (shapes the exporter fixed as constants), the dims stay fixed."""
    if loaded.inputs2 is None:
        return run(None), ""
    try:
        return run(loaded.inputs2), ""
    except ConversionError as err:
        if not loaded.second_chosen:
            raise
        shapes = ", ".join(str(list(t.shape)) for t in loaded.inputs)
        return run(None), (f"{loaded.what}: the symbolic dims stay fixed at {shapes}: at the doubled "
                           f"shape the model {str(err).split(': ', 1)[-1]}")
