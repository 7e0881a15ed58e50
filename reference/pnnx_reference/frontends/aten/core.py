"""Rules for the aten operators only an exported program has: shape queries of its FX graph
and the core-ATen forms `run_decompositions()` leaves (`native_layer_norm`, `addmm`,
`_softmax`, ...), each back to the Python-API call users write. An operator with several
results that the Python call does not give (saved statistics) returns only the first; the
frontend marks the rest unavailable."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from . import RULES

rule = RULES.register


@rule("sym_size", produces=())  # the tracer's size: reshape shapes stay `size(@0,1)`
def _sym_size(name, kw):
    return kw["self"].size(kw["dim"])


@rule("sym_numel", produces=())
def _sym_numel(name, kw):
    return kw["self"].numel()


@rule("alias", "lift_fresh_copy", "lift_fresh", produces=())  # the same values
def _same_values(name, kw):
    return kw["self"]


@rule("_to_copy", produces=("Tensor.to",))
def _to_copy(name, kw):
    dtype = kw.get("dtype")
    return kw["self"].to(dtype) if dtype is not None and dtype != kw["self"].dtype else kw["self"]


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


@rule("_softmax", "_log_softmax", produces=("F.softmax", "F.log_softmax"))
def _softmax(name, kw):
    fn = F.softmax if name == "_softmax" else F.log_softmax
    return fn(kw["self"], kw["dim"])


@rule("addmm", produces=("torch.addmm",))
def _addmm(name, kw):
    return torch.addmm(kw["self"], kw["mat1"], kw["mat2"], beta=kw.get("beta", 1), alpha=kw.get("alpha", 1))


@rule("max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
      produces=("F.max_pool1d", "F.max_pool2d", "F.max_pool3d"))
def _max_pool_with_indices(name, kw):
    """The frontend says `return_indices` when the graph reads them; else they are left
    unavailable (a graph reading them anyway is refused, not miscomputed)."""
    fn = getattr(F, name[:len("max_poolNd")])
    return fn(kw["self"], kw["kernel_size"], kw["stride"] or None, kw["padding"], kw["dilation"],
              kw["ceil_mode"], return_indices=kw.get("return_indices", False))


@rule("view", produces=("Tensor.view", "Tensor.reshape"))
def _view(name, kw):
    """A decomposed graph views tensors that are contiguous only in its own memory plan."""
    x = kw["self"]
    return x.view(kw["size"]) if x.is_contiguous() else x.reshape(kw["size"])


@rule("_adaptive_avg_pool1d", "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
      produces=("F.adaptive_avg_pool1d", "F.adaptive_avg_pool2d", "F.adaptive_avg_pool3d"))
def _adaptive_avg_pool(name, kw):
    return getattr(F, name[1:])(kw["self"], kw["output_size"])


@rule("_unsafe_view", produces=("Tensor.view", "Tensor.reshape"))
def _unsafe_view(name, kw):
    return _view(name, kw)


@rule("scalar_tensor", produces=("torch.tensor",))
def _scalar_tensor(name, kw):
    return torch.tensor(kw["s"], dtype=kw.get("dtype") or torch.float32)


@rule("index", produces=("Tensor.index",))
def _index(name, kw):
    """`x[idx]`, `x[:, idx]`: aten lists one optional index tensor per leading dim."""
    return kw["self"][tuple(slice(None) if i is None else i for i in kw["indices"])]


@rule("copy", produces=("Tensor.copy",))
def _copy(name, kw):
    """The functional copy: `self`'s shape and dtype, `src`'s values."""
    return kw["self"].clone().copy_(kw["src"])


@rule("max_unpool2d", "max_unpool3d", produces=("F.max_unpool2d", "F.max_unpool3d"))
def _max_unpool(name, kw):
    """aten keeps only the output size; kernel and stride are its ratio to the input's."""
    spatial = len(kw["output_size"])
    kernel = [o // i for o, i in zip(kw["output_size"], kw["self"].shape[-spatial:])]
    fn = F.max_unpool2d if name == "max_unpool2d" else F.max_unpool3d
    return fn(kw["self"], kw["indices"], kernel, output_size=list(kw["output_size"]))

