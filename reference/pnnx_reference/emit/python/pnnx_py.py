"""The `NAME_pnnx.py` generator: runnable PyTorch code regenerated from a PNNX graph.

The layout follows upstream's generator (header, imports, `Model` rebuilding every nn module
with its constructor arguments and loading weights from pnnx.bin, one `forward` statement per
operator, `export_torchscript`, `export_onnx`, a seeded `test_inference`). Differences, on
purpose:
* pnnx.bin is opened relative to the generated file's own directory (upstream writes the path
  as given, which only works from the directory pnnx ran in);
* nothing read from the graph becomes code unchecked: names are sanitised identifiers,
  strings are repr()-quoted, operator types must resolve to an allowed PyTorch API
  (`emit.python.api_paths`), so a hostile param file raises `InvalidGraph` instead;
* floats in calls are written exactly (repr) rather than upstream's lossy `%g`;
* torchvision is imported only when an operator uses it (it is slow to import), torchaudio
  never (no operator type refers to it);
* `export_onnx` passes `dynamo=False`: newer torch defaults to the dynamo exporter, which
  needs onnxscript;
* a pnnx.Attribute's tensor is the member named after the operator (`self.w`, upstream
  `self.w_data`): capture names a weight after its attribute path, so converting the
  generated file again gives the same pnnx.param;
* a dotted operator name keeps its path through nn.ModuleDict containers
  (`self.m.layers['0']`, upstream `self.m_layers_0`; see members.py): the generated model has
  the original's module paths and state_dict keys, and converts again to the same names;
* a constant the converter computed (`pnnx_fold_*`) is a parameter that requires no grad
  (upstream: one that does), as it was a plain value in the original forward;
* a module operator (moduleop=) whose body was captured becomes a class of its own, written
  from that body before `Model` and reading its weights from pnnx.bin under the operator's
  name (upstream calls the user's class without importing it). One read from pnnx.param has
  no body and stays unsupported.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from pnnx_reference.emit.python.context import Context
from pnnx_reference.emit.python.forward import render_forward_op
from pnnx_reference.emit.python.init import init_body
from pnnx_reference.emit.python.names import Namer, sanitize
from pnnx_reference.errors import ConversionError, FormatError, InvalidGraph, PnnxError
from pnnx_reference.files import new_file_mode
from pnnx_reference.ir import DTYPES, Graph, Operand, Operator
from pnnx_reference.stat import model_stat

__all__ = ["generate_python", "write_python", "regenerate", "main_regenerate"]

_IMPORTS = """import os
import numpy as np
import tempfile, zipfile
import torch
import torch.nn as nn
import torch.nn.functional as F
{extra_imports}
# pnnx.bin and the export files live next to this file, whatever the current directory is
_HERE = os.path.dirname(os.path.abspath(__file__))
"""

_HELPERS = """    def load_pnnx_bin_as_parameter(self, archive, key, shape, dtype, requires_grad=True):
        return nn.Parameter(self.load_pnnx_bin_as_tensor(archive, key, shape, dtype), requires_grad)

    def load_pnnx_bin_as_tensor(self, archive, key, shape, dtype):
        # read into the tensor's own memory a few MB at a time: no second copy of a large weight
        data = bytearray(archive.getinfo(key).file_size)
        with archive.open(key) as f:
            view, done = memoryview(data), 0
            while done < len(data):
                chunk = f.read(min(16 << 20, len(data) - done))
                if not chunk:
                    raise EOFError(f'{key}: truncated in pnnx.bin')
                view[done:done + len(chunk)] = chunk
                done += len(chunk)
        torch_only = {'bfloat16': torch.bfloat16, 'complex32': torch.complex32}
        if dtype in torch_only:
            if not data:
                return torch.empty(shape, dtype=torch_only[dtype])
            return torch.frombuffer(data, dtype=torch_only[dtype]).reshape(shape)
        return torch.from_numpy(np.frombuffer(data, dtype=dtype).reshape(shape))
"""


def _graph_inputs(graph: Graph) -> list[Operand]:
    return [o for op in graph.inputs() for o in op.outputs]


def _graph_outputs(graph: Graph) -> list[Operand]:
    return [o for op in graph.outputs() for o in op.inputs]


def _input_specs(graph: Graph, input_shapes) -> list[tuple[list[int] | None, str | None]]:
    """(shape, dtype suffix) per input: `input_shapes` items are shapes or (shape, dtype)."""
    operands = _graph_inputs(graph)
    specs = [(o.shape, o.dtype) for o in operands]
    if input_shapes is None:
        return specs
    if len(input_shapes) != len(operands):
        raise PnnxError(f"{len(input_shapes)} input shapes given for {len(operands)} inputs")
    given = []
    for (_, dtype), item in zip(specs, input_shapes):
        if len(item) == 2 and isinstance(item[1], str):
            given.append((list(item[0]), item[1]))
        else:
            given.append((list(item), dtype))
    return given


def _random_input(var: str, shape, dtype: str | None) -> str:
    dims = [128 if d == -1 else int(d) for d in (shape or [])]
    info = DTYPES.get(dtype or "f32", DTYPES["f32"])
    if info.is_integer:
        high = 2 if info.suffix == "bool" else 10  # upstream's 10 is out of range for bool
        size = "(" + "".join(f"{d}," for d in dims) + ")"
        return f"    {var} = torch.randint({high}, {size}, dtype={info.torch})"
    size = ", ".join(str(d) for d in dims) if dims else "()"
    return f"    {var} = torch.rand({size}, dtype={info.torch})"


def _header(graph: Graph, specs) -> list[str]:
    """Upstream's `# pnnx model stat` block (pnnx_reference.stat): the shapes test_inference()
    feeds, `?` where the graph's input dim is dynamic, then the counts."""
    def one(shape, dtype, operand):
        graph_dims = (operand.shape if operand is not None else None) or []
        dims = ",".join("?" if d == -1 or (i < len(graph_dims) and graph_dims[i] == -1) else str(int(d))
                        for i, d in enumerate(shape or []))
        return f"[{dims}]{dtype if dtype in DTYPES else ''}"

    inputs = _graph_inputs(graph)
    lines = model_stat(graph).lines()
    lines[0] = "model inputshape = " + ",".join(
        one(s, d, inputs[i] if i < len(inputs) else None) for i, (s, d) in enumerate(specs))
    return ["# pnnx model stat", *(f"# {line}" for line in lines), ""]


def _class_body(graph: Graph, ctx: Context, init: list[str], archive: tuple[list[str], list[str]]) -> list[str]:
    """The lines of a generated nn.Module class after its `class` line: `init` starts
    `__init__`, `archive` (open lines, close lines) surround the lines reading pnnx.bin."""
    constructors, weights = init_body(graph, ctx)
    lines = init + [f"        {line}" for line in constructors]
    if weights:
        lines += [""] + [f"        {line}" for line in archive[0] + weights + archive[1]]
    lines += ["", _HELPERS]
    args = "".join(f", {ctx.var(o)}" for o in _graph_inputs(graph))
    lines += [f"    def forward(self{args}):"]
    for op in graph.ops:
        lines += [f"        {line}" for line in render_forward_op(ctx, op)]
    outputs = [ctx.var(o) for o in _graph_outputs(graph)]
    lines += [f"        return {', '.join(outputs)}" if outputs else "        return None", ""]
    return lines


def _model_class(graph: Graph, ctx: Context, bin_rel: str) -> list[str]:
    init = ["    def __init__(self):", "        super(Model, self).__init__()", ""]
    archive = [f"archive = zipfile.ZipFile(os.path.join(_HERE, {bin_rel!r}), 'r')"], ["archive.close()"]
    return ["class Model(nn.Module):"] + _class_body(graph, ctx, init, archive)


# module-level names of the generated file that a moduleop class must not shadow
_FILE_NAMES = ("Model", "os", "np", "tempfile", "zipfile", "torch", "nn", "F", "torchvision", "_HERE",
               "export_torchscript", "export_onnx", "test_inference")


class _BodyClasses:
    """One class per distinct moduleop body, named after the module's class (`Focus`,
    `Focus_1` for a second instance built with other arguments); the same body, used twice,
    is one class."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names = Namer("")
        self._names.taken.update(_FILE_NAMES)

    def define(self, graph: Graph, ctx: Context) -> None:
        """Write the class of every moduleop body in `graph` (nested ones first)."""
        for op in graph.ops:
            if op.subgraph is not None:
                ctx.classes[id(op)] = self._define_one(op)

    def _define_one(self, op: Operator) -> str:
        ctx = Context(op.subgraph, owner=op)
        self.define(op.subgraph, ctx)
        init = ["    def __init__(self, archive, prefix):", "        super().__init__()", ""]
        body = _class_body(op.subgraph, ctx, init, ([], []))
        key = "\n".join(body)
        known = key in self._names.by_key
        name = self._names(key, sanitize(op.type.rsplit(".", 1)[-1]))
        if not known:
            self.lines += [f"class {name}(nn.Module):", *body, ""]
        return name


def _all_ops(graph: Graph):
    for op in graph.ops:
        yield op
        if op.subgraph is not None:
            yield from _all_ops(op.subgraph)


def _setup(input_vars, specs) -> list[str]:
    lines = ["    net = Model()", "    net.float()", "    net.eval()", "", "    torch.manual_seed(0)"]
    lines += [_random_input(v, s, d) for v, (s, d) in zip(input_vars, specs)]
    return lines + [""]


def _entry_points(graph: Graph, ctx: Context, specs, py_name: str) -> list[str]:
    input_vars = [ctx.var(o) for o in _graph_inputs(graph)]
    inputs = "(" + ", ".join(input_vars) + ("," if len(input_vars) == 1 else "") + ")"
    in_names = [f"in{i}" for i in range(len(input_vars))]
    out_names = [f"out{i}" for i in range(len(_graph_outputs(graph)))]
    setup = _setup(input_vars, specs)
    return [
        "def export_torchscript():", *setup,
        f"    mod = torch.jit.trace(net, {inputs})",
        f"    mod.save(os.path.join(_HERE, {py_name + '.pt'!r}))", "",
        "def export_onnx():", *setup,
        f"    torch.onnx.export(net, {inputs}, os.path.join(_HERE, {py_name + '.onnx'!r}), export_params=True, "
        "operator_export_type=torch.onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK, opset_version=13, dynamo=False, "
        f"input_names={in_names!r}, output_names={out_names!r})", "",
        "@torch.no_grad()", "def test_inference():", *setup,
        f"    return net({', '.join(input_vars)})", "",
        'if __name__ == "__main__":', "    print(test_inference())", "",
    ]


def generate_python(graph: Graph, py_path, bin_path, input_shapes=None) -> str:
    """The source of `NAME_pnnx.py` for `graph` (raises InvalidGraph for unwritable graphs)."""
    py_path, bin_path = Path(py_path), Path(bin_path)
    ctx = Context(graph)
    specs = _input_specs(graph, input_shapes)
    try:
        bin_rel = os.path.relpath(os.path.abspath(bin_path), os.path.dirname(os.path.abspath(py_path)))
    except ValueError:  # another drive on Windows
        bin_rel = os.path.abspath(bin_path)
    uses_torchvision = any(op.type.startswith("torchvision.") for op in _all_ops(graph))
    imports = _IMPORTS.format(extra_imports="import torchvision\n" if uses_torchvision else "")
    bodies = _BodyClasses()
    bodies.define(graph, ctx)
    lines = _header(graph, specs) + [imports] + bodies.lines + _model_class(graph, ctx, bin_rel)
    lines += _entry_points(graph, ctx, specs, py_path.name)
    source = "\n".join(lines)
    try:
        compile(source, str(py_path), "exec", dont_inherit=True)
    except SyntaxError as err:  # a generator bug, never user input: say so plainly
        raise InvalidGraph(f"internal error: generated Python does not parse ({err.msg}, line {err.lineno})") from None
    return source


def write_python(graph: Graph, py_path, bin_path, input_shapes=None) -> None:
    """Write `py_path` atomically (temp file in the same folder, then rename)."""
    source = generate_python(graph, py_path, bin_path, input_shapes)
    folder = os.path.dirname(os.path.abspath(py_path))
    fd, tmp = tempfile.mkstemp(prefix=".pnnx_py_", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
        os.chmod(tmp, new_file_mode())  # mkstemp's 0600 -> what any new file of the user gets
        os.replace(tmp, py_path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def default_py_path(param_path) -> Path:
    """`dir/NAME.pnnx.param` -> `dir/NAME_pnnx.py`."""
    p = Path(param_path)
    base = p.name[: -len(".pnnx.param")] if p.name.endswith(".pnnx.param") else p.stem
    return p.with_name(base + "_pnnx.py")


def regenerate(param_path, py_path=None, bin_path=None) -> Path:
    """pnnx.param (+ pnnx.bin) -> Graph -> `_pnnx.py`, without the original model."""
    from pnnx_reference.formats import pnnx_param

    bin_path = Path(bin_path) if bin_path is not None else pnnx_param.default_bin_path(param_path)
    graph = pnnx_param.load(param_path, bin_path)
    py_path = Path(py_path) if py_path is not None else default_py_path(param_path)
    try:
        write_python(graph, py_path, bin_path)
    except OSError as err:
        raise ConversionError(f"{py_path}: cannot write: {err.strerror or err}") from None
    return py_path


_USAGE = "usage: pnnxref regenerate FILE.pnnx.param [pnnxbin=FILE.pnnx.bin] [pnnxpy=FILE_pnnx.py]"


def main_regenerate(argv: list[str]) -> int:
    """`pnnxref regenerate FILE.pnnx.param [pnnxbin=...] [pnnxpy=...]`; returns the exit code."""
    param = None
    try:
        param, options = _parse_regenerate_args(argv)
        _refuse_ncnn_param(param)
        out = regenerate(param, options.get("pnnxpy"), options.get("pnnxbin"))
    except FormatError as err:  # already `file:line: message`
        print(str(err), file=sys.stderr)
        return 1
    except PnnxError as err:  # what the file holds cannot become Python: name the file
        print(f"error: {param}: {err}" if param and not str(err).startswith(str(param)) else f"error: {err}",
              file=sys.stderr)
        return 1
    except OSError as err:
        print(f"error: {err.filename or ''}: {err.strerror}", file=sys.stderr)
        return 1
    print(out)
    return 0


def _refuse_ncnn_param(param: str) -> None:
    """An ncnn.param shares pnnx.param's magic number; its first layer `Input` (pnnx.param's
    operators are all `pnnx.`-prefixed or torch names with a dot) or its suffix tells it apart."""
    from pnnx_reference.errors import UsageError

    try:
        with open(param, encoding="utf-8", errors="replace") as f:
            head = [f.readline(4096) for _ in range(3)]
    except OSError:
        return  # regenerate names the file and the reason
    first = head[2].split(maxsplit=1)[0] if head[2].strip() else ""
    if str(param).endswith(".ncnn.param") or (head[0].strip() == "7767517" and first == "Input"):
        raise UsageError(f"{param}: an ncnn.param, not a pnnx.param: regenerate reads pnnx.param "
                         "(the _ncnn.py written beside the ncnn.param runs it)")


def _parse_regenerate_args(argv: list[str]) -> tuple[str, dict[str, str]]:
    from pnnx_reference.errors import UsageError

    params = [a for a in argv if "=" not in a]
    options = dict(a.split("=", 1) for a in argv if "=" in a)
    unknown = set(options) - {"pnnxbin", "pnnxpy"}
    if len(params) != 1 or unknown:
        raise UsageError(f"unknown option {sorted(unknown)[0]}" if unknown else _USAGE)
    return params[0], options
