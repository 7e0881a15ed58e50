"""Matrix products: two operations per multiply-accumulate."""
from __future__ import annotations

from ..registry import Count, moved, numel, output, rule


@rule("torch.matmul", "Tensor.matmul", "torch.mm", "Tensor.mm", "torch.bmm", "Tensor.bmm")
def _matmul(op) -> Count:
    depth = op.inputs[0].shape[-1] if op.inputs[0].shape else 1
    return Count(2 * depth * output(op), moved(op))


@rule("torch.addmm", "Tensor.addmm", "torch.baddbmm", "Tensor.baddbmm")
def _add_matmul(op) -> Count:
    """beta * input + alpha * (mat1 @ mat2): two per multiply-accumulate, one per output for
    the add and one for each scale other than 1; with beta=0 neither the add nor the read of
    input counts (as upstream)."""
    depth = op.inputs[1].shape[-1] if len(op.inputs) > 1 and op.inputs[1].shape else 1
    alpha, beta = float(op.params.get("alpha", 1)), float(op.params.get("beta", 1))
    per_output = 2 * depth + (alpha != 1.0) + (beta != 0.0) + (beta not in (0.0, 1.0))
    memory = moved(op) - (numel(op.inputs[0]) if beta == 0.0 else 0)
    return Count(output(op) * per_output, memory)
