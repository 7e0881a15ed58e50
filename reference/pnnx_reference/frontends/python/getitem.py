"""`x[index]` recorded (indexing.py says what an index means): one Tensor.slice for slices and
integers, one Tensor.slice per dim when a bound is a traced size, and Tensor.slice, a
torch.unsqueeze per None and one Tensor.index for any other index. A view made by slicing is
remembered (`Recorder.add_view`) so that a write into it can be written back (inplace.py)."""
from __future__ import annotations

from . import indexing
from .recorder import Recorder
from .shapes import SymInt
from .valuecheck import check_slice_bounds


def record(rec: Recorder, tensor, index, result) -> None:
    if indexing.is_advanced(index):
        _advanced(rec, tensor, index, result)
        return
    check_slice_bounds(rec, index)
    if indexing.sized_bounds(index):
        _sized_slices(rec, tensor, index, result)
        return
    op_type, params = indexing.slice_params(tensor, index)
    rec.add(op_type, [rec.operand_of(tensor)], ["input"], params, [result])
    rec.add_view(result, tensor, index)


def _advanced(rec: Recorder, tensor, index, result) -> None:
    """`x[:, None, 1:3, idx]`: Tensor.slice, torch.unsqueeze per new axis, Tensor.index
    (indexing.decompose), each step's value computed here, unseen by the mode."""
    parts = indexing.decompose(tensor, index)
    value = tensor
    steps = ([(_basic, parts.basic)] if parts.basic is not None else []) + \
            [(_new_axis, dim) for dim in parts.unsqueeze] + \
            ([(_tensor_index, parts.advanced)] if parts.advanced is not None else [])
    for i, (step, argument) in enumerate(steps):
        value = step(rec, value, argument, result if i == len(steps) - 1 else None)
    if not steps:  # `x[...]`: the tensor itself
        rec.rebind(result, rec.operand_of(tensor))


def _sized_slices(rec: Recorder, tensor, index, result) -> None:
    """`x[:, 1:y.size(1) - 1, 2:]`: one Tensor.slice per sliced dim, last dim first (so the
    dims before it keep their numbers); a bound computed from sizes is a `$start`/`$end`
    input (a pnnx.Expression of the sizes), so the slice follows the input's shape."""
    steps = indexing.per_dim(tensor, index)
    value = tensor
    for k, (dim, item) in enumerate(steps):
        with rec.quiet():
            out = value[indexing.at_dim(dim, item)] if k < len(steps) - 1 else result
        inputs, names = [rec.operand_of(value)], ["input"]
        if isinstance(item, slice) and any(isinstance(b, SymInt) for b in (item.start, item.stop)):
            params = {"dim": dim, "step": 1 if item.step is None else int(item.step)}
            for key, bound, default in (("start", item.start, 0), ("end", item.stop, indexing.INT_MAX)):
                if isinstance(bound, SymInt):
                    inputs.append(rec.shape_expression(bound))
                    names.append(key)
                else:
                    params[key] = default if bound is None else int(bound)
            rec.add("Tensor.slice", inputs, names, params, [out])
        else:
            op_type, params = indexing.slice_params(value, indexing.at_dim(dim, item))
            rec.add(op_type, inputs, names, params, [out])
        value = out


def _basic(rec: Recorder, tensor, index, result):
    with rec.quiet():
        value = tensor[index] if result is None else result
    op_type, params = indexing.slice_params(tensor, index)
    rec.add(op_type, [rec.operand_of(tensor)], ["input"], params, [value])
    rec.add_view(value, tensor, index)
    return value


def _new_axis(rec: Recorder, tensor, dim, result):
    with rec.quiet():
        value = tensor.unsqueeze(dim) if result is None else result
    rec.add("torch.unsqueeze", [rec.operand_of(tensor)], ["input"], {"dim": dim}, [value])
    return value


def _tensor_index(rec: Recorder, tensor, items, result):
    with rec.quiet():
        value = tensor[tuple(items)] if result is None else result
    expr, tensors = indexing.index_expr(items, 1, tensor.device)
    rec.add("Tensor.index", [rec.operand_of(t) for t in (tensor, *tensors)],
            ["input"] + ["indices"] * len(tensors), {"expr": expr}, [value])
    return value
