"""The lowering registry: one function per pnnx operator type, registered by family modules.

A lowering is `fn(b: OnnxBuilder, op: Operator) -> None`; it emits ONNX nodes through the
builder so that op's outputs end up as ONNX values named after the pnnx operands.

An operator with a complex operand is looked up in a registry of its own (`complex_lowering`):
a complex tensor is carried as a real one with a trailing axis of 2 (real, imaginary), which
an ordinary lowering would silently treat as data.
"""
from __future__ import annotations

from typing import Callable

LOWERINGS: dict[str, Callable] = {}
COMPLEX_LOWERINGS: dict[str, Callable] = {}


class Unsupported(Exception):
    """Raised by a lowering: this operator (with these params) has no ONNX form here."""


def _registrar(table: dict[str, Callable], op_types: tuple[str, ...]):
    def register(fn: Callable) -> Callable:
        for t in op_types:
            if t in table:
                raise ValueError(f"two ONNX lowerings for {t}")
            table[t] = fn
        return fn

    return register


def lowering(*op_types: str):
    return _registrar(LOWERINGS, op_types)


def complex_lowering(*op_types: str):
    """For operators with a complex input or output (trailing-2 real tensors in ONNX)."""
    return _registrar(COMPLEX_LOWERINGS, op_types)


def lookup(op_type: str, complex_operands: bool = False) -> Callable | None:
    from . import families  # noqa: F401  (importing registers every family)

    return (COMPLEX_LOWERINGS if complex_operands else LOWERINGS).get(op_type)
