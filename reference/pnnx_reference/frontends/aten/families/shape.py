"""Shape queries."""
from __future__ import annotations

from ..registry import rule


@rule("size")
def _size(name, kw):
    return kw["self"].size(kw["dim"]) if "dim" in kw else kw["self"].size()


@rule("sym_size", produces=())  # the tracer's size: reshape shapes stay `size(@0,1)`
def _sym_size(name, kw):
    return kw["self"].size(kw["dim"])


@rule("sym_numel", produces=())
def _sym_numel(name, kw):
    return kw["self"].numel()


@rule("view", "_unsafe_view", produces=("Tensor.view", "Tensor.reshape"))
def _view(name, kw):
    """A decomposed (.pt2) graph views tensors that are contiguous only in its own memory plan."""
    x = kw["self"]
    return x.view(kw["size"]) if x.is_contiguous() else x.reshape(kw["size"])
