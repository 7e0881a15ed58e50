"""Calls that pass their input through in eval mode (dropout, copies)."""
from __future__ import annotations

import torch.nn.functional as F

from ..registry import rule


@rule("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
      "dropout_", "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_",
      produces=("F.dropout", "F.dropout2d", "F.alpha_dropout", "F.feature_alpha_dropout"))
def _dropout(name, kw):
    """The in-place forms (`F.dropout(x, inplace=True)`) name their tensor `self`."""
    fn = {"dropout": F.dropout, "feature_dropout": F.dropout2d, "alpha_dropout": F.alpha_dropout,
          "feature_alpha_dropout": F.feature_alpha_dropout}[name.rstrip("_")]
    inplace = {"inplace": True} if name.endswith("_") else {}
    return fn(kw["input"] if "input" in kw else kw["self"], kw["p"], kw["train"], **inplace)


@rule("contiguous", "detach", "clone")
def _identity_method(name, kw):
    return getattr(kw["self"], name)()


@rule("copy_")
def _copy_into(name, kw):
    """`y.copy_(x)`, and `y[:, 1:3] = x` (a slice, then copy_ into it): Tensor.copy on the
    target, which the capture turns into Tensor.slice_copy when the target is a slice."""
    return kw["self"].copy_(kw["src"])


@rule("alias", "lift_fresh_copy", "lift_fresh", produces=())  # the same values
def _same_values(name, kw):
    return kw["self"]
