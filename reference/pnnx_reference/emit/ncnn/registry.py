"""pnnx operator type -> lowering function. Each family module registers its operators with
`@lowers(...)`; a lowering receives the context and the operator and emits ncnn layers."""
from __future__ import annotations

from typing import Callable

LOWERINGS: dict[str, Callable] = {}


def lowers(*op_types: str):
    def register(fn: Callable) -> Callable:
        for op_type in op_types:
            if op_type in LOWERINGS:
                raise ValueError(f"{op_type} registered twice")
            LOWERINGS[op_type] = fn
        return fn

    return register


def lowering_for(op_type: str) -> Callable | None:
    return LOWERINGS.get(op_type)
