"""Matrix structure: tril/triu -> Trilu; diag (vector -> matrix, matrix -> its diagonal);
cross (torch.cross / torch.linalg.cross)."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..builder import static
from ..registry import LOWERINGS


@LOWERINGS.register("torch.triu", "Tensor.triu", "torch.tril", "Tensor.tril")
def trilu(b, op):
    k = b.const(int(op.params.get("diagonal", 0)), hint="k")
    b.node("Trilu", [b.x(op), k], b.y(op), upper=int(op.type.endswith("triu")))


def _diagonal_positions(length, k):
    rows = np.arange(length) + max(-k, 0)
    return np.stack([rows, rows + k], axis=1).astype(np.int64)


@LOWERINGS.register("torch.diag", "Tensor.diag")
def diag(b, op):
    k = int(op.params.get("diagonal", 0) or 0)
    shape = static(b.shape(op.inputs[0]), "input shape")
    if len(shape) == 1:
        m = shape[0] + abs(k)
        zeros = b.node("Expand", [b.const(0, b.dtype(op.inputs[0]), "zero"),
                                  b.const([m, m], hint="shape")])
        b.node("ScatterND", [zeros, b.const(_diagonal_positions(shape[0], k)), b.x(op)], b.y(op))
    elif len(shape) == 2:
        length = static(b.shape(op.outputs[0]), "output")[0]
        b.node("GatherND", [b.x(op), b.const(_diagonal_positions(length, k))], b.y(op))
    else:
        raise Unsupported(f"rank-{len(shape)} input")


@LOWERINGS.register("torch.cross", "torch.linalg.cross", "Tensor.cross")
def cross(b, op):
    """a x b = a[1,2,0] * b[2,0,1] - a[2,0,1] * b[1,2,0] along dim."""
    other = op.input("other", 1)
    if other is None or op.params.get("dim") is None:
        raise Unsupported("needs `other` and an explicit dim")
    rank = b.rank(op.outputs[0])
    dim = int(op.params["dim"]) % rank

    def rolled(operand, order):
        axis = dim - (rank - b.rank(operand))
        if axis < 0 or b.shape(operand)[axis] != 3:
            raise Unsupported("cross needs size 3 on dim in both inputs")
        return b.node("Gather", [operand.name, b.const(order)], axis=axis)

    first = b.node("Mul", [rolled(op.inputs[0], [1, 2, 0]), rolled(other, [2, 0, 1])])
    second = b.node("Mul", [rolled(op.inputs[0], [2, 0, 1]), rolled(other, [1, 2, 0])])
    b.node("Sub", [first, second], b.y(op))
