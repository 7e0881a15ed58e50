"""The ONNX lowering tables: pnnx operator type -> lowering `fn(ctx, op)`, which emits ONNX nodes
through the builder (see builder.py) so that op's outputs end up as ONNX values named after
the pnnx operands, or raises `errors.Unsupported`.

An operator with a complex operand is looked up in a table of its own (COMPLEX_LOWERINGS): a
complex tensor is carried as a real one with a trailing axis of 2 (real, imaginary), which an
ordinary lowering would silently treat as data.

Traits a lowering declares on `LOWERINGS.register(...)` (the ncnn table's names, see
unbatched.py): `unbatched_rank=k` (an int or fn(op)): the rank of torch's unbatched input 0,
lowered as a batch of one around the batched lowering; `batched_inputs=k`: how many leading
inputs of input 0's rank get that batch axis too (default 1); `unbatched_params={...}`: params
the batched lowering sees instead (attention layers: batch_first=True).

The family modules under `families/` register themselves when that package is imported."""
from __future__ import annotations

from ...registry import Registry

LOWERINGS = Registry("pnnx.onnx", "pnnx operator type -> fn(ctx, op) emitting ONNX nodes")
COMPLEX_LOWERINGS = Registry("pnnx.onnx-complex",
                             "pnnx operator type with a complex operand -> fn(ctx, op) on (..., 2) real tensors")
