"""Normalisations whose aten schema orders arguments differently from F.*."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("batch_norm")
def _batch_norm(name, kw):
    return F.batch_norm(kw["input"], kw["running_mean"], kw["running_var"], kw["weight"], kw["bias"],
                        kw["training"], kw["momentum"], kw["eps"])


@rule("instance_norm")
def _instance_norm(name, kw):
    return F.instance_norm(kw["input"], kw["running_mean"], kw["running_var"], kw["weight"], kw["bias"],
                           kw["use_input_stats"], kw["momentum"], kw["eps"])


@rule("layer_norm")
def _layer_norm(name, kw):
    return F.layer_norm(kw["input"], kw["normalized_shape"], kw["weight"], kw["bias"], kw["eps"])


@rule("group_norm")
def _group_norm(name, kw):
    return F.group_norm(kw["input"], kw["num_groups"], kw["weight"], kw["bias"], kw["eps"])
