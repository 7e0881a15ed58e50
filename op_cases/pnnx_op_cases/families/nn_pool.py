"""Pooling modules: max/avg/LP, adaptive, fractional and max-unpool."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

SPATIAL = {1: (17,), 2: (9, 10), 3: (5, 6, 7)}
CHANNELS = (1, 3, 4, 8, 12, 13, 16)


def _x(nd, c=4, batch=1, spatial=None):
    return rand(batch, c, *(spatial or SPATIAL[nd]))


def _tuple(nd, *vals):
    """A per-dimension tuple: the given values, then repeat the last one."""
    vals = list(vals) + [vals[-1]] * (nd - len(vals))
    return tuple(vals[:nd])


def _common(op, ctor, nd, smoke_args):
    """Channel counts, batch, unbatched and a non-contiguous input, shared by pools."""
    for c in CHANNELS:
        yield module_case(op, f"c{c}", f"{ctor}({smoke_args})", [_x(nd, c)])
    yield module_case(op, "b2", f"{ctor}({smoke_args})", [_x(nd, 3, batch=2)])
    yield module_case(op, "unbatched", f"{ctor}({smoke_args})", [rand(3, *SPATIAL[nd])],
                      tags={"unbatched"})
    yield module_case(op, "noncontiguous", f"{ctor}({smoke_args})",
                      [rand(3, 1, *SPATIAL[nd])], pre="x0 = x0.transpose(0, 1)")


@family("nn.MaxPool1d", "nn.MaxPool2d", "nn.MaxPool3d")
def max_pool():
    for nd in (1, 2, 3):
        op = ctor = f"nn.MaxPool{nd}d"
        x = _x(nd)
        yield module_case(op, "k2", f"{ctor}(2)", [x], smoke=True)
        yield module_case(op, "k3_s2_p1", f"{ctor}(3, stride=2, padding=1)", [x], smoke=True)
        yield module_case(op, "k3_s1", f"{ctor}(3, stride=1)", [x])
        yield module_case(op, "k2_ceil", f"{ctor}(2, ceil_mode=True)", [x])
        yield module_case(op, "k3_s2_ceil_p1", f"{ctor}(3, stride=2, padding=1, ceil_mode=True)", [x])
        yield module_case(op, "k2_d2", f"{ctor}(2, dilation=2)", [x])
        yield module_case(op, "k2_indices", f"{ctor}(2, return_indices=True)", [x],
                          ret=("y[0]", "y[1]"))
        yield module_case(op, "k3_s2_indices_ceil", f"{ctor}(3, 2, ceil_mode=True, return_indices=True)",
                          [x], ret=("y[0]", "y[1]"))
        if nd >= 2:
            k, s, p = _tuple(nd, 3, 1), _tuple(nd, 2, 1), _tuple(nd, 1, 0)
            yield module_case(op, "k31_s21_p10", f"{ctor}({k}, stride={s}, padding={p})", [x])
        yield from _common(op, ctor, nd, "2")


@family("nn.AvgPool1d", "nn.AvgPool2d", "nn.AvgPool3d")
def avg_pool():
    for nd in (1, 2, 3):
        op = ctor = f"nn.AvgPool{nd}d"
        x = _x(nd)
        yield module_case(op, "k2", f"{ctor}(2)", [x], smoke=True)
        yield module_case(op, "k3_s2_p1", f"{ctor}(3, stride=2, padding=1)", [x], smoke=True)
        yield module_case(op, "k3_s2_p1_nopad", f"{ctor}(3, stride=2, padding=1, count_include_pad=False)", [x])
        yield module_case(op, "k2_ceil", f"{ctor}(2, ceil_mode=True)", [x])
        yield module_case(op, "k3_s2_p1_ceil_nopad",
                          f"{ctor}(3, 2, 1, ceil_mode=True, count_include_pad=False)", [x])
        yield module_case(op, "k3_s1", f"{ctor}(3, stride=1)", [x])
        if nd >= 2:
            yield module_case(op, "k2_divisor3", f"{ctor}(2, divisor_override=3)", [x])
            k, s, p = _tuple(nd, 3, 1), _tuple(nd, 2, 1), _tuple(nd, 1, 0)
            yield module_case(op, "k31_s21_p10", f"{ctor}({k}, stride={s}, padding={p})", [x])
        yield from _common(op, ctor, nd, "2")


@family("nn.LPPool1d", "nn.LPPool2d")
def lp_pool():
    for nd in (1, 2):
        op = ctor = f"nn.LPPool{nd}d"
        # positive inputs: x ** p with a fractional p is undefined for negatives
        x = rand(1, 4, *SPATIAL[nd], low=0.1, high=1.0)
        yield module_case(op, "p2_k2", f"{ctor}(2, 2)", [x], smoke=True)
        yield module_case(op, "p1_k3_s2", f"{ctor}(1, 3, stride=2)", [x])
        yield module_case(op, "p3_k2_ceil", f"{ctor}(3, 2, ceil_mode=True)", [x])
        yield module_case(op, "p1.5_k2", f"{ctor}(1.5, 2)", [x])
        yield module_case(op, "p2_k3_s1", f"{ctor}(2, 3, stride=1)", [x])
        yield module_case(op, "p2_k2_b2", f"{ctor}(2, 2)", [rand(2, 3, *SPATIAL[nd], low=0.1)])
        yield module_case(op, "p2_k2_unbatched", f"{ctor}(2, 2)", [rand(3, *SPATIAL[nd], low=0.1)],
                          tags={"unbatched"})


@family("nn.AdaptiveAvgPool1d", "nn.AdaptiveAvgPool2d", "nn.AdaptiveAvgPool3d",
        "nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d")
def adaptive_pool():
    for kind in ("Avg", "Max"):
        for nd in (1, 2, 3):
            op = ctor = f"nn.Adaptive{kind}Pool{nd}d"
            x = _x(nd)
            yield module_case(op, "o1", f"{ctor}(1)", [x], smoke=True)
            yield module_case(op, "o3", f"{ctor}(3)", [x], smoke=nd == 2)
            yield module_case(op, "o_same", f"{ctor}({SPATIAL[nd]})", [x])
            yield module_case(op, "o4_uneven", f"{ctor}({_tuple(nd, 4, 5, 3)})", [x])
            larger = tuple(s + 3 for s in SPATIAL[nd])   # windows overlap and repeat
            yield module_case(op, "o_larger", f"{ctor}({larger})", [x])
            if nd >= 2:
                yield module_case(op, "o_none", f"{ctor}({(None,) + _tuple(nd - 1, 2)})", [x])
            if kind == "Max":
                yield module_case(op, "o3_indices", f"{ctor}(3, return_indices=True)", [x],
                                  ret=("y[0]", "y[1]"))
            yield from _common(op, ctor, nd, "2")


_RANDOM = "output pooling regions are drawn at random on every call"


@family("nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d")
def fractional_max_pool():
    for nd in (2, 3):
        op = ctor = f"nn.FractionalMaxPool{nd}d"
        x = _x(nd, 3, spatial=_tuple(nd, 9, 10, 8))
        fixed = f"_random_samples=torch.rand(1, 3, {nd})"
        yield module_case(op, "k2_o4_fixed", f"{ctor}(2, output_size=4, {fixed})", [x], smoke=True)
        yield module_case(op, "k3_ratio0.5_fixed", f"{ctor}(3, output_ratio=0.5, {fixed})", [x])
        yield module_case(op, "k2_o5_indices_fixed",
                          f"{ctor}(2, output_size=5, return_indices=True, {fixed})", [x],
                          ret=("y[0]", "y[1]"))
        yield module_case(op, "k2_o4_random", f"{ctor}(2, output_size=4)", [x],
                          reasons={"random": _RANDOM})
        yield module_case(op, "k2_ratio0.6_random", f"{ctor}(2, output_ratio=0.6)", [x],
                          reasons={"random": _RANDOM})


@family("nn.MaxUnpool1d", "nn.MaxUnpool2d", "nn.MaxUnpool3d")
def max_unpool():
    # indices come from a max pool inside the model, so they are valid by construction;
    # even extents so that the default output size covers every index
    even = {1: (16,), 2: (8, 10), 3: (4, 6, 6)}
    for nd in (1, 2, 3):
        op = ctor = f"nn.MaxUnpool{nd}d"
        pool = f"F.max_pool{nd}d"
        x = _x(nd, spatial=even[nd])
        size = list(even[nd])
        pooled = f"x0, i0 = {pool}(x0, 2, return_indices=True)"
        sized = f"self.m(x0, i0, output_size={size})"
        yield module_case(op, "k2", f"{ctor}(2)", [x], smoke=True, pre=pooled, call=sized)
        yield module_case(op, "k2_default_size", f"{ctor}(2)", [x], pre=pooled,
                          call="self.m(x0, i0)", reasons={"no-trace": _UNPOOL_NO_TRACE})
        yield module_case(op, "k3_s2_p1", f"{ctor}(3, stride=2, padding=1)", [x],
                          pre=f"x0, i0 = {pool}(x0, 3, 2, 1, return_indices=True)", call=sized)
        odd = [s + 1 for s in size]
        yield module_case(op, "k2_output_size_odd", f"{ctor}(2)", [_x(nd, spatial=odd)],
                          pre=pooled, call=f"self.m(x0, i0, output_size={odd})")
        yield module_case(op, "k2_b2_c13", f"{ctor}(2)", [_x(nd, 13, batch=2, spatial=even[nd])],
                          pre=pooled, call=sized)
        yield module_case(op, "k2_values_from_other", f"{ctor}(2)", [x],
                          pre=f"_, i0 = {pool}(x0, 2, return_indices=True)\n"
                              f"x0 = {pool}(x0 * 2, 2)", call=sized)


_UNPOOL_NO_TRACE = ("torch computes the default output size with a check that "
                    "torch.jit.trace cannot evaluate (sizes are traced tensors)")


@family("nn.AdaptiveAvgPool2d")
def global_pool_then_linear():
    """Global pooling, flatten and a linear layer: the ncnn lowering reads the pooled blob as
    flat (no Reshape); moved from the hand-written ncnn export tests."""
    yield module_case("nn.AdaptiveAvgPool2d", "o1_flatten_linear", "nn.AdaptiveAvgPool2d(1)", [rand(1, 8, 12, 12)],
                      modules={"fc": "nn.Linear(8, 3)"}, call="self.fc(torch.flatten(self.m(x0), 1))")
