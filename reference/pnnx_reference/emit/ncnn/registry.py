"""The ncnn lowering table: pnnx operator type -> lowering `fn(ctx, op)`, which emits ncnn
layers through the Context (see context.py) or raises `errors.Unsupported`.

Traits a lowering declares on `LOWERINGS.register(...)`:
  batchless=True      it reads every operand's layout from its shape (no (N=1, C, ...)
                      assumption), so it also lowers a graph whose inputs lead with a batch
                      other than 1 (see context.is_batchless);
  bool_operands=True  it reads bool operands as the float 0/1 blobs ncnn carries them as.

The family modules under `families/` register themselves when that package is imported."""
from __future__ import annotations

from ...registry import Registry

LOWERINGS = Registry("ncnn", "pnnx operator type -> fn(ctx, op) emitting ncnn layers")
