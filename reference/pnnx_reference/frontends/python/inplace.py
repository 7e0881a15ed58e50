"""In-place writes. `y[:, :2].fill_(v)` is `fill` on the slice's value, then `y[:, :2] = <that>`
as a `Tensor.slice_copy`; the names `y[:, :2]` and `y` then stand for the two new values. A
write into a view made by indexing (or by reshaping whole) a tensor that is itself such a
view is written back step by step (`write_chain`), up to the tensor that owns the memory.
A call that writes a weight without saying so (`F.embedding` with max_norm) takes the weight's
value first, and any write tells the weights captured as views of its target (ir.own_views_of)."""
from __future__ import annotations

from typing import Callable

import torch
import torch.nn.functional as F

from ...errors import ConversionError
from ...ir import Operand, own_views_of
from . import indexing, naming
from .recorder import Recorder, iter_values


def on_view(rec: Recorder, func, op_type: str | None, args, kwargs, record: Callable):
    """`view.op_(...)` recorded by `record(func, op_type, args, kwargs, result)` as the
    out-of-place op, then written back into the view's bases."""
    view = args[0]
    chain = write_chain(rec, view) if rec.view_of(view) is not None else None
    if op_type is None or chain is None:
        raise ConversionError(f"in-place {op_type or func.__name__} on a view that is not a slice "
                              f"of a plain tensor or of a reshape of one (e.g. `x.t().{func.__name__}(...)`) "
                              f"changes another tensor and is not supported by the capture yet")
    keep_chain(rec, view, chain)
    result = func(*args, **kwargs)
    if _copies_as_is(op_type, args):  # `y[:, :2].copy_(x1)` is `y[:, :2] = x1`, as upstream writes it
        rec.rebind(view, rec.operand_of(args[1]))
    else:
        record(func, op_type, args, kwargs, result)
        rec.values[rec.operand_of(view)] = view.detach().clone()
    write_back(rec, chain)
    return result


def write_chain(rec: Recorder, tensor) -> list[tuple] | None:
    """The steps from `tensor` up to the tensor that owns its memory: ("slice", view, base,
    index) for a view made by indexing, ("reshape", view, root, None) for a whole reshape of a
    plain tensor (`x.view(1, 3, 16, 16)`); None when a step is any other view."""
    steps = []
    while tensor._is_view():
        known = rec.view_of(tensor)
        if known is not None:
            steps.append(("slice", tensor, known[0], known[1]))
            tensor = known[0]
            continue
        root = _reshaped_root(rec, tensor)
        if root is None:
            return None
        steps.append(("reshape", tensor, root, None))
        tensor = root
    return steps


def keep_chain(rec: Recorder, tensor, chain) -> None:
    """A write into `tensor` is coming: it and every tensor of its chain keep their values."""
    _keep_value(rec, rec.operand_of(tensor), tensor)
    for _, _, base, _ in chain:
        _keep_value(rec, rec.operand_of(base), base)


def write_back(rec: Recorder, chain) -> None:
    """After a write into the chain's first view: each base gets it back (a slice_copy of the
    view's new value, or the view reshaped back); the base's name stands for the result."""
    for kind, view, base, index in chain:
        if kind == "slice":
            _, params = indexing.slice_params(base, index)
            emit_write(rec, "Tensor.slice_copy", [rec.operand_of(base), rec.operand_of(view)],
                       ["input", "src"], params, base)
        else:
            emit_write(rec, "Tensor.reshape", [rec.operand_of(view)], ["input"],
                       {"shape": list(base.shape)}, base)


def emit_write(rec: Recorder, op_type, inputs, inputnames, params, target) -> None:
    """The op that wrote `target` in place; its output is the name `target` from now on."""
    op = rec.add(op_type, inputs, inputnames, params, [target])
    rec.values[op.outputs[0]] = target.detach().clone()  # later writes must not change it


def _reshaped_root(rec: Recorder, tensor):
    """The tensor that `tensor` (a view) reshapes whole: the same elements in the same
    order (`x.view(1, 3, 16, 16)` of a contiguous x), so a write into `tensor` is a write
    into it, and its new value is `tensor` reshaped back. None for any other view."""
    root = tensor._base
    if root is None or root._is_view() or not (tensor.is_contiguous() and root.is_contiguous()):
        return None
    if tensor.numel() != root.numel() or tensor.storage_offset() != root.storage_offset():
        return None
    return root if rec.known(root) is not None else None


def _keep_value(rec: Recorder, operand: Operand, tensor: torch.Tensor) -> None:
    """An in-place write is coming: `operand` keeps the value from before it."""
    if rec.values.get(operand) is tensor:
        rec.values[operand] = tensor.detach().clone()


def _copies_as_is(op_type: str, args) -> bool:
    """`view.copy_(src)` with src of the view's very shape and dtype: the new value is src."""
    if op_type != "Tensor.copy" or len(args) < 2 or not isinstance(args[1], torch.Tensor):
        return False
    view, src = args[0], args[1]
    return src.shape == view.shape and src.dtype == view.dtype and src.device == view.device


def before_hidden_writes(rec: Recorder, func, args, kwargs) -> None:
    """A call that writes an argument in place though its name does not say so: the
    argument's operand (a weight's Attribute) is taken now, with the value it has before the
    write, which the converted model then starts from (as the original did)."""
    for tensor in _hidden_writes(func, args, kwargs):
        operand = rec.operand_of(tensor)
        _keep_value(rec, operand, tensor)
        own_views_of(tensor)


# function -> (position, name) of the argument it renormalises in place when `max_norm` (the
# argument at position 3) is set: the rows of the weight it reads are scaled down for good
_RENORMS = {F.embedding: (1, "weight"), F.embedding_bag: (1, "weight")}


def _hidden_writes(func, args, kwargs) -> list[torch.Tensor]:
    slot = _RENORMS.get(func)
    if slot is None:
        return []
    max_norm = kwargs.get("max_norm", args[3] if len(args) > 3 else None)
    weight = kwargs.get(slot[1], args[slot[0]] if len(args) > slot[0] else None)
    return [weight] if max_norm is not None and isinstance(weight, torch.Tensor) else []


def announce_writes(func, args, kwargs) -> None:
    """A call about to write a tensor in place (`x.add_(1)`, `x[i] = y`, `out=`, `inplace=True`):
    the weights captured as views of that tensor keep their values (ir.own_views_of)."""
    targets = [kwargs.get("out")]
    if args and (naming.is_inplace(func) or kwargs.get("inplace") is True
                 or getattr(func, "__name__", "") == "__setitem__"):
        targets.append(args[0])
    for target in iter_values(targets):
        if isinstance(target, torch.Tensor):
            own_views_of(target)
