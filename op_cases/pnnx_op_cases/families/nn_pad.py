"""Padding modules: constant, zero, reflection and replication pads."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

SPATIAL = {1: (9,), 2: (5, 6), 3: (3, 4, 5)}


def _asym(nd):
    """An asymmetric padding tuple (left, right, top, bottom, ...) for nd dims."""
    return (1, 2, 0, 3, 2, 1)[: 2 * nd]


def _crop(nd):
    """Negative padding crops (allowed for constant/zero padding only)."""
    return (-1, 2, 1, -2, 0, -1)[: 2 * nd]


def _pad_cases(op, nd, value="", crop=False, small=False):
    """`value` is the extra constructor argument (ConstantPad's fill value)."""
    def ctor(pad):
        return f"{op}({pad}{value})"

    x = rand(1, 4, *SPATIAL[nd])
    p = 1 if small else 2
    yield module_case(op, f"p{p}", ctor(p), [x], smoke=True)
    yield module_case(op, "asym", ctor(_asym(nd)), [x])
    yield module_case(op, f"p{p}_b2_c13", ctor(p), [rand(2, 13, *SPATIAL[nd])])
    yield module_case(op, f"p{p}_unbatched", ctor(p), [rand(3, *SPATIAL[nd])], tags={"unbatched"})
    yield module_case(op, "p1_noncontiguous", ctor(1), [rand(4, 1, *SPATIAL[nd])],
                      pre="x0 = x0.transpose(0, 1)")
    yield module_case(op, "p0", ctor(0), [x])
    if crop:
        yield module_case(op, "crop", ctor(_crop(nd)), [x])


@family("nn.ConstantPad1d", "nn.ConstantPad2d", "nn.ConstantPad3d")
def constant_pad():
    for nd in (1, 2, 3):
        op = f"nn.ConstantPad{nd}d"
        yield from _pad_cases(op, nd, value=", 0.5", crop=True)
        yield module_case(op, "p1_neg_value", f"{op}(1, -2.0)", [rand(1, 3, *SPATIAL[nd])])


@family("nn.ZeroPad2d")
def zero_pad():
    yield from _pad_cases("nn.ZeroPad2d", 2, crop=True)


@family("nn.ReflectionPad1d", "nn.ReflectionPad2d")
def reflection_pad():
    # reflection needs padding < the input extent; SPATIAL keeps every extent >= 3
    for nd in (1, 2):
        yield from _pad_cases(f"nn.ReflectionPad{nd}d", nd, small=True)


@family("nn.ReplicationPad1d", "nn.ReplicationPad2d", "nn.ReplicationPad3d")
def replication_pad():
    for nd in (1, 2, 3):
        yield from _pad_cases(f"nn.ReplicationPad{nd}d", nd)
