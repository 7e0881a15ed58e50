"""Dtype conversions and TorchScript's scalar casts."""
from __future__ import annotations

import torch

from ..registry import rule


@rule("to")
def _to(name, kw):
    dtype = kw.get("dtype")
    if isinstance(kw.get("other"), torch.Tensor):
        return kw["self"].to(kw["other"])
    return kw["self"].to(dtype) if dtype is not None else kw["self"]


@rule("Int", "Float", produces=())  # Python scalars, no operator
def _cast_scalar(name, kw):
    return int(kw["a"]) if name == "Int" else float(kw["a"])


@rule("_to_copy", produces=("Tensor.to",))
def _to_copy(name, kw):
    dtype = kw.get("dtype")
    return kw["self"].to(dtype) if dtype is not None and dtype != kw["self"].dtype else kw["self"]


@rule("scalar_tensor", produces=("torch.tensor",))
def _scalar_tensor(name, kw):
    return torch.tensor(kw["s"], dtype=kw.get("dtype") or torch.float32)
