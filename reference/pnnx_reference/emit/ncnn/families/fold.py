"""F.fold / nn.Fold -> Fold (col2im), F.unfold / nn.Unfold -> Unfold (im2col).

ncnn's Fold reads a (C*kh*kw, L) blob and Unfold a (C, H, W) blob, which is the torch tensor
with its batch-1 axis dropped, or the unbatched form as it is (a batchless graph): the lowering
checks the ncnn rank, so it also lowers batchless graphs."""
from __future__ import annotations

from ....errors import Unsupported
from ..context import Context, as_list, param
from ..registry import LOWERINGS


def _window(op) -> dict[int, int]:
    """kernel (1, 11), dilation (2, 12), stride (3, 13) and padding (4, 15, 14, 16), w first."""
    kh, kw = as_list(param(op, "kernel_size"), 2)
    dh, dw = as_list(param(op, "dilation", 1), 2)
    sh, sw = as_list(param(op, "stride", 1), 2)
    ph, pw = as_list(param(op, "padding", 0), 2)
    return {1: kw, 11: kh, 2: dw, 12: dh, 3: sw, 13: sh, 4: pw, 15: pw, 14: ph, 16: ph}


def _check_rank(ctx: Context, op, rank: int, what: str) -> None:
    got = ctx.rank(op.inputs[0])
    if got != rank:
        raise Unsupported(f"ncnn {what} takes a rank-{rank} blob, this input is rank {got} after "
                          "dropping the batch axis (a batch other than 1 cannot be lowered)")


@LOWERINGS.register("F.fold", "nn.Fold", batchless=True)
def fold(ctx: Context, op) -> None:
    _check_rank(ctx, op, 2, "Fold")
    oh, ow = as_list(param(op, "output_size"), 2)
    ctx.emit("Fold", "fold", [ctx.blob(op.inputs[0])], [op.outputs[0].name], {**_window(op), 20: ow, 21: oh})


@LOWERINGS.register("F.unfold", "nn.Unfold", batchless=True)
def unfold(ctx: Context, op) -> None:
    _check_rank(ctx, op, 3, "Unfold")
    ctx.emit("Unfold", "unfold", [ctx.blob(op.inputs[0])], [op.outputs[0].name], _window(op))
