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


@rule("Int", "Float")
def _cast_scalar(name, kw):
    return int(kw["a"]) if name == "Int" else float(kw["a"])
