"""Reductions: one operation per input element (a mean also divides each result); the
statistics (var, std, logsumexp, norm) as upstream counts them."""
from __future__ import annotations

from ..registry import Count, moved, numel, output, rule


def _read(op) -> int:
    return numel(op.inputs[0])


@rule("torch.sum", "Tensor.sum")
def _sum(op) -> Count:
    return Count(_read(op), moved(op))


@rule("torch.mean", "Tensor.mean")
def _mean(op) -> Count:
    return Count(_read(op) + output(op), moved(op))


@rule("torch.max", "Tensor.max", "torch.min", "Tensor.min", "torch.amax", "torch.amin")
def _extreme(op) -> Count:
    if len(op.inputs) > 1:  # torch.max(a, b): element-wise
        return Count(output(op), moved(op))
    return Count(_read(op), moved(op))


@rule("torch.argmax", "Tensor.argmax", "torch.argmin", "Tensor.argmin")
def _arg_extreme(op) -> Count:
    return Count(0, moved(op))


# statistics: per input element a subtraction and a square (or an exp) and the sums, per
# result the divisions and roots, as upstream counts them (measured on two shapes each)
@rule("torch.var", "Tensor.var")
def _var(op) -> Count:
    return Count(4 * _read(op) + 2 * output(op), moved(op))


@rule("torch.std", "Tensor.std")
def _std(op) -> Count:
    return Count(4 * _read(op) + 6 * output(op), moved(op))


@rule("torch.logsumexp", "Tensor.logsumexp")
def _logsumexp(op) -> Count:
    return Count(5 * _read(op) + 4 * output(op), moved(op))


@rule("torch.norm", "Tensor.norm")
def _norm(op) -> Count:
    """p=1 and p=inf sum (or compare) magnitudes; p=2 (`fro`, the default) also takes the root
    of each result; any other p raises each magnitude to p (4) as well."""
    p = str(op.params.get("p", "fro")).lower()
    if p in ("1", "1.0", "inf", "-inf"):
        return Count(2 * _read(op), moved(op))
    per_element = 2 if p in ("2", "2.0", "fro", "none") else 6
    return Count(per_element * _read(op) + 4 * output(op), moved(op))
