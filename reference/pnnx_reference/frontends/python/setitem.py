"""`x[..., :2] = y` -> `Tensor.slice_copy`, `x[mask] = y` -> `Tensor.index_put`; the name `x`
then stands for the op's output, as after any in-place call (inplace.py writes it back into
the tensors `x` is a view of)."""
from __future__ import annotations

import torch

from ...errors import ConversionError
from . import indexing
from .inplace import emit_write, keep_chain, write_back, write_chain
from .recorder import Recorder
from .valuecheck import check_slice_bounds


def record(rec: Recorder, func, target, index, value) -> None:
    chain = write_chain(rec, target)
    if chain is None:
        raise ConversionError("assignment into a view (e.g. `x.t()[0] = y`) changes another "
                              "tensor and is not supported by the capture yet")
    if _is_self_copy(rec, target, index, value):  # `x[:, :2] = v` where v is that very view
        return func(target, index, value)
    source = rec.operand_of(target)
    if not isinstance(value, torch.Tensor):  # `x[m] = 0.5`: a constant of x's dtype
        value = torch.tensor(value, dtype=target.dtype, device=target.device)
    if indexing.has_tensor_index(index):
        op_type, params, inputs, inputnames = _index_put(rec, target, index, source, value)
    else:
        check_slice_bounds(rec, index)
        _, params = indexing.slice_params(target, index)
        op_type = "Tensor.slice_copy"
        inputs, inputnames = [source, rec.operand_of(value)], ["input", "src"]
    keep_chain(rec, target, chain)
    func(target, index, value)
    emit_write(rec, op_type, inputs, inputnames, params, target)
    write_back(rec, chain)


def _index_put(rec: Recorder, target, index, source, value) -> tuple[str, dict, list, list]:
    items = indexing.index_items(target, index)
    if not items or any(not isinstance(i, torch.Tensor) for i in items):
        raise ConversionError("assignment through tensor indices mixed with slices or integers "
                              "is not supported by the capture yet")
    inputs = [source, *(rec.operand_of(t) for t in items), rec.operand_of(value)]
    inputnames = ["input"] + ["indices"] * len(items) + ["values"]
    return "Tensor.index_put", {"accumulate": False}, inputs, inputnames


def _is_self_copy(rec: Recorder, target, index, value) -> bool:
    """`value` is the very memory `target[index]` names (a view filled in place and then
    assigned back, as `_pnnx.py` writes `y[:, 1:3].fill_(v)`): the assignment writes
    nothing, and recording it would add a second Tensor.slice_copy."""
    if not isinstance(value, torch.Tensor) or not value._is_view() or indexing.has_tensor_index(index):
        return False
    with rec.quiet():
        dest = target[index]
        return (dest.untyped_storage().data_ptr() == value.untyped_storage().data_ptr()
                and dest.storage_offset() == value.storage_offset() and dest.shape == value.shape
                and dest.stride() == value.stride() and dest.dtype == value.dtype)
