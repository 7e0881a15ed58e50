"""The lowering registry: one function per pnnx operator type, registered by family modules.

A lowering is `fn(b: OnnxBuilder, op: Operator) -> None`; it emits ONNX nodes through the
builder so that op's outputs end up as ONNX values named after the pnnx operands.
"""
from __future__ import annotations

from typing import Callable

LOWERINGS: dict[str, Callable] = {}


class Unsupported(Exception):
    """Raised by a lowering: this operator (with these params) has no ONNX form here."""


def lowering(*op_types: str):
    def register(fn: Callable) -> Callable:
        for t in op_types:
            if t in LOWERINGS:
                raise ValueError(f"two ONNX lowerings for {t}")
            LOWERINGS[t] = fn
        return fn

    return register


def lookup(op_type: str) -> Callable | None:
    from . import families  # noqa: F401  (importing registers every family)

    return LOWERINGS.get(op_type)
