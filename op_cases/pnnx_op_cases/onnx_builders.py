"""Render ONNX-table cases (node-test style): the source builds the graph with `onnx.helper`
and its model is an `OnnxModel` (`onnx_model.py`), run by onnxruntime as the oracle.

    node("Conv", ["x0", "W", "B"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])   -> make_node text
    onnx_case("onnx.Conv", "k3_p1", node(...), [rand(1, 3, 8, 8)],
              params={"W": (8, 3, 3, 3), "B": (8,)},            # float initializers, seeded
              consts={"shape": [1, -1]},                        # exact initializers (int64 unless dtype given)
              opset=13, outputs=("y",), dims={0: {0: "N"}},     # dim_param "N" for input 0, dim 0
              smoke=True)

Forward inputs are x0, x1, ... in the order of `inputs`; node outputs default to "y". An
attribute that must be code (a TensorProto) is given as `Code("helper.make_tensor(...)")`."""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from .builders import Param, _make_case
from .case import TAG_ONNX, Case, InputSpec, ToleranceHint
HEADER = (
    "import torch\n"
    "import torch.nn as nn\n"
    "from onnx import helper\n"
    "from pnnx_op_cases.onnx_model import OnnxModel\n"
)


class Code(str):
    """An attribute value written as code, e.g. `Code("helper.make_tensor('v', 1, [2], [0.5, 1.5])")`."""

    def __repr__(self) -> str:
        return str(self)


def node(op_type: str, inputs: Sequence[str], outputs: Sequence[str] | str = "y", **attrs) -> str:
    outs = [outputs] if isinstance(outputs, str) else list(outputs)
    args = [repr(op_type), repr(list(inputs)), repr(outs)] + [f"{k}={v!r}" for k, v in attrs.items()]
    return f"helper.make_node({', '.join(args)})"


def _const_line(name: str, value, dtype: str | None) -> str:
    if dtype is None:
        dtype = "torch.int64" if all(isinstance(v, int) for v in _flat(value)) else "torch.float32"
    return f"self.register_buffer({name!r}, torch.tensor({value!r}, dtype={dtype}))"


def _flat(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    else:
        yield value


def render_onnx_source(nodes: Sequence[str], inputs: Sequence[InputSpec], outputs: Sequence[str], opset: int,
                       init_lines: Sequence[str], dims: Mapping[int, Mapping[int, str]]) -> str:
    specs = []
    for i, spec in enumerate(inputs):
        shape = [dims.get(i, {}).get(d, size) for d, size in enumerate(spec.shape)]
        specs.append(f"(\"x{i}\", {spec.dtype!r}, {shape!r})")
    lines = [HEADER, "", "class Model(OnnxModel):", f"    opset = {opset}",
             f"    inputs = [{', '.join(specs)}]", f"    outputs = {list(outputs)!r}"]
    if init_lines:
        lines += ["", "    def __init__(self):", "        super().__init__()"]
        lines += [f"        {ln}" for ln in init_lines]
    lines += ["", "    def nodes(self):", "        return ["]
    lines += [f"            {n}," for n in nodes]
    lines += ["        ]"]
    return "\n".join(lines) + "\n"


def onnx_case(op: str, variant: str, nodes: str | Sequence[str], inputs: Iterable[InputSpec], *,
              params: Mapping[str, tuple | Param] | None = None, consts: Mapping[str, object] | None = None,
              const_dtypes: Mapping[str, str] | None = None, opset: int = 13,
              outputs: Sequence[str] = ("y",), dims: Mapping[int, Mapping[int, str]] | None = None,
              smoke: bool = False, tags: Iterable[str] = (), reasons: Mapping[str, str] | None = None,
              tolerance: ToleranceHint | None = None) -> Case:
    inputs = list(inputs)
    nodes = [nodes] if isinstance(nodes, str) else list(nodes)
    init_lines = []
    for name, spec in (params or {}).items():
        p = spec if isinstance(spec, Param) else Param(tuple(spec))
        init_lines.append(p.init_line(name))
    for name, value in (consts or {}).items():
        init_lines.append(_const_line(name, value, (const_dtypes or {}).get(name)))
    source = render_onnx_source(nodes, inputs, outputs, opset, init_lines, dict(dims or {}))
    extra = {TAG_ONNX} | ({"dynamic"} if dims else set())
    ret = tuple(outputs) if len(outputs) > 1 else None
    return _make_case(op, variant, source, inputs, smoke=smoke, tags=set(tags) | extra, reasons=reasons,
                      tolerance=tolerance, ret=ret, pre=None)
