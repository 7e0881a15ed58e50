"""Fully connected layers and matrix products: two operations per multiply-accumulate."""
from __future__ import annotations

from ..registry import Count, moved, numel, output, rule


@rule("nn.Linear", "F.linear")
def _linear(op) -> Count:
    features = op.attrs["weight"].shape[1] if "weight" in op.attrs else op.input("weight", 1).shape[1]
    bias = "bias" in op.attrs or "bias" in op.inputnames
    return Count(output(op) * (2 * features + bias), moved(op))


@rule("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm")
def _matmul(op) -> Count:
    depth = op.inputs[0].shape[-1] if op.inputs[0].shape else 1
    return Count(2 * depth * output(op), moved(op))
