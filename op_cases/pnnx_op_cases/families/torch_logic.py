"""torch.*: the `logic` family (emit/*/families/logic.py): bitwise_and, bitwise_left_shift,
bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, eq, ge, gt, le, logical_and,
logical_not, logical_or, logical_xor, lt, ne, where."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, binary, f, i, table


def _binary(op: str, call: str, lo=-1.0, hi=1.0, ints=False, scalar="0.5", lo2=None, extra=()):
    return binary(op, call, lo, hi, with_ints=ints, scalar=scalar, lo2=lo2, extra=extra)


@family("torch.eq", "torch.ne", "torch.ge", "torch.gt", "torch.le", "torch.lt")
def comparisons():
    for name in ("eq", "ne", "ge", "gt", "le", "lt"):
        yield from _binary(f"torch.{name}", f"torch.{name}({{a}}, {{b}})", ints=True, extra=[
            ("rounded_eq", f"torch.{name}(torch.round(x0 * 2), torch.round(x1 * 2))", [f(4, 6), f(4, 6)]),
            ("bool", f"torch.{name}(x0, x1)", [b(3, 4), b(3, 4)])])


def _bitwise(name: str, shift: bool):
    hi2 = 4 if shift else 64
    return table(f"torch.{name}", [
        ("i32_same", f"torch.{name}(x0, x1)", [i(3, 8, high=64, dtype="i32"), i(3, 8, high=hi2, dtype="i32")]),
        ("i64_bcast", f"torch.{name}(x0, x1)", [i(2, 4, 6, high=100), i(6, high=hi2)]),
        ("scalar", f"torch.{name}(x0, 2)", [i(4, 13, high=200)]),
        ("u8", f"torch.{name}(x0, x1)", [i(16, high=60, dtype="u8"), i(16, high=hi2 if shift else 250, dtype="u8")]),
        ("i64_r4", f"torch.{name}(x0, x1)", [i(1, 3, 4, 4, high=1000), i(1, 3, 4, 4, high=hi2)]),
    ] + ([] if shift else [("bool", f"torch.{name}(x0, x1)", [b(3, 4), b(3, 4)])]))


@family("torch.bitwise_and", "torch.bitwise_or", "torch.bitwise_xor")
def bitwise_logic():
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        yield from _bitwise(name, False)


@family("torch.bitwise_left_shift", "torch.bitwise_right_shift")
def bitwise_shifts():
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        yield from _bitwise(name, True)


family("torch.bitwise_not")(lambda: table("torch.bitwise_not", [
    ("i32", "torch.bitwise_not(x0)", [i(3, 8, low=-50, high=50, dtype="i32")]),
    ("i64", "torch.bitwise_not(x0)", [i(2, 13, high=1000)]),
    ("bool", "torch.bitwise_not(x0)", [b(4, 4)]),
    ("u8", "torch.bitwise_not(x0)", [i(16, high=255, dtype="u8")]),
    ("i8_r4", "torch.bitwise_not(x0)", [i(1, 3, 4, 4, low=-100, high=100, dtype="i8")]),
]))


def _logical(name: str):
    return table(f"torch.{name}", [
        ("bool", f"torch.{name}(x0, x1)", [b(3, 8), b(3, 8)]),
        ("bool_bcast", f"torch.{name}(x0, x1)", [b(2, 4, 6), b(6)]),
        ("float", f"torch.{name}(x0, x1)", [f(4, 5, low=-1, high=2), f(4, 5, low=-1, high=2)]),
        ("int", f"torch.{name}(x0, x1)", [i(3, 4, high=3), i(3, 4, high=3)]),
        ("from_compare", f"torch.{name}(x0 > 0, x1 < 0.5)", [f(13), f(13)]),
    ])


@family("torch.logical_and", "torch.logical_or", "torch.logical_xor")
def logical_binary():
    for name in ("logical_and", "logical_or", "logical_xor"):
        yield from _logical(name)


family("torch.logical_not")(lambda: table("torch.logical_not", [
    ("bool", "torch.logical_not(x0)", [b(3, 8)]),
    ("float", "torch.logical_not(x0)", [f(4, 5, low=-1, high=2)]),
    ("int", "torch.logical_not(x0)", [i(13, high=3)]),
    ("from_compare", "torch.logical_not(x0 > 0)", [f(2, 3, 4)]),
    ("bool_r4", "torch.logical_not(x0)", [b(1, 3, 8, 8)]),
]))


@family("torch.where")
def _where():
    return table("torch.where", [
        ("tensors", "torch.where(x0, x1, x2)", [b(3, 8), f(3, 8), f(3, 8)]),
        ("from_compare", "torch.where(x0 > 0, x0, x1)", [f(1, 3, 8, 8), f(1, 3, 8, 8)]),
        ("scalar_other", "torch.where(x0 > 0, x0, 0.0)", [f(2, 13)]),
        ("scalars", "torch.where(x0 > 0.5, 1.0, -1.0)", [f(4, 4)]),
        ("bcast", "torch.where(x0, x1, x2)", [b(1, 5), f(4, 1), f(5)]),
        ("int", "torch.where(x0 > 3, x0, x1)", [i(3, 4), i(3, 4)]),
    ])
