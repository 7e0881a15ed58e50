"""torch.diag -> Diag (vector -> matrix, matrix -> its diagonal).

Only a tensor without a batch axis lowers: diag of a (1, n) tensor is a 1-element diagonal, which
ncnn's Diag on the batch-dropped (n) blob would turn into an n x n matrix."""
from __future__ import annotations

from .context import CannotLower, Context, param
from .registry import lowers


@lowers("torch.diag", "Tensor.diag")
def diag(ctx: Context, op) -> None:
    src = op.inputs[0]
    if ctx.has_batch(src):
        raise CannotLower("diag of a tensor with a batch axis: dim 0 would be dropped by ncnn")
    ctx.emit("Diag", "diag", [ctx.blob(src)], [op.outputs[0].name], {0: int(param(op, "diagonal", 0))})
