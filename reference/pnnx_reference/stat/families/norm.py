"""Normalisations: statistics and normalising per element, one more per affine weight."""
from __future__ import annotations


from ..registry import Count, moved, numel, output, rule


def _affine(op) -> int:
    present = set(op.attrs) | set(op.inputnames)
    return ("weight" in present) + ("bias" in present)


@rule("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d", "F.batch_norm")
def _batch_norm(op) -> Count:
    return Count(output(op) * (2 + 2 * ("weight" in op.attrs or "weight" in op.inputnames)), moved(op))


@rule("nn.LayerNorm", "F.layer_norm", "nn.GroupNorm", "F.group_norm", "nn.InstanceNorm1d",
      "nn.InstanceNorm2d", "nn.InstanceNorm3d", "F.instance_norm")
def _mean_variance_norm(op) -> Count:
    if "running_mean" in op.attrs:  # an instance norm tracking running stats normalises as a batch norm
        return _batch_norm(op)
    return Count(output(op) * (7 + _affine(op)), moved(op))


@rule("nn.RMSNorm", "F.rms_norm")
def _rms_norm(op) -> Count:
    return Count(output(op) * (5 + _affine(op)), moved(op))


@rule("nn.LocalResponseNorm")
def _local_response_norm_module(op) -> Count:
    """Upstream counts no arithmetic for the module form."""
    return Count(0, moved(op))


@rule("F.local_response_norm")
def _local_response_norm(op) -> Count:
    """Squares, a window sum of `size`, scale, power, divide; three intermediates written."""
    return Count(output(op) * (int(op.params["size"]) + 7), 5 * output(op))


# operations per element (the p-th power, its sum, the division) and per norm (its root and
# the clamp to eps), by p
_NORM_COSTS = {1: (3, 1), 2: (3, 5)}


@rule("F.normalize")
def _normalize(op) -> Count:
    """x / max(||x||_p, eps) along `dim`; the powers and the norms are written out too."""
    x = op.inputs[0]
    dim = int(op.params.get("dim", 1)) % max(len(x.shape), 1)
    elements = numel(x)
    norms = elements // x.shape[dim] if x.shape else 1
    per_element, per_norm = _NORM_COSTS.get(_p(op), (7, 5))
    return Count(per_element * elements + per_norm * norms, 4 * elements + 2 * norms)


def _p(op):
    p = op.params.get("p", 2)
    return int(p) if float(p).is_integer() else p
