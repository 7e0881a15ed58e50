"""Matrix products whose Python form differs from the aten schema."""
from __future__ import annotations

import torch

from ..registry import rule


@rule("einsum")
def _einsum(name, kw):
    return torch.einsum(kw["equation"], *kw["tensors"])


@rule("addmm", produces=("torch.addmm",))
def _addmm(name, kw):
    return torch.addmm(kw["self"], kw["mat1"], kw["mat2"], beta=kw.get("beta", 1), alpha=kw.get("alpha", 1))
