"""pnnx.Input, pnnx.Output, pnnx.Attribute: graph inputs, graph outputs, initializers. Inputs
and outputs are registered for complex operands too (value_info declares them (..., 2) real)."""
from __future__ import annotations

from ....errors import Unsupported
from ..registry import COMPLEX_LOWERINGS, LOWERINGS


@LOWERINGS.register("pnnx.Input")
@COMPLEX_LOWERINGS.register("pnnx.Input")
def graph_input(ctx, op):
    out = op.outputs[0]
    ctx.inputs.append(ctx.value_info(out.name, out))


@LOWERINGS.register("pnnx.Output")
@COMPLEX_LOWERINGS.register("pnnx.Output")
def graph_output(ctx, op):
    taken = {v.name for v in ctx.inputs} | {v.name for v in ctx.outputs}
    for operand in op.inputs:
        name = operand.name
        if name in taken:  # an ONNX value can be listed once, and not as input and output
            name = ctx.node("Identity", [operand.name], ctx.fresh(f"{operand.name}_out"))
        taken.add(name)
        ctx.outputs.append(ctx.value_info(name, operand))


@LOWERINGS.register("pnnx.Attribute")
def attribute(ctx, op):
    if len(op.attrs) != 1:
        raise Unsupported(f"expected one attribute, got {len(op.attrs)}")
    (key, _), = op.attrs.items()
    ctx.weight(ctx.attr(op, key), f"{op.name}.{key}", out=ctx.y(op))
