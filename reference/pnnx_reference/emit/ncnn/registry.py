"""The ncnn lowering table: pnnx operator type -> lowering `fn(ctx, op)`, which emits ncnn
layers through the Context (see context.py) or raises `errors.Unsupported`.

Traits a lowering declares on `LOWERINGS.register(...)`:
  batch=POLICY        how ncnn may carry the batch of its operands as the Mat batch (each
                      layer then runs once per sample); one of the policies below, described
                      in batch.py (default LEADING);
  unbatched_rank=k    FIRST: the rank of the operator's unbatched input (an int or fn(op);
                      None: the input always has a batch axis);
  batched_inputs=k    FIRST: how many leading inputs carry the batch (default 1);
  sequence_axes=fn    SEQUENCE: fn(ctx, op) -> (axis per input, axis per output);
  bool_operands=True  it reads bool operands as the float 0/1 blobs ncnn carries them as.

The family modules under `families/` register themselves when that package is imported."""
from __future__ import annotations

from ...registry import Registry

LOWERINGS = Registry("ncnn", "pnnx operator type -> fn(ctx, op) emitting ncnn layers")

# batch policies (batch.py)
FIRST, LEADING, ANY, RESHAPE, PERMUTE, SEQUENCE = "first", "leading", "any", "reshape", "permute", "sequence"
