"""Matrix products whose Python form differs from the aten schema."""
from __future__ import annotations

import torch

from ..registry import rule


@rule("einsum")
def _einsum(name, kw):
    return torch.einsum(kw["equation"], *kw["tensors"])
