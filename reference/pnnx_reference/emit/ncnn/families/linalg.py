"""Matrix structure: torch.diag -> Diag (vector -> matrix, matrix -> its diagonal);
tril/triu -> x times a constant 0/1 mask.

Only a tensor without a batch axis lowers to Diag: diag of a (1, n) tensor is a 1-element
diagonal, which ncnn's Diag on the batch-dropped (n) blob would turn into an n x n matrix."""
from __future__ import annotations

import numpy as np

from ....errors import AlongBatch, Unsupported
from ..arithmetic import MUL
from ..context import Context, dims_params, param
from ..layers import Weight
from ..registry import LEADING, LOWERINGS, MOVES_DATA


@LOWERINGS.register("torch.diag", "Tensor.diag", batch=LEADING, **MOVES_DATA)
def diag(ctx: Context, op) -> None:
    src = op.inputs[0]
    if ctx.has_batch(src):
        raise AlongBatch("diag of a tensor with a batch axis: dim 0 would be dropped by ncnn")
    ctx.emit("Diag", "diag", [ctx.blob(src)], [op.outputs[0].name], {0: int(param(op, "diagonal", 0))})


def triangle_mask(rows: int, cols: int, diagonal: int, lower: bool) -> np.ndarray:
    """1 where tril (lower) / triu keeps an element of a rows x cols matrix, else 0."""
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    return (offset <= diagonal if lower else offset >= diagonal).astype(np.float32)


def _triangle(ctx: Context, op, lower: bool) -> None:
    """x times a constant 0/1 mask (MemoryData) of the last two dims, broadcast over the others.
    An inf or nan outside the triangle becomes nan (torch writes 0 there)."""
    src, out = op.inputs[0], op.outputs[0]
    torch_shape = ctx.torch_shape(src)
    diagonal = param(op, "diagonal", 0)
    if len(torch_shape) < 2 or not isinstance(diagonal, int):
        raise Unsupported(f"{op.type} needs a matrix and a constant diagonal")
    mask = triangle_mask(*torch_shape[-2:], diagonal, lower)
    rank = ctx.rank(src)
    mask_shape = ([1] * (len(torch_shape) - 2) + list(mask.shape))[len(torch_shape) - rank:]
    mask_blob = ctx.temp(out.name)
    ctx.emit("MemoryData", "tril" if lower else "triu", [], [mask_blob], dims_params(mask_shape),
             [Weight(mask.reshape(-1), tagged=False)])
    ctx.emit("BinaryOp", "mask", [ctx.blob(src), mask_blob], [out.name], {0: MUL})


@LOWERINGS.register("torch.tril", "Tensor.tril", batch=LEADING, **MOVES_DATA)
def tril(ctx: Context, op) -> None:
    _triangle(ctx, op, lower=True)


@LOWERINGS.register("torch.triu", "Tensor.triu", batch=LEADING, **MOVES_DATA)
def triu(ctx: Context, op) -> None:
    _triangle(ctx, op, lower=False)
