"""Sorting: topk -> TopK, sort/argsort -> TopK over the whole dim. TopK breaks ties by the
lower index (the spec), so it sorts stably both ways, as stable=True asks."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import axis
from ..registry import LOWERINGS


@LOWERINGS.register("torch.topk", "Tensor.topk")
def topk(ctx, op):
    dim = axis(int(op.params.get("dim", -1)), ctx.rank(op.inputs[0]))
    outs = [o.name for o in op.outputs] + ([] if len(op.outputs) == 2 else [ctx.fresh("indices")])
    ctx.node("TopK", [ctx.x(op), ctx.const([int(op.params["k"])], hint="k")], outs, axis=dim,
           largest=int(bool(op.params.get("largest", True))),
           sorted=int(bool(op.params.get("sorted", True))))


def _sort(ctx, op, values: str | None, indices: str):
    dim = axis(int(op.params.get("dim", -1)), ctx.rank(op.inputs[0]))
    n = ctx.shape(op.inputs[0])[dim]
    if n < 0:
        raise Unsupported("sort along a dynamic dimension")
    ctx.node("TopK", [ctx.x(op), ctx.const([n], hint="k")], [values or ctx.fresh("values"), indices],
           axis=dim, largest=int(bool(op.params.get("descending", False))), sorted=1)


@LOWERINGS.register("torch.sort", "Tensor.sort")
def sort(ctx, op):
    _sort(ctx, op, ctx.y(op), ctx.y(op, 1))


@LOWERINGS.register("torch.argsort", "Tensor.argsort")
def argsort(ctx, op):
    _sort(ctx, op, None, ctx.y(op))
