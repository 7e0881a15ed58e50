"""cumsum -> CumulativeSum."""
from __future__ import annotations

from ..context import Context, param
from ..registry import LOWERINGS


@LOWERINGS.register("torch.cumsum", "Tensor.cumsum", batchless=True)
def cumsum(ctx: Context, op) -> None:
    axis = ctx.axis(op.inputs[0], int(param(op, "dim")))
    ctx.emit("CumulativeSum", "cumsum", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {0: axis})
