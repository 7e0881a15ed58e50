"""Index ramps 0, 1, ..., n-1 whose length n follows the input (inputshape2): ncnn has no
arange, so the ramp is built from a blob of that length along one axis: its other axes summed
away with coefficient 0 (a Reduction: n zeros), plus 1, a CumulativeSum (1..n), minus 1.
Exact while n < 2^24 (float32 integers); a blob holding inf or NaN would spread NaN into it.

Used by torch.arange over a size (position ids) and by SDPA's is_causal mask at run time."""
from __future__ import annotations

from ...errors import Unsupported
from ...ir import Operand
from .arithmetic import scalar
from .context import Context

REDUCE_SUM = 0


def ramp(ctx: Context, x: Operand, dim: int, base: str, out: str | None = None) -> str:
    """A 1-d blob 0..n-1, n the size of torch dim `dim` of `x` (as its blob is carried now)."""
    axis, rank = ctx.axis(x, dim), ctx.rank(x)
    zeros = ctx.temp(base)
    if rank == 1:
        scalar(ctx, "mul", ctx.blob(x), 0.0, zeros)
    elif rank <= 4:
        others = [a for a in range(rank) if a != axis]
        ctx.emit("Reduction", "ramp", [ctx.blob(x)], [zeros], {0: REDUCE_SUM, 1: 0, 2: 0.0, 3: others, 4: 0, 5: 1})
    else:
        raise Unsupported(f"a rank-{rank} blob (ncnn blobs have at most 4 dims)")
    ones = scalar(ctx, "add", zeros, 1.0, ctx.temp(base))
    counts = ctx.temp(base)
    ctx.emit("CumulativeSum", "ramp", [ones], [counts], {0: 0})
    return scalar(ctx, "sub", counts, 1.0, out or ctx.temp(base))
