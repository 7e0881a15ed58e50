"""Shared helpers for the F / Tensor / torch families, on top of `builders.call_case`.

A case is written as a forward body over inputs `x0, x1, ...` (setup lines, then the
result expression last), optional parameters, and input specs. Generic variant sets
(`unary`, `binary`, `reduce`) cover the axes every elementwise op / reduction shares.
The first case of each family is tagged smoke unless a family marks its own.
"""
from __future__ import annotations

import textwrap
from typing import Iterable, Sequence

from .. import tables
from ..builders import Param, bools, call_case, ints, rand  # noqa: F401  (re-exported)
from ..case import TIER_SMOKE, Case, InputSpec, ToleranceHint

f = rand          # f(*shape, low=-1, high=1, dtype="f32")
i = ints          # i(*shape, low=0, high=10, dtype="i64")
b = bools


def _auto_tags(op: str, inputs: Sequence[InputSpec], body: str) -> set[str]:
    tags = set()
    if any(w in body for w in (".transpose(", ".permute(", "::2]", ".t()", ".mT")):
        tags.add("noncontiguous")
    if any(s.dtype in {"c64", "c128"} for s in inputs) or "complex" in body or "fft" in op:
        tags.add("complex")
    try:
        if tables.row(op).ours:
            tags.add("ours")
    except KeyError:
        pass
    return tags


def case(op: str, variant: str, body: str, inputs: Sequence[InputSpec], *, params: dict | None = None,
         tags: Iterable[str] = (), reasons: dict | None = None, tol: tuple | None = None,
         smoke: bool = False, init: str | None = None) -> Case:
    """One case `op/variant` whose forward runs `body` (lines; the last is the result).
    `tol=(atol, rtol, reason)` only where the math needs it."""
    lines = textwrap.dedent(body).strip().splitlines()
    call = lines[-1].strip()
    if call.startswith("return "):
        call = call[len("return "):]
    all_tags = set(tags) | _auto_tags(op, inputs, body)
    return call_case(op, variant, call, list(inputs), params=params, pre=lines[:-1] or None,
                     init=init, smoke=smoke, tags=all_tags, reasons=reasons,
                     tolerance=ToleranceHint(*tol) if tol else None)


def smoke(cases: Iterable[Case], count: int = 1) -> list[Case]:
    """Tag the first `count` cases smoke (unless some case already is)."""
    cases = list(cases)
    if any(TIER_SMOKE in c.tags for c in cases):
        return cases
    out = []
    for k, c in enumerate(cases):
        if k < count:
            c = Case(id=c.id, op=c.op, source=c.source, inputs=c.inputs, tags=c.tags | {TIER_SMOKE},
                     reasons=c.reasons, tolerance=c.tolerance, inputs2=c.inputs2)
        out.append(c)
    return out


def table(op: str, rows: Iterable[tuple], **common) -> list[Case]:
    """Cases from (variant, body, inputs[, extra kwargs]) rows, first one smoke."""
    out = []
    for row in rows:
        variant, body, inputs = row[:3]
        extra = {**common, **(row[3] if len(row) > 3 else {})}
        out.append(case(op, variant, body, inputs, **extra))
    return smoke(out)


# --- generic variant sets -----------------------------------------------------------------
def unary(op: str, call: str, lo: float = -1.0, hi: float = 1.0, *, with_ints: bool = False,
          extra: Sequence[tuple] = (), **common) -> list[Case]:
    """Elementwise unary op; `call` uses {x} for the input, e.g. 'torch.sin({x})'."""
    rows = [
        ("r4_c3", call.format(x="x0"), [f(1, 3, 8, 8, low=lo, high=hi)]),
        ("r1_n13", call.format(x="x0"), [f(13, low=lo, high=hi)]),
        ("r3_b2_c16", call.format(x="x0"), [f(2, 16, 9, low=lo, high=hi)]),
        ("r4_noncontig", f"x = x0.transpose(1, 3)\nreturn {call.format(x='x')}", [f(1, 4, 5, 12, low=lo, high=hi)]),
        ("r0_scalar", call.format(x="x0"), [f(low=lo, high=hi)]),
    ]
    if with_ints:
        rows.append(("i32", call.format(x="x0"), [i(2, 12, low=-10, high=10, dtype="i32")]))
    return table(op, rows + list(extra), **common)


def binary(op: str, call: str, lo: float = -1.0, hi: float = 1.0, *, with_ints: bool = False,
           scalar: str | None = "2.5", lo2: float | None = None, extra: Sequence[tuple] = (),
           **common) -> list[Case]:
    """Elementwise binary op; `call` uses {a} and {b}."""
    lo2 = lo if lo2 is None else lo2
    rows = [
        ("same_r4", call.format(a="x0", b="x1"), [f(1, 3, 8, 8, low=lo, high=hi), f(1, 3, 8, 8, low=lo2, high=hi)]),
        ("bcast_c", call.format(a="x0", b="x1"), [f(2, 13, 4, 5, low=lo, high=hi), f(1, 13, 1, 1, low=lo2, high=hi)]),
        ("bcast_rank", call.format(a="x0", b="x1"), [f(4, 6, 8, low=lo, high=hi), f(8, low=lo2, high=hi)]),
        ("r2_noncontig", call.format(a="x0.t()", b="x1"), [f(12, 7, low=lo, high=hi), f(7, 12, low=lo2, high=hi)]),
    ]
    if scalar is not None:
        rows.append(("scalar", call.format(a="x0", b=scalar), [f(2, 4, 16, low=lo, high=hi)]))
    if with_ints:
        rows.append(("i32", call.format(a="x0", b="x1"),
                     [i(3, 8, low=1, high=20, dtype="i32"), i(3, 8, low=1, high=7, dtype="i32")]))
    return table(op, rows + list(extra), **common)


def reduce(op: str, call: str, lo: float = -1.0, hi: float = 1.0, *, keepdim: bool = True,
           tuple_dims: bool = True, full: bool = True, extra: Sequence[tuple] = (), **common) -> list[Case]:
    """A reduction; `call` uses {x} and {args}, e.g. 'torch.sum({x}, {args})' or '{x}.sum({args})'."""
    def c(args, x="x0"):
        return call.format(x=x, args=args).replace(", )", ")")
    rows = [
        ("d1", c("dim=1"), [f(2, 13, 6, low=lo, high=hi)]),
        ("dneg1", c("dim=-1"), [f(1, 4, 5, 16, low=lo, high=hi)]),
        ("r1_d0", c("dim=0"), [f(12, low=lo, high=hi)]),
    ]
    if keepdim:
        rows.append(("d2_keepdim", c("dim=2, keepdim=True"), [f(1, 3, 8, 8, low=lo, high=hi)]))
    if tuple_dims:
        rows.append(("d23_tuple", c("dim=(2, 3)"), [f(2, 8, 5, 7, low=lo, high=hi)]))
        rows.append(("dneg_tuple_keepdim", c("dim=(-1, 1), keepdim=True"), [f(1, 3, 4, 9, low=lo, high=hi)]))
    if full:
        rows.append(("all", c(""), [f(3, 4, 5, low=lo, high=hi)]))
    rows.append(("noncontig_d1", c("dim=1", x="x0.transpose(1, 2)"), [f(2, 4, 6, low=lo, high=hi)]))
    return table(op, rows + list(extra), **common)
