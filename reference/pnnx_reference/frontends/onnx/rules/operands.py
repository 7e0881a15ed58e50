"""Small helpers the rule families share."""
from __future__ import annotations

import torch

from ..values import ShapeValue


def rank(value) -> int:
    return value.dim()


def axis(a: int, r: int) -> int:
    return a + r if a < 0 else a


def axes(values, r: int) -> list[int]:
    return [axis(int(a), r) for a in values]


def legacy_broadcast(ctx, a, b):
    """Before opset 7, binary ops broadcast only with broadcast=1: B's dims line up with A's
    from `axis` (by default as a suffix), not numpy-style."""
    if ctx.opset >= 7 or not int(ctx.attr("broadcast", 0)) or not isinstance(b, torch.Tensor) \
            or not isinstance(a, torch.Tensor) or b.dim() == a.dim():
        return b
    start = int(ctx.attr("axis", a.dim() - b.dim()))
    start = start + a.dim() if start < 0 else start
    return b.reshape(list(b.shape) + [1] * (a.dim() - start - b.dim()))


def scalar_operand(ctx, i: int, other, rank: int | None = None):
    """Input i as a Python number when it is a one-element constant that broadcasting with
    `other` (to `rank` dims, by default other's) would not change (`x * 2.0` reads better than a
    weight of one element), else the tensor."""
    const = ctx.const(i)
    if const is not None and const.numel() == 1 and isinstance(other, torch.Tensor) \
            and const.dim() <= (other.dim() if rank is None else rank) \
            and not const.is_complex() and (const.is_floating_point() == other.is_floating_point()):
        return const.reshape(()).item()
    return ctx.tensor(i)


def known_values(ctx, indices) -> bool:
    """Every listed input is known at conversion time and at least one is a ShapeValue."""
    values = [ctx.x(i) for i in indices]
    return any(isinstance(v, ShapeValue) for v in values) and all(ctx.known(i) is not None for i in indices)


def spatial_rank(ctx, x) -> int:
    r = x.dim() - 2
    if r not in (1, 2, 3):
        ctx.fail(f"{r}-d spatial input (rank {x.dim()}) has no PyTorch operator")
    return r


def ints_attr(ctx, name: str, n: int, default: int) -> list[int]:
    values = ctx.attr(name)
    return [default] * n if not values else [int(v) for v in values]


def sizes(x) -> list:
    """x's shape as a list of (Sym)ints."""
    return list(x.shape)


def prod(values) -> int:
    out = 1
    for v in values:
        out = out * v
    return out


def same_pads(auto_pad: str, sizes, kernel, strides, dilations) -> list[int]:
    """[begins..., ends...] for auto_pad SAME_UPPER / SAME_LOWER: output = ceil(input / stride)."""
    begins, ends = [], []
    for size, k, s, d in zip(sizes, kernel, strides, dilations):
        out = -(-int(size) // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - int(size), 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def conv_pads(ctx, x, n: int, kernel, strides, dilations) -> list[int]:
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return same_pads(auto_pad, list(x.shape[2:]), kernel, strides, dilations)
    if auto_pad == "VALID":
        return [0] * (2 * n)
    return ints_attr(ctx, "pads", 2 * n, 0)


def torch_pad(pads: list[int]) -> list[int]:
    """ONNX [b1, b2, .., e1, e2, ..] over the last n dims -> F.pad's (bn, en, .., b1, e1)."""
    n = len(pads) // 2
    out = []
    for i in reversed(range(n)):
        out += [pads[i], pads[n + i]]
    return out
