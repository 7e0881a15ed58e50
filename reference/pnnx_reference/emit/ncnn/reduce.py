"""Reductions -> Reduction (axes in batch-dropped torch order, 5=1 as upstream writes)."""
from __future__ import annotations

from .binary import binary_function
from .context import CannotLower, Context, param
from .registry import lowers

# ncnn Reduction operation codes (param 0)
REDUCE_SUM, REDUCE_SUMSQ, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD = 0, 2, 3, 4, 5, 6
REDUCE_L1, REDUCE_L2, REDUCE_LOGSUMEXP = 7, 8, 10
OPS = {"torch.sum": REDUCE_SUM, "Tensor.sum": REDUCE_SUM, "torch.mean": REDUCE_MEAN, "Tensor.mean": REDUCE_MEAN,
       "torch.amax": REDUCE_MAX, "torch.amin": REDUCE_MIN, "torch.max": REDUCE_MAX, "Tensor.max": REDUCE_MAX,
       "torch.min": REDUCE_MIN, "Tensor.min": REDUCE_MIN, "torch.prod": REDUCE_PROD, "Tensor.prod": REDUCE_PROD,
       "torch.logsumexp": REDUCE_LOGSUMEXP}
NORM = {1: REDUCE_L1, 2: REDUCE_L2}


def _reduce(ctx: Context, op, operation: int) -> None:
    if "other" in (op.inputnames or []) or len(op.inputs) > 1:
        # max(input, other) / min(input, other) is elementwise
        binary_function("maximum" if operation == REDUCE_MAX else "minimum")(ctx, op)
        return
    if len(op.outputs) > 1 and op.outputs[1].consumers:
        raise CannotLower("the indices of max/min are used: ncnn Reduction has none")
    dims = param(op, "dim")
    src, out = op.inputs[0], op.outputs[0]
    keep = bool(param(op, "keepdim", False))
    if dims is None or dims == []:
        if keep:
            raise CannotLower("reduces every dim with keepdim (the batch axis too)")
        # 0-d result: reduce_all gives a 1-element blob
        ctx.emit("Reduction", "reduce", [ctx.blob(src)], [out.name], {0: operation, 1: 1, 4: 0, 5: 1})
        return
    dims = [dims] if isinstance(dims, int) else list(dims)
    axes = sorted(ctx.axis(src, int(d)) for d in dims)
    params = {0: operation, 1: 0, 3: axes, 4: int(keep), 5: 1}
    if not keep and len(axes) == ctx.rank(src):
        params = {0: operation, 1: 1, 4: 0, 5: 1}
    ctx.emit("Reduction", "reduce", [ctx.blob(src)], [out.name], params)


def _register(op_type: str, operation: int) -> None:
    lowers(op_type)(lambda ctx, op: _reduce(ctx, op, operation))


for _type, _operation in OPS.items():
    _register(_type, _operation)


@lowers("torch.norm", "Tensor.norm", "torch.linalg.vector_norm")
def norm(ctx: Context, op) -> None:
    p = param(op, "p", param(op, "ord", 2))
    p = 2 if p == "fro" else p
    if p not in NORM:
        raise CannotLower(f"p={p} norm has no ncnn Reduction")
    _reduce(ctx, op, NORM[int(p)])
