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


# The core-ATen forms a decomposed (.pt2) graph keeps; their saved statistics are results the
# Python call does not give (the export frontend marks them unavailable).
@rule("native_layer_norm", produces=("F.layer_norm",))
def _native_layer_norm(name, kw):
    return F.layer_norm(kw["input"], kw["normalized_shape"], kw["weight"], kw["bias"], kw["eps"])


@rule("_native_batch_norm_legit_no_training", produces=("F.batch_norm",))
def _batch_norm_inference(name, kw):
    return F.batch_norm(kw["input"], kw["running_mean"], kw["running_var"], kw["weight"], kw["bias"],
                        False, kw["momentum"], kw["eps"])


@rule("native_group_norm", produces=("F.group_norm",))
def _native_group_norm(name, kw):
    return F.group_norm(kw["input"], kw["group"], kw["weight"], kw["bias"], kw["eps"])
