"""cumsum -> CumulativeSum; of bools, running counts (exact up to 2^24: truth.check_count), of
integers, their float values (exact below 2^24)."""
from __future__ import annotations

from ..context import Context, param
from ..registry import LEADING, LOWERINGS
from ..truth import check_count, is_bool


@LOWERINGS.register("torch.cumsum", "Tensor.cumsum", bool_operands=True, int_operands=True, batch=LEADING)
def cumsum(ctx: Context, op) -> None:
    src, dim = op.inputs[0], int(param(op, "dim"))
    if is_bool(src):
        check_count(src.shape[dim])
    axis = ctx.axis(src, dim)
    ctx.emit("CumulativeSum", "cumsum", [ctx.blob(src)], [op.outputs[0].name], {0: axis})
