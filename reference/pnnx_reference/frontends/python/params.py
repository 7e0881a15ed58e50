"""Python values -> pnnx parameter values (None, bool, int, float, str, lists, complex)."""
from __future__ import annotations

import enum

import torch

from ...errors import NotAParam
from ...ir import QUANTIZED_STORAGE, DTYPES, dtype_suffix_of


# pnnx.param separates tokens by whitespace, so no parameter string can hold any. Where the
# operator ignores whitespace the string is written without it; elsewhere it is refused.
WHITESPACE_FREE = {("torch.einsum", "equation")}   # torch.einsum ignores spaces in the equation


def _has_space(text: str) -> bool:
    return any(c.isspace() for c in text)


def without_whitespace(op_type: str, key: str, value):
    """`value` as pnnx.param can hold it; raises NotAParam for a string it cannot."""
    strings = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
        if isinstance(value, (list, tuple)) else []
    if not any(_has_space(t) for t in strings):
        return value
    if (op_type, key) in WHITESPACE_FREE and isinstance(value, str):
        return "".join(value.split())
    raise NotAParam(f"{value!r} contains whitespace, which pnnx.param cannot hold")


# adaptive pooling's `output_size=(None, 3)` keeps the input size where None: upstream writes
# it as 0 (the generator turns 0 back into None)
NONE_AS_ZERO = {"output_size"}


def to_param(value, key: str | None = None):
    if key in NONE_AS_ZERO and isinstance(value, (list, tuple)):
        value = [0 if v is None else v for v in value]
    if value is None or isinstance(value, (bool, str, complex)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, torch.dtype):
        return str(value) if str(value) in QUANTIZED_STORAGE else DTYPES[dtype_suffix_of(value)].torch
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, (list, tuple, torch.Size)):
        items = [to_param(v) for v in value]
        if any(isinstance(v, (list, type(None))) for v in items):
            raise NotAParam(f"nested or None list {value!r}")
        return items
    raise NotAParam(f"{type(value).__name__} is not a parameter value")
