"""pnnx.Input, pnnx.Output, pnnx.Attribute: graph inputs, graph outputs, initializers."""
from __future__ import annotations

from ..registry import Unsupported, lowering


@lowering("pnnx.Input")
def graph_input(b, op):
    out = op.outputs[0]
    b.inputs.append(b.value_info(out.name, out))


@lowering("pnnx.Output")
def graph_output(b, op):
    taken = {v.name for v in b.inputs} | {v.name for v in b.outputs}
    for operand in op.inputs:
        name = operand.name
        if name in taken:  # an ONNX value can be listed once, and not as input and output
            name = b.node("Identity", [operand.name], b.fresh(f"{operand.name}_out"))
        taken.add(name)
        b.outputs.append(b.value_info(name, operand))


@lowering("pnnx.Attribute")
def attribute(b, op):
    if len(op.attrs) != 1:
        raise Unsupported(f"expected one attribute, got {len(op.attrs)}")
    (key, _), = op.attrs.items()
    b.weight(b.attr(op, key), f"{op.name}.{key}", out=b.y(op))
