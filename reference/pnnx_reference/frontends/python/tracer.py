"""Run the model under a TorchFunctionMode and record every PyTorch API call as one operator.

The mode dispatches each call it sees to the part that records it: getters.py (`x.shape`,
`x.T`), customop.py, setitem.py (`x[i] = y`), inplace.py (in-place calls on views),
getitem.py (`x[i]`), or one operator of the call's API path; valuecheck.py catches the
conversions of input values to Python first. Leaf modules are seen by their own hooks
(leaves.py), and every part records through the Recorder (recorder.py)."""
from __future__ import annotations

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from ...errors import ConversionError, PnnxError
from . import customop, expressions, getitem, getters, indexing, inplace, naming, setitem, valuecheck, valuedep
from .leaves import Leaves
from .recorder import Recorder, disarmed, tensors_in
from .shapes import ARMED, SymInt
from .signature import bind

_CONSTANT_FACTORIES = {"torch.tensor", "torch.as_tensor"}


def _is_plain_nested(value) -> bool:
    """A list of lists of plain numbers (no tensors, no traced sizes): no param can hold it,
    and it is a constant."""
    return (isinstance(value, (list, tuple)) and any(isinstance(v, (list, tuple)) for v in value)
            and _is_plain(value))


def _is_plain(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_is_plain(v) for v in value)
    return not isinstance(value, SymInt) and isinstance(value, (bool, int, float, complex))


class Tracer(TorchFunctionMode):
    def __init__(self, model: nn.Module, moduleop: tuple = (), body: bool = False,
                 policy: valuedep.ValueDependence | None = None):
        """`body`: `model` is a moduleop traced on its own, so its calls are recorded even
        though its class is in `moduleop`. `policy`: what to do with value-dependent
        conversions (default: refuse them)."""
        super().__init__()
        self.recorder = Recorder(model, policy or valuedep.ValueDependence())
        self.leaves = Leaves(self.recorder, model, moduleop, body)

    def __enter__(self):
        ARMED[0] = True
        return super().__enter__()

    def __exit__(self, *exc):
        ARMED[0] = False
        return super().__exit__(*exc)

    def close(self) -> None:
        self.leaves.close()

    @disarmed
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rec = self.recorder
        inplace.announce_writes(func, args, kwargs)
        if rec.muted:
            return func(*args, **kwargs)
        if valuecheck.is_branch(rec, func, args):
            return valuecheck.branch(rec, func, args, kwargs)
        inplace.before_hidden_writes(rec, func, args, kwargs)
        getter = naming.getter_name(func)
        if getter is not None:
            return getters.getter(rec, func, getter, args)
        if naming.is_custom_op(func):
            return customop.record(rec, func, args, kwargs)
        op_type = naming.api_path(func)
        if op_type == "Tensor.size":
            return rec.size(args[0], func(*args, **kwargs), *args[1:], **kwargs)
        if op_type == "Tensor.__setitem__":
            return setitem.record(rec, func, *args)
        if naming.is_inplace(func) and args and isinstance(args[0], torch.Tensor) and args[0]._is_view():
            return inplace.on_view(rec, func, op_type, args, kwargs, self._record_checked)
        result = func(*args, **kwargs)
        if not tensors_in(result):
            return result
        if op_type is None:
            self._refuse_unknown(func, args, kwargs)
            return result
        self._record_checked(func, op_type, args, kwargs, result)
        valuecheck.note_value_shape(rec, op_type, args, kwargs, result)
        return result

    def _record_checked(self, func, op_type, args, kwargs, result) -> None:
        try:
            self._record(func, op_type, args, kwargs, result)
        except PnnxError:
            raise
        except Exception as err:  # torch turns a TypeError here into a confusing NotImplemented
            raise ConversionError(f"cannot capture {op_type}: {type(err).__name__}: {err}") from err

    def _record(self, func, op_type, args, kwargs, result) -> None:
        rec = self.recorder
        name = expressions.expression_func(op_type)
        if name is not None:
            refs = expressions.Refs(rec.operand_of)
            text = expressions.build(name, args, kwargs, refs)
            if text is not None:
                rec.emit("pnnx.Expression", rec.expr_name(), refs.operands, [], {"expr": text}, [result])
                return
        if op_type == "Tensor.__getitem__":
            getitem.record(rec, args[0], args[1], result)
            return
        if op_type in _CONSTANT_FACTORIES and args and _is_plain_nested(args[0]):
            return  # `torch.tensor([[5], [3]])`: a constant; it becomes a pnnx.Attribute where used
        pairs = bind(func, op_type, args, kwargs)
        rec.record_call(op_type, pairs, result)
        if op_type == "Tensor.select":  # `x.select(1, 0)` is the view `x[:, 0]`: it can be written to
            rec.add_view(result, args[0], indexing.select_index(dict(pairs)))

    def _refuse_unknown(self, func, args, kwargs) -> None:
        """A tensor computed by a call we cannot name would silently become a constant."""
        if any(self.recorder.is_traced(t) for t in tensors_in((args, kwargs))):
            name = getattr(func, "__qualname__", None) or repr(func)
            raise ConversionError(f"cannot capture {getattr(func, '__module__', None) or 'torch'}.{name}: "
                                  f"it is not a public torch, torch.nn.functional or Tensor API")
