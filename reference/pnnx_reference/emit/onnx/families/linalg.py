"""Matrix structure: tril/triu -> Trilu; diag (vector -> matrix, matrix -> its diagonal);
cross (torch.cross / torch.linalg.cross)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import static
from ..registry import LOWERINGS


@LOWERINGS.register("torch.triu", "Tensor.triu", "torch.tril", "Tensor.tril")
def trilu(ctx, op):
    k = ctx.const(int(op.params.get("diagonal", 0)), hint="k")
    ctx.node("Trilu", [ctx.x(op), k], ctx.y(op), upper=int(op.type.endswith("triu")))


def _diagonal_positions(length, k):
    rows = np.arange(length) + max(-k, 0)
    return np.stack([rows, rows + k], axis=1).astype(np.int64)


@LOWERINGS.register("torch.diag", "Tensor.diag")
def diag(ctx, op):
    k = int(op.params.get("diagonal", 0) or 0)
    shape = static(ctx.shape(op.inputs[0]), "input shape")
    if len(shape) == 1:
        m = shape[0] + abs(k)
        zeros = ctx.node("Expand", [ctx.const(0, ctx.dtype(op.inputs[0]), "zero"),
                                  ctx.const([m, m], hint="shape")])
        ctx.node("ScatterND", [zeros, ctx.const(_diagonal_positions(shape[0], k)), ctx.x(op)], ctx.y(op))
    elif len(shape) == 2:
        length = static(ctx.shape(op.outputs[0]), "output")[0]
        ctx.node("GatherND", [ctx.x(op), ctx.const(_diagonal_positions(length, k))], ctx.y(op))
    else:
        raise Unsupported(f"rank-{len(shape)} input")


@LOWERINGS.register("torch.cross", "torch.linalg.cross", "Tensor.cross")
def cross(ctx, op):
    """a x b = a[1,2,0] * b[2,0,1] - a[2,0,1] * b[1,2,0] along dim."""
    other = op.input("other", 1)
    if other is None or op.params.get("dim") is None:
        raise Unsupported("needs `other` and an explicit dim")
    rank = ctx.rank(op.outputs[0])
    dim = int(op.params["dim"]) % rank

    def rolled(operand, order):
        axis = dim - (rank - ctx.rank(operand))
        if axis < 0 or ctx.shape(operand)[axis] != 3:
            raise Unsupported("cross needs size 3 on dim in both inputs")
        return ctx.node("Gather", [operand.name, ctx.const(order)], axis=axis)

    first = ctx.node("Mul", [rolled(op.inputs[0], [1, 2, 0]), rolled(other, [2, 0, 1])])
    second = ctx.node("Mul", [rolled(op.inputs[0], [2, 0, 1]), rolled(other, [1, 2, 0])])
    ctx.node("Sub", [first, second], ctx.y(op))
