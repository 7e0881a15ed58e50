"""Reductions -> Reduction (axes in batch-dropped torch order, 5=1 as upstream writes)."""
from __future__ import annotations

from .binary import binary_function
from .context import CannotLower, Context, param
from .registry import lowers

OPS = {"torch.sum": 0, "Tensor.sum": 0, "torch.mean": 3, "Tensor.mean": 3, "torch.amax": 4,
       "torch.amin": 5, "torch.max": 4, "Tensor.max": 4, "torch.min": 5, "Tensor.min": 5,
       "torch.prod": 6, "Tensor.prod": 6, "torch.logsumexp": 10}
NORM = {1: 7, 2: 8}


def _reduce(ctx: Context, op, operation: int) -> None:
    if "other" in (op.inputnames or []) or len(op.inputs) > 1:
        # max(input, other) / min(input, other) is elementwise
        binary_function("maximum" if operation == 4 else "minimum")(ctx, op)
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
