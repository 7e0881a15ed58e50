"""F.* pooling: max / avg / lp / adaptive / fractional pools and max_unpool."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table

_SPATIAL = {1: (17,), 2: (9, 11), 3: (5, 7, 6)}


def _x(rank: int, n: int = 1, c: int = 3):
    return f(n, c, *_SPATIAL[rank])


def _max_rows(fn: str, rank: int) -> list[tuple]:
    mo = {"tags": {"multi-output"}}
    return [
        ("k2", f"{fn}(x0, 2)", [_x(rank)]),
        ("k3_s2_p1_b2_c13", f"{fn}(x0, kernel_size=3, stride=2, padding=1)", [_x(rank, 2, 13)]),
        ("k3_s2_ceil", f"{fn}(x0, 3, stride=2, ceil_mode=True)", [_x(rank, 1, 4)]),
        ("k2_d2", f"{fn}(x0, 2, stride=1, dilation=2)", [_x(rank, 1, 8)]),
        ("k3_s1_p1_c16", f"{fn}(x0, 3, 1, 1)", [_x(rank, 1, 16)]),
        ("return_indices", f"y, idx = {fn}(x0, 2, return_indices=True)\ny, idx", [_x(rank, 1, 12)], mo),
        ("unbatched", f"{fn}(x0, 2)", [f(3, *_SPATIAL[rank])], {"tags": {"unbatched"}}),
        ("noncontig_channel_stride", f"x = x0[:, ::2]\n{fn}(x, 2)", [_x(rank, 1, 6)]),
    ]


def _avg_rows(fn: str, rank: int) -> list[tuple]:
    rows = [
        ("k2", f"{fn}(x0, 2)", [_x(rank)]),
        ("k3_s2_p1_b2_c13", f"{fn}(x0, kernel_size=3, stride=2, padding=1)", [_x(rank, 2, 13)]),
        ("k3_s2_p1_exclude_pad", f"{fn}(x0, 3, 2, 1, count_include_pad=False)", [_x(rank, 1, 4)]),
        ("k3_s2_ceil", f"{fn}(x0, 3, stride=2, ceil_mode=True)", [_x(rank, 1, 8)]),
        ("k3_s2_p1_ceil_exclude_pad", f"{fn}(x0, 3, 2, 1, ceil_mode=True, count_include_pad=False)", [_x(rank, 1, 16)]),
        ("unbatched", f"{fn}(x0, 2)", [f(3, *_SPATIAL[rank])], {"tags": {"unbatched"}}),
    ]
    if rank > 1:
        rows.append(("divisor_override3", f"{fn}(x0, 2, divisor_override=3)", [_x(rank, 1, 12)]))
    return rows


@family("F.max_pool1d", "F.max_pool2d", "F.max_pool3d")
def max_pools():
    for r in (1, 2, 3):
        yield from table(f"F.max_pool{r}d", _max_rows(f"F.max_pool{r}d", r))


@family("F.avg_pool1d", "F.avg_pool2d", "F.avg_pool3d")
def avg_pools():
    for r in (1, 2, 3):
        yield from table(f"F.avg_pool{r}d", _avg_rows(f"F.avg_pool{r}d", r))


def _lp_rows(fn: str, rank: int) -> list[tuple]:
    def x(n=1, c=3):     # lp pooling takes |x|^p: non-negative input keeps p=1, 3 well defined
        return f(n, c, *_SPATIAL[rank], low=0.0, high=1.0)
    return [
        ("p2_k2", f"{fn}(x0, 2.0, 2)", [x()]),
        ("p1_k3_s2_b2_c13", f"{fn}(x0, 1.0, 3, stride=2)", [x(2, 13)]),
        ("p3_k2_ceil", f"{fn}(x0, 3.0, 3, stride=2, ceil_mode=True)", [x(1, 4)]),
        ("p2_k3_s1_c16", f"{fn}(x0, 2, 3, 1)", [x(1, 16)]),
        ("p4_k2_c8", f"{fn}(x0, 4.0, kernel_size=2)", [x(1, 8)]),
    ]


family("F.lp_pool1d")(lambda: table("F.lp_pool1d", _lp_rows("F.lp_pool1d", 1)))
family("F.lp_pool2d")(lambda: table("F.lp_pool2d", _lp_rows("F.lp_pool2d", 2)
                                    + [("k2x3", "F.lp_pool2d(x0, 2.0, (2, 3))", [f(1, 3, 8, 9, low=0.0)])]))


def _adaptive_rows(fn: str, rank: int, is_max: bool) -> list[tuple]:
    sp = _SPATIAL[rank]
    one, two = (1,) * rank, tuple(2 for _ in range(rank))
    rows = [
        ("o1_global", f"{fn}(x0, {one if rank > 1 else 1})", [_x(rank, 1, 16)]),
        ("o2_b2_c13", f"{fn}(x0, {two if rank > 1 else 2})", [_x(rank, 2, 13)]),
        ("o_nondivisible", f"{fn}(x0, {tuple(s - 2 for s in sp) if rank > 1 else 5})", [_x(rank, 1, 4)]),
        ("o_same", f"{fn}(x0, {sp if rank > 1 else sp[0]})", [_x(rank, 1, 3)]),
        ("unbatched", f"{fn}(x0, {two if rank > 1 else 3})", [f(8, *sp)], {"tags": {"unbatched"}}),
    ]
    if rank > 1:
        rows.append(("o_none_keep", f"{fn}(x0, {(None,) + (3,) * (rank - 1)})", [_x(rank, 1, 12)]))
    if is_max:
        rows.append(("return_indices", f"y, idx = {fn}(x0, {two if rank > 1 else 4}, return_indices=True)\ny, idx",
                     [_x(rank, 1, 8)], {"tags": {"multi-output"}}))
    return rows


@family("F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d",
        "F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d")
def adaptive_pools():
    for r in (1, 2, 3):
        for kind, is_max in (("avg", False), ("max", True)):
            op = f"F.adaptive_{kind}_pool{r}d"
            yield from table(op, _adaptive_rows(op, r, is_max))


_FRACTIONAL = "draws random pooling regions unless _random_samples is given"


def _fractional_rows(fn: str, rank: int) -> list[tuple]:
    """Fixed `_random_samples` make the pooling regions deterministic; one case stays random."""
    sp = (12,) * rank
    small = (12,) * rank if rank < 3 else (8,) * rank  # keeps b2 x c13 under the 20k-element input cap

    def fixed(n, c):
        return f"_random_samples=torch.full(({n}, {c}, {rank}), 0.5)"
    rows = [
        ("k2_o6_fixed", f"{fn}(x0, 2, output_size={(6,) * rank}, {fixed(1, 3)})", [f(1, 3, *sp)]),
        ("k3_ratio_fixed_b2_c13", f"{fn}(x0, 3, output_ratio={(0.5,) * rank}, {fixed(2, 13)})",
         [f(2, 13, *small)]),
        ("k2_indices_fixed", f"y, idx = {fn}(x0, 2, output_size={(5,) * rank}, return_indices=True, "
         f"{fixed(1, 4)})\ny, idx", [f(1, 4, *sp)], {"tags": {"multi-output"}}),
        ("k2_samples_input", f"{fn}(x0, 2, output_size={(4,) * rank}, _random_samples=x1)",
         [f(1, 8, *sp), f(1, 8, rank, low=0.0, high=1.0)]),
        ("k2_random", f"{fn}(x0, 2, output_size={(6,) * rank})", [f(1, 3, *sp)],
         {"reasons": {"random": _FRACTIONAL}}),
    ]
    return rows


@family("F.fractional_max_pool2d", "F.fractional_max_pool3d")
def fractional_max_pools():
    for r in (2, 3):
        yield from table(f"F.fractional_max_pool{r}d", _fractional_rows(f"F.fractional_max_pool{r}d", r))


_UNPOOL_NO_TRACE = "torch's default output-size check compares traced sizes as tensors and raises"


def _unpool_rows(rank: int) -> list[tuple]:
    """max_pool -> max_unpool; output_size is a literal (the only form torch.jit.trace takes)."""
    pool, unpool = f"F.max_pool{rank}d", f"F.max_unpool{rank}d"
    sp = {1: (16,), 2: (8, 10), 3: (4, 6, 8)}[rank]
    odd = {1: (17,), 2: (9, 11), 3: (5, 7, 9)}[rank]
    size = list(sp)
    return [
        ("k2", f"y, idx = {pool}(x0, 2, return_indices=True)\n{unpool}(y, idx, 2, output_size={size})", [f(1, 3, *sp)]),
        ("k2_s2_b2_c13", f"y, idx = {pool}(x0, 2, 2, return_indices=True)\n"
         f"{unpool}(y, idx, 2, stride=2, output_size={size})", [f(2, 13, *sp)]),
        ("k3_s2_p1", f"y, idx = {pool}(x0, 3, 2, 1, return_indices=True)\n{unpool}(y, idx, 3, 2, 1, output_size={size})",
         [f(1, 4, *sp)]),
        ("k2_odd_output_size", f"y, idx = {pool}(x0, 2, return_indices=True)\n{unpool}(y, idx, 2, output_size={list(odd)})",
         [f(1, 8, *odd)]),
        ("k2_c16_scaled", f"y, idx = {pool}(x0, 2, return_indices=True)\n"
         f"{unpool}(y * 2.0, idx, kernel_size=2, output_size={size})", [f(1, 16, *sp)]),
        ("k2_default_size", f"y, idx = {pool}(x0, 2, return_indices=True)\n{unpool}(y, idx, 2)", [f(1, 3, *sp)],
         {"reasons": {"no-trace": _UNPOOL_NO_TRACE}}),
    ]


@family("F.max_unpool1d", "F.max_unpool2d", "F.max_unpool3d")
def max_unpools():
    for r in (1, 2, 3):
        yield from table(f"F.max_unpool{r}d", _unpool_rows(r))
