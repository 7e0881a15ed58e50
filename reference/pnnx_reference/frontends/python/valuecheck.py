"""Where the capture meets a value-dependent conversion (valuedep.py has the tables and the
policy): a call handing the value of a tensor computed from the inputs to Python, a read of
the shape of a tensor whose shape depends on the input values, a slice bound that is such a
tensor; and the calls whose output shape their inputs' values decide."""
from __future__ import annotations

import torch

from . import valuedep
from .recorder import Recorder, tensors_in

_VALUE_FUNCTIONS = (torch.equal, torch.allclose, torch.is_nonzero)


def is_branch(rec: Recorder, func, args) -> bool:
    """`int(t)`, `if t:`, `t.item()`, ... of a tensor computed from the inputs; `len(t)`,
    `t.numel()` of one whose shape depends on the input values. True for a two-way one
    (`if t:`, `v in t`), which the policy decides as a branch (`branch`)."""
    name = getattr(func, "__name__", "")
    tensor_method = (getattr(func, "__qualname__", "") or "").startswith(("TensorBase.", "Tensor."))
    if name in valuedep.CONVERSIONS and (tensor_method or func in _VALUE_FUNCTIONS):
        if rec.any_dynamic(args):
            if name in valuedep.BRANCHES:
                return True
            rec.policy.conversion(f"{valuedep.CONVERSIONS[name]} of a tensor computed from the inputs")
    elif name in valuedep.SHAPE_READS and (tensor_method or func is torch.unbind) and args \
            and rec.is_value_shaped(args[0]):
        rec.policy.conversion(f"{valuedep.SHAPE_READS[name]} of a tensor whose shape depends on "
                              f"the input values")
    return False


def branch(rec: Recorder, func, args, kwargs) -> bool:
    """The outcome the policy takes at a branch `is_branch` found."""
    return rec.policy.branch(f"{valuedep.CONVERSIONS[func.__name__]} of a tensor computed from the inputs",
                             bool(func(*args, **kwargs)))


def check_slice_bounds(rec: Recorder, index) -> None:
    """`x[:, :t]` with `t` a tensor: the slice takes `t`'s value as a Python int."""
    items = index if isinstance(index, tuple) else (index,)
    bounds = [b for i in items if isinstance(i, slice) for b in (i.start, i.stop, i.step)]
    if rec.any_dynamic(bounds):
        rec.policy.conversion("a slice bound taken from a tensor computed from the inputs")


def note_value_shape(rec: Recorder, op_type: str, args, kwargs, result) -> None:
    """A call whose inputs' values decide its output shape (`torch.nonzero(x)`)."""
    if rec.any_dynamic(valuedep.shape_deciders(op_type, args, kwargs)):
        rec.value_shaped.update(rec.operand_of(t) for t in tensors_in(result))
