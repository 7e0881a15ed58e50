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
  bool_operands=True  it reads bool operands as the float 0/1 blobs ncnn carries them as;
  int_operands=True   it computes exactly on integer operands carried as their float values
                      (lower.py: exact below 2^24; Embed's int32-bit indices are refused).

The family modules under `families/` register themselves when that package is imported."""
from __future__ import annotations

from ...registry import Registry

LOWERINGS = Registry("ncnn", "pnnx operator type -> fn(ctx, op) emitting ncnn layers")

# the traits of a lowering that only moves values (reshapes, permutes, tiles, concatenations):
# exact on whatever a blob carries
MOVES_DATA = {"bool_operands": True, "int_operands": True}

# batch policies (batch.py)
FIRST, LEADING, ANY, RESHAPE, PERMUTE, SEQUENCE = "first", "leading", "any", "reshape", "permute", "sequence"
