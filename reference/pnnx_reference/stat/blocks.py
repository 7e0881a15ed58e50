"""Counts of the building blocks several families' operators are made of (an attention, a
linear layer, a layer norm), shared so a Transformer layer counts exactly what its parts
would."""
from __future__ import annotations

from .registry import Count


def linear(rows: int, features: int, out_features: int, bias: bool = True) -> Count:
    """`rows` vectors through a (features -> out_features) layer: inputs, outputs, weights."""
    return Count(rows * out_features * (2 * features + bias),
                 rows * (features + out_features) + out_features * (features + bias))


def attention(batch: int, length: int, source: int, embed: int, heads: int, kdim: int, vdim: int,
              bias: bool, extra: int = 0, masked: bool = False) -> Count:
    """nn.MultiheadAttention's arithmetic and memory, without reading its inputs or writing
    its outputs: the four projections' products, per head the two score products, the
    softmax (5 per score) and a mask add; the weights and the score matrix."""
    flops = batch * embed * (length * (2 * embed + bias) * 2 + source * (2 * kdim + bias) + source * (2 * vdim + bias))
    scores = batch * heads * length * (source + extra)
    flops += scores * (4 * (embed // heads) + 5 + masked)
    weights = embed * (embed + kdim + vdim) + embed * embed + bias * 4 * embed
    return Count(flops, weights + scores)


def layer_norm(elements: int, width: int, affine: bool = True) -> Count:
    return Count(elements * (7 + 2 * affine), 2 * elements + 2 * width * affine)


def elementwise(elements: int, operations: int, operands: int) -> Count:
    """`operands` tensors of `elements` read and one written, `operations` per element."""
    return Count(elements * operations, elements * (operands + 1))


def total(*counts: Count) -> Count:
    return Count(sum(c.flops for c in counts), sum(c.memory for c in counts))
