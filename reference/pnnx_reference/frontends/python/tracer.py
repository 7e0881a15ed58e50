"""Run the model under a TorchFunctionMode and record every PyTorch API call as one operator.

Standard `nn` modules (and `moduleop` classes) are leaves: hooks mark "inside a leaf" so the
calls their forward makes are not recorded, and one `nn.X` op is written instead. A moduleop
call also keeps a copy of its arguments (`moduleop_calls`), so that its body can be traced
on its own afterwards (`trace.py`)."""
from __future__ import annotations

import contextlib
import inspect
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from ...errors import ConversionError, PnnxError
from ...ir import UNKNOWN_DIM, Attribute, Graph, Operand, Operator, annotation_suffix_of, own_views_of
from . import expressions, indexing, modules, naming, valuedep
from .params import NotAParam, to_param, without_whitespace
from .shapes import ARMED, SymInt, has_symint, operands_of, render
from .signature import bind


_TRANSPOSE_GETTERS = {
    "T": lambda ndim: ("Tensor.permute", {"dims": list(range(ndim - 1, -1, -1))}),
    "mT": lambda ndim: ("torch.transpose", {"dim0": -2, "dim1": -1}),
}

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


def _disarmed(method):
    """The tracer's own code: sizes may become ints here (the user's code is not running)."""
    def run(self, *args, **kwargs):
        armed, ARMED[0] = ARMED[0], False
        try:
            return method(self, *args, **kwargs)
        finally:
            ARMED[0] = armed
    return run


class Tracer(TorchFunctionMode):
    def __init__(self, model: nn.Module, moduleop: tuple = (), body: bool = False,
                 policy: valuedep.ValueDependence | None = None):
        """`body`: `model` is a moduleop traced on its own, so its calls are recorded even
        though its class is in `moduleop`. `policy`: what to do with value-dependent
        conversions (default: refuse them)."""
        super().__init__()
        self.graph = Graph()
        self.values: dict[Operand, object] = {}   # the value each operand had while tracing
        self.policy = policy or valuedep.ValueDependence()
        self._dynamic: set[Operand] = set()        # operands whose value depends on the inputs
        self._value_shaped: set[Operand] = set()   # ... and whose shape does (torch.nonzero)
        self._tensors: dict[int, tuple[torch.Tensor, Operand]] = {}
        # id(view) -> (view, base, index) for each view made by basic indexing `base[index]`
        self._views: dict[int, tuple[torch.Tensor, torch.Tensor, object]] = {}
        self._leaf_depth = 0
        self._pending: list[tuple] = []
        self.moduleop_calls: list[tuple[Operator, nn.Module, tuple, dict]] = []
        self._counters = {k: itertools.count() for k in ("operand", "op", "expr", "const", "unique")}
        self._names: set[str] = set()
        self.moduleop = moduleop
        self._module_paths = {id(m): p for p, m in model.named_modules(remove_duplicate=False)}
        self._tensor_paths = {id(t): p for p, t in itertools.chain(
            _named_plain_tensors(model),
            model.named_parameters(remove_duplicate=False), model.named_buffers(remove_duplicate=False))}
        self._hooks = []
        for module in model.modules():
            if self._kept_whole(module) and not (body and module is model):
                self._hooks.append(module.register_forward_pre_hook(self._enter_leaf, with_kwargs=True))
                self._hooks.append(module.register_forward_hook(self._leave_leaf, with_kwargs=True,
                                                                always_call=True))

    def __enter__(self):
        ARMED[0] = True
        return super().__enter__()

    def __exit__(self, *exc):
        ARMED[0] = False
        return super().__exit__(*exc)

    # --- operands ------------------------------------------------------------------
    @contextlib.contextmanager
    def _quiet(self):
        """Our own torch calls (reading weights) must not be recorded."""
        self._leaf_depth += 1
        try:
            yield
        finally:
            self._leaf_depth -= 1

    def _kept_whole(self, module) -> bool:
        return self._is_moduleop(module) or modules.is_leaf(module)

    def _is_moduleop(self, module) -> bool:
        return any(names_class(m, type(module)) for m in self.moduleop)

    def _unique(self, name: str) -> str:
        if name in self._names:
            name = f"pnnx_unique_{next(self._counters['unique'])}"
        self._names.add(name)
        return name

    def _new_operand(self, value) -> Operand:
        operand = self.graph.new_operand(f"pnnx_{next(self._counters['operand'])}")
        if isinstance(value, torch.Tensor):
            with self._quiet():
                operand.shape = [int(d) for d in value.shape]
                operand.dtype = annotation_suffix_of(value.dtype)
            self._tensors[id(value)] = (value, operand)
        self.values[operand] = value
        return operand

    def operand_of(self, tensor: torch.Tensor) -> Operand:
        known = self._tensors.get(id(tensor))
        if known is not None and known[0] is tensor:
            return known[1]
        return self._constant(tensor)

    def _constant(self, tensor: torch.Tensor) -> Operand:
        """A tensor not produced by a recorded op: a parameter, buffer or constant."""
        path = self._tensor_paths.get(id(tensor))
        name = path if path is not None else f"pnnx_{next(self._counters['const'])}"
        op = self.graph.new_operator("pnnx.Attribute", self._unique(name))
        with self._quiet():
            op.attrs["data"] = Attribute.from_torch(tensor.detach())
        operand = self._new_operand(tensor)
        self.graph.connect(op, outputs=[operand])
        return operand

    def add_input(self, tensor: torch.Tensor, index: int) -> None:
        op = self.graph.new_operator("pnnx.Input", self._unique(f"pnnx_input_{index}"))
        operand = self._new_operand(tensor)
        self._dynamic.add(operand)
        self.graph.connect(op, outputs=[operand])

    def add_output(self, tensor: torch.Tensor, index: int) -> None:
        operand = self.operand_of(tensor)
        op = self.graph.new_operator("pnnx.Output", self._unique(f"pnnx_output_{index}"))
        self.graph.connect(op, inputs=[operand])

    def _emit(self, op_type: str, name: str, inputs: list, inputnames: list, params: dict,
              results: list, attrs: dict | None = None) -> Operator:
        op = self.graph.new_operator(op_type, self._unique(name))
        op.params.update(params)
        op.attrs.update(attrs or {})
        op.inputnames = list(inputnames) if any(inputnames) else []
        self.graph.connect(op, inputs=inputs, outputs=[self._new_operand(r) for r in results])
        if op_type not in valuedep.VALUE_FREE and any(i in self._dynamic for i in inputs):
            self._dynamic.update(op.outputs)
        if any(i in self._value_shaped for i in inputs):  # a shape derived from one
            self._value_shaped.update(op.outputs)
        return op

    def _op_name(self, op_type: str) -> str:
        return f"{op_type}_{next(self._counters['op'])}"

    # --- leaf modules (hooks) ----------------------------------------------------------
    @_disarmed
    def _enter_leaf(self, module, args, kwargs):
        if self._leaf_depth == 0:
            call = self._copy_call(args, kwargs) if self._is_moduleop(module) else None
            self._pending.append((*self._leaf_inputs(module, args, kwargs), call, self._weights_before(module)))
        self._leaf_depth += 1

    def _weights_before(self, module) -> dict | None:
        """The weights of a module whose forward renormalises them in place (nn.Embedding with
        max_norm), taken before it runs: the converted model starts from them, as this one
        did. None for any other module, whose weights are taken (as views) after its call."""
        if getattr(module, "max_norm", None) is None or not isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
            return None
        with self._quiet():
            attrs = modules.module_attrs(module)
        for attr in attrs.values():
            attr.own()
        return attrs

    def _copy_call(self, args, kwargs) -> tuple[tuple, dict]:
        """The call's arguments with every tensor cloned before the forward runs (it may
        change its inputs in place)."""
        with self._quiet():
            return clone_tensors(args), {k: clone_tensors(v) for k, v in kwargs.items()}

    def _leaf_inputs(self, module, args, kwargs) -> tuple[list, list]:
        """The tensor forward arguments; named only when one is passed by keyword
        (`attention(q, k, v, attn_mask=m)`), since positions then no longer say which is which."""
        positional = [t for t in iter_values(args) if isinstance(t, torch.Tensor)]
        keyword = [(k, v) for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
        operands = [self.operand_of(t) for t in positional] + [self.operand_of(v) for _, v in keyword]
        if not keyword:
            return operands, []
        bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
        names = [k for k, v in bound.items() if isinstance(v, torch.Tensor)]
        return operands, names if len(names) == len(operands) else []

    @_disarmed
    def _leave_leaf(self, module, args, kwargs, output):
        self._leaf_depth -= 1
        if self._leaf_depth:
            return
        inputs, inputnames, call, before = self._pending.pop()
        results = [t for t in iter_values(output) if isinstance(t, torch.Tensor)]
        path = self._module_paths.get(id(module)) or type(module).__name__.lower()
        if self._is_moduleop(module):
            op_type, params = modules.module_type(module, custom=True), {}
        else:
            op_type, params = modules.module_type(module), modules.constructor_params(module)
            params.update(modules.call_params(module, args, kwargs))
        if before is None:
            with self._quiet():
                before = modules.module_attrs(module)
        op = self._emit(op_type, path, inputs, inputnames, params, results, before)
        if call is not None:
            self.moduleop_calls.append((op, module, *call))

    # --- function calls ---------------------------------------------------------------
    @_disarmed
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        _announce_writes(func, args, kwargs)
        if self._leaf_depth:
            return func(*args, **kwargs)
        if self._check_conversion(func, args):
            return self.policy.branch(f"{valuedep.CONVERSIONS[func.__name__]} of a tensor computed from the inputs",
                                      bool(func(*args, **kwargs)))
        self._before_hidden_writes(func, args, kwargs)
        getter = naming.getter_name(func)
        if getter is not None:
            return self._getter(func, getter, args)
        if naming.is_custom_op(func):
            return self._custom_op(func, args, kwargs)
        op_type = naming.api_path(func)
        if op_type == "Tensor.size":
            return self._size(args[0], func(*args, **kwargs), *args[1:], **kwargs)
        if op_type == "Tensor.__setitem__":
            return self._setitem(func, *args)
        if naming.is_inplace(func) and args and isinstance(args[0], torch.Tensor) and args[0]._is_view():
            return self._inplace_on_view(func, op_type, args, kwargs)
        result = func(*args, **kwargs)
        if not any(isinstance(t, torch.Tensor) for t in iter_values(result)):
            return result
        if op_type is None:
            self._refuse_unknown(func, args, kwargs)
            return result
        self._record_checked(func, op_type, args, kwargs, result)
        if self._any_dynamic(valuedep.shape_deciders(op_type, args, kwargs)):
            self._value_shaped.update(self.operand_of(t) for t in iter_values(result)
                                      if isinstance(t, torch.Tensor))
        return result

    # --- value-dependent conversions (valuedep.py) -------------------------------------
    def _any_dynamic(self, values) -> bool:
        for t in iter_values(values):
            if isinstance(t, torch.Tensor):
                known = self._tensors.get(id(t))
                if known is not None and known[0] is t and known[1] in self._dynamic:
                    return True
        return False

    def _is_value_shaped(self, tensor) -> bool:
        known = self._tensors.get(id(tensor))
        return known is not None and known[0] is tensor and known[1] in self._value_shaped

    def _check_conversion(self, func, args) -> bool:
        """`int(t)`, `if t:`, `t.item()`, ... of a tensor computed from the inputs; `len(t)`,
        `t.numel()` of one whose shape depends on the input values. True for a two-way one
        (`if t:`, `v in t`), which the policy decides as a branch (valuedep.BRANCHES)."""
        name = getattr(func, "__name__", "")
        tensor_method = (getattr(func, "__qualname__", "") or "").startswith(("TensorBase.", "Tensor."))
        if name in valuedep.CONVERSIONS and (tensor_method or func in _VALUE_FUNCTIONS):
            if self._any_dynamic(args):
                if name in valuedep.BRANCHES:
                    return True
                self.policy.conversion(f"{valuedep.CONVERSIONS[name]} of a tensor computed from the inputs")
        elif name in valuedep.SHAPE_READS and (tensor_method or func is torch.unbind) and args \
                and self._is_value_shaped(args[0]):
            self.policy.conversion(f"{valuedep.SHAPE_READS[name]} of a tensor whose shape depends on "
                                   f"the input values")
        return False

    def _check_slice_bounds(self, index) -> None:
        """`x[:, :t]` with `t` a tensor: the slice takes `t`'s value as a Python int."""
        items = index if isinstance(index, tuple) else (index,)
        bounds = [b for i in items if isinstance(i, slice) for b in (i.start, i.stop, i.step)]
        if self._any_dynamic(bounds):
            self.policy.conversion("a slice bound taken from a tensor computed from the inputs")

    def _record_checked(self, func, op_type, args, kwargs, result) -> None:
        try:
            self._record(func, op_type, args, kwargs, result)
        except PnnxError:
            raise
        except Exception as err:  # torch turns a TypeError here into a confusing NotImplemented
            raise ConversionError(f"cannot capture {op_type}: {type(err).__name__}: {err}") from err

    def _inplace_on_view(self, func, op_type, args, kwargs):
        """`y[:, :2].fill_(v)` is `fill` on the slice's value, then `y[:, :2] = <that>` as a
        `Tensor.slice_copy`; the names `y` and `y[:, :2]` then stand for the two new values.
        A view made by indexing (or by reshaping whole) a tensor that is itself such a view, or
        no view, is written back step by step (`_write_chain`)."""
        view = args[0]
        known = self._views.get(id(view))
        chain = self._write_chain(view) if known is not None and known[0] is view else None
        if op_type is None or chain is None:
            raise ConversionError(f"in-place {op_type or func.__name__} on a view that is not a slice "
                                  f"of a plain tensor or of a reshape of one (e.g. `x.t().{func.__name__}(...)`) "
                                  f"changes another tensor and is not supported by the capture yet")
        self._keep_chain(view, chain)
        result = func(*args, **kwargs)
        if _copies_as_is(op_type, args):  # `y[:, :2].copy_(x1)` is `y[:, :2] = x1`, as upstream writes it
            self._tensors[id(view)] = (view, self.operand_of(args[1]))
        else:
            self._record_checked(func, op_type, args, kwargs, result)
            self.values[self.operand_of(view)] = view.detach().clone()
        self._write_back(chain)
        return result

    def _write_chain(self, tensor) -> list[tuple] | None:
        """The steps from `tensor` up to the tensor that owns its memory: ("slice", view, base,
        index) for a view made by indexing, ("reshape", view, root, None) for a whole reshape of a
        plain tensor (`x.view(1, 3, 16, 16)`); None when a step is any other view."""
        steps = []
        while tensor._is_view():
            known = self._views.get(id(tensor))
            if known is not None and known[0] is tensor:
                steps.append(("slice", tensor, known[1], known[2]))
                tensor = known[1]
                continue
            root = self._reshaped_root(tensor)
            if root is None:
                return None
            steps.append(("reshape", tensor, root, None))
            tensor = root
        return steps

    def _keep_chain(self, tensor, chain) -> None:
        """A write into `tensor` is coming: it and every tensor of its chain keep their values."""
        self._keep_value(self.operand_of(tensor), tensor)
        for _, _, base, _ in chain:
            self._keep_value(self.operand_of(base), base)

    def _write_back(self, chain) -> None:
        """After a write into the chain's first view: each base gets it back (a slice_copy of the
        view's new value, or the view reshaped back); the base's name stands for the result."""
        for kind, view, base, index in chain:
            if kind == "slice":
                _, params = indexing.slice_params(base, index)
                self._emit_write("Tensor.slice_copy", [self.operand_of(base), self.operand_of(view)],
                                 ["input", "src"], params, base)
            else:
                self._emit_write("Tensor.reshape", [self.operand_of(view)], ["input"],
                                 {"shape": list(base.shape)}, base)

    def _reshaped_root(self, tensor):
        """The tensor that `tensor` (a view) reshapes whole: the same elements in the same
        order (`x.view(1, 3, 16, 16)` of a contiguous x), so a write into `tensor` is a write
        into it, and its new value is `tensor` reshaped back. None for any other view."""
        root = tensor._base
        if root is None or root._is_view() or not (tensor.is_contiguous() and root.is_contiguous()):
            return None
        if tensor.numel() != root.numel() or tensor.storage_offset() != root.storage_offset():
            return None
        known = self._tensors.get(id(root))
        return root if known is not None and known[0] is root else None

    def _before_hidden_writes(self, func, args, kwargs) -> None:
        """A call that writes an argument in place though its name does not say so: the
        argument's operand (a weight's Attribute) is taken now, with the value it has before the
        write, which the converted model then starts from (as the original did)."""
        for tensor in _hidden_writes(func, args, kwargs):
            operand = self.operand_of(tensor)
            self._keep_value(operand, tensor)
            own_views_of(tensor)

    def _keep_value(self, operand: Operand, tensor: torch.Tensor) -> None:
        """An in-place write is coming: `operand` keeps the value from before it."""
        if self.values.get(operand) is tensor:
            self.values[operand] = tensor.detach().clone()

    def _emit_write(self, op_type, inputs, inputnames, params, target) -> None:
        """The op that wrote `target` in place; its output is the name `target` from now on."""
        op = self._emit(op_type, self._op_name(op_type), inputs, inputnames, params, [target])
        self.values[op.outputs[0]] = target.detach().clone()  # later writes must not change it

    def _setitem(self, func, target, index, value) -> None:
        """`x[..., :2] = y` -> `Tensor.slice_copy`, `x[mask] = y` -> `Tensor.index_put`; the
        name `x` then stands for the op's output, as after any in-place call."""
        chain = self._write_chain(target)
        if chain is None:
            raise ConversionError("assignment into a view (e.g. `x.t()[0] = y`) changes another "
                                  "tensor and is not supported by the capture yet")
        if self._is_self_copy(target, index, value):  # `x[:, :2] = v` where v is that very view
            return func(target, index, value)
        source = self.operand_of(target)
        if not isinstance(value, torch.Tensor):  # `x[m] = 0.5`: a constant of x's dtype
            value = torch.tensor(value, dtype=target.dtype, device=target.device)
        if indexing.has_tensor_index(index):
            items = indexing.index_items(target, index)
            if not items or any(not isinstance(i, torch.Tensor) for i in items):
                raise ConversionError("assignment through tensor indices mixed with slices or integers "
                                      "is not supported by the capture yet")
            op_type, params = "Tensor.index_put", {"accumulate": False}
            inputs = [source, *(self.operand_of(t) for t in items), self.operand_of(value)]
            inputnames = ["input"] + ["indices"] * len(items) + ["values"]
        else:
            self._check_slice_bounds(index)
            op_type, params = indexing.slice_params(target, index)
            op_type = "Tensor.slice_copy"
            inputs, inputnames = [source, self.operand_of(value)], ["input", "src"]
        self._keep_chain(target, chain)
        func(target, index, value)
        self._emit_write(op_type, inputs, inputnames, params, target)
        self._write_back(chain)

    def _is_self_copy(self, target, index, value) -> bool:
        """`value` is the very memory `target[index]` names (a view filled in place and then
        assigned back, as `_pnnx.py` writes `y[:, 1:3].fill_(v)`): the assignment writes
        nothing, and recording it would add a second Tensor.slice_copy."""
        if not isinstance(value, torch.Tensor) or not value._is_view() or indexing.has_tensor_index(index):
            return False
        with self._quiet():
            dest = target[index]
            return (dest.untyped_storage().data_ptr() == value.untyped_storage().data_ptr()
                    and dest.storage_offset() == value.storage_offset() and dest.shape == value.shape
                    and dest.stride() == value.stride() and dest.dtype == value.dtype)

    def _refuse_unknown(self, func, args, kwargs) -> None:
        """A tensor computed by a call we cannot name would silently become a constant."""
        if any(isinstance(t, torch.Tensor) and id(t) in self._tensors for t in iter_values((args, kwargs))):
            name = getattr(func, "__qualname__", None) or repr(func)
            raise ConversionError(f"cannot capture {getattr(func, '__module__', None) or 'torch'}.{name}: "
                                  f"it is not a public torch, torch.nn.functional or Tensor API")

    def _getter(self, func, name: str, args):
        result = func(*args)
        if name == "shape":
            return self._size(args[0], result)
        if isinstance(result, torch.Tensor) and isinstance(args[0], torch.Tensor):
            if name in ("data",):
                self._tensors[id(result)] = (result, self.operand_of(args[0]))
                return result
            if name in ("real", "imag"):  # x.real is torch.real(x)
                self._emit(f"torch.{name}", self._op_name(f"torch.{name}"), [self.operand_of(args[0])],
                           ["input"], {}, [result])
                return result
            if name in _TRANSPOSE_GETTERS:  # x.T / x.mT are the permute / transpose calls
                op_type, params = _TRANSPOSE_GETTERS[name](args[0].dim())
                self._emit(op_type, self._op_name(op_type), [self.operand_of(args[0])], ["input"],
                           params, [result])
                return result
            raise ConversionError(f"Tensor.{name} is not supported by the capture yet")
        return result

    def _size(self, tensor, result, dim=None):
        operand = self.operand_of(tensor)
        guard = self.policy.conversion if operand in self._value_shaped else None
        if dim is not None:
            return SymInt(result, ("size", operand, dim % tensor.dim()), guard)
        return torch.Size([SymInt(v, ("size", operand, d), guard) for d, v in enumerate(result)])

    def _record(self, func, op_type, args, kwargs, result) -> None:
        name = expressions.expression_func(op_type)
        if name is not None:
            refs = expressions.Refs(self.operand_of)
            text = expressions.build(name, args, kwargs, refs)
            if text is not None:
                self._emit("pnnx.Expression", f"pnnx_expr_{next(self._counters['expr'])}",
                           refs.operands, [], {"expr": text}, [result])
                return
        if op_type == "Tensor.__getitem__" and indexing.is_advanced(args[1]):
            self._advanced_getitem(args[0], args[1], result)
            return
        if op_type == "Tensor.__getitem__" and indexing.sized_bounds(args[1]):
            self._check_slice_bounds(args[1])
            self._sized_slices(args[0], args[1], result)
            return
        if op_type == "Tensor.__getitem__":
            self._check_slice_bounds(args[1])
            op_type, params = indexing.slice_params(args[0], args[1])
            self._emit(op_type, self._op_name(op_type), [self.operand_of(args[0])], ["input"],
                       params, [result])
            self._views[id(result)] = (result, args[0], args[1])
            return
        if op_type in _CONSTANT_FACTORIES and args and _is_plain_nested(args[0]):
            return  # `torch.tensor([[5], [3]])`: a constant; it becomes a pnnx.Attribute where used
        pairs = bind(func, op_type, args, kwargs)
        self._record_call(op_type, pairs, result)
        if op_type == "Tensor.select":  # `x.select(1, 0)` is the view `x[:, 0]`: it can be written to
            self._views[id(result)] = (result, args[0], indexing.select_index(dict(pairs)))

    def _advanced_getitem(self, tensor, index, result) -> None:
        """`x[:, None, 1:3, idx]`: Tensor.slice, torch.unsqueeze per new axis, Tensor.index
        (indexing.decompose), each step's value computed here, unseen by the mode."""
        parts = indexing.decompose(tensor, index)
        value = tensor
        steps = ([(self._basic, parts.basic)] if parts.basic is not None else []) + \
                [(self._new_axis, dim) for dim in parts.unsqueeze] + \
                ([(self._tensor_index, parts.advanced)] if parts.advanced is not None else [])
        for i, (step, argument) in enumerate(steps):
            value = step(value, argument, result if i == len(steps) - 1 else None)
        if not steps:  # `x[...]`: the tensor itself
            self._tensors[id(result)] = (result, self.operand_of(tensor))

    def _sized_slices(self, tensor, index, result) -> None:
        """`x[:, 1:y.size(1) - 1, 2:]`: one Tensor.slice per sliced dim, last dim first (so the
        dims before it keep their numbers); a bound computed from sizes is a `$start`/`$end`
        input (a pnnx.Expression of the sizes), so the slice follows the input's shape."""
        steps = indexing.per_dim(tensor, index)
        value = tensor
        for k, (dim, item) in enumerate(steps):
            with self._quiet():
                out = value[indexing.at_dim(dim, item)] if k < len(steps) - 1 else result
            inputs, names = [self.operand_of(value)], ["input"]
            if isinstance(item, slice) and any(isinstance(b, SymInt) for b in (item.start, item.stop)):
                params = {"dim": dim, "step": 1 if item.step is None else int(item.step)}
                for key, bound, default in (("start", item.start, 0), ("end", item.stop, indexing.INT_MAX)):
                    if isinstance(bound, SymInt):
                        inputs.append(self._shape_expression(bound))
                        names.append(key)
                    else:
                        params[key] = default if bound is None else int(bound)
                self._emit("Tensor.slice", self._op_name("Tensor.slice"), inputs, names, params, [out])
            else:
                op_type, params = indexing.slice_params(value, indexing.at_dim(dim, item))
                self._emit(op_type, self._op_name(op_type), inputs, names, params, [out])
            value = out

    def _basic(self, tensor, index, result):
        with self._quiet():
            value = tensor[index] if result is None else result
        op_type, params = indexing.slice_params(tensor, index)
        self._emit(op_type, self._op_name(op_type), [self.operand_of(tensor)], ["input"], params, [value])
        self._views[id(value)] = (value, tensor, index)
        return value

    def _new_axis(self, tensor, dim, result):
        with self._quiet():
            value = tensor.unsqueeze(dim) if result is None else result
        self._emit("torch.unsqueeze", self._op_name("torch.unsqueeze"), [self.operand_of(tensor)], ["input"],
                   {"dim": dim}, [value])
        return value

    def _tensor_index(self, tensor, items, result):
        with self._quiet():
            value = tensor[tuple(items)] if result is None else result
        expr, tensors = indexing.index_expr(items, 1, tensor.device)
        self._emit("Tensor.index", self._op_name("Tensor.index"), [self.operand_of(t) for t in (tensor, *tensors)],
                   ["input"] + ["indices"] * len(tensors), {"expr": expr}, [value])
        return value

    def _record_call(self, op_type, pairs, result) -> None:
        inputs, inputnames, params = [], [], {}
        for key, value in pairs:
            if isinstance(value, torch.Tensor):
                inputs.append(self.operand_of(value))
                inputnames.append(key)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
                for v in value:
                    if not isinstance(v, torch.Tensor):
                        raise ConversionError(f"{op_type}: argument {key} mixes tensors and {type(v).__name__}")
                    inputs.append(self.operand_of(v))
                    inputnames.append(key)
            elif has_symint(value):
                inputs.append(self._shape_expression(value))
                inputnames.append(key)
            else:
                params[key] = self._param(op_type, key, value)
        results = [t for t in iter_values(result) if isinstance(t, torch.Tensor)]
        self._emit(op_type, self._op_name(op_type), inputs, inputnames, params, results)

    def _param(self, op_type, key, value):
        try:
            return without_whitespace(op_type, key, to_param(value, key))
        except NotAParam as err:
            raise ConversionError(f"{op_type}: argument {key}: {err}") from None

    def _shape_expression(self, value) -> Operand:
        """`x.view(x.size(0), -1)`: the shape list becomes `[size(@0,0),-1]`."""
        operands = operands_of(value, [])
        op = self.graph.new_operator("pnnx.Expression",
                                     self._unique(f"pnnx_expr_{next(self._counters['expr'])}"))
        op.params["expr"] = render(value, operands)
        concrete = [int(v) for v in value] if isinstance(value, (list, tuple)) else int(value)
        out = self._new_operand(concrete)
        self.graph.connect(op, inputs=operands, outputs=[out])
        if any(o in self._value_shaped for o in operands):  # `torch.zeros(idx.size(0))`
            self._value_shaped.add(out)
        return out

    def unknown_value_shapes(self) -> None:
        """Every dim of an operand whose shape depends on the input values is unknown (`?`),
        as `inputshape2` marks the dims that change: no pass may fold the example's size."""
        for operand in self._value_shaped:
            if operand.shape:
                operand.shape = [UNKNOWN_DIM] * len(operand.shape)

    def _custom_op(self, func, args, kwargs):
        result = func(*args, **kwargs)
        schema = naming.custom_op_schema(func)
        bound = list(args) + [kwargs[a.name] for a in schema.arguments[len(args):] if a.name in kwargs]
        inputs, inputnames, params = [], [], {}
        for j, value in enumerate(bound):
            if isinstance(value, torch.Tensor):
                inputs.append(self.operand_of(value))
                inputnames.append(f"arg_{j}")
            else:
                params[f"arg_{j}"] = self._param(naming.custom_op_type(func), f"arg_{j}", value)
        op_type = naming.custom_op_type(func)
        results = [t for t in iter_values(result) if isinstance(t, torch.Tensor)]
        self._emit(op_type, self._op_name(op_type), inputs, inputnames, params, results)
        return result

    def close(self) -> None:
        for hook in self._hooks:
            hook.remove()


_VALUE_FUNCTIONS = (torch.equal, torch.allclose, torch.is_nonzero)


def names_class(entry, cls) -> bool:
    """Whether a moduleop entry (a class, `module.Class`, `Class`) names `cls`."""
    return entry is cls or entry in (f"{cls.__module__}.{cls.__qualname__}", cls.__qualname__, cls.__name__)


def _copies_as_is(op_type: str, args) -> bool:
    """`view.copy_(src)` with src of the view's very shape and dtype: the new value is src."""
    if op_type != "Tensor.copy" or len(args) < 2 or not isinstance(args[1], torch.Tensor):
        return False
    view, src = args[0], args[1]
    return src.shape == view.shape and src.dtype == view.dtype and src.device == view.device


def _named_plain_tensors(model: nn.Module):
    """(path, tensor) for each tensor held as a plain module attribute (`self.t = tensor`,
    neither parameter nor buffer): it is named after its path like a buffer is."""
    for prefix, module in model.named_modules(remove_duplicate=False):
        for key, value in vars(module).items():
            if isinstance(value, torch.Tensor):
                yield (f"{prefix}.{key}" if prefix else key), value


def clone_tensors(value):
    """`value` with each tensor in it (through tuples, lists and dicts) cloned."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(clone_tensors(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tensors(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tensors(v) for k, v in value.items()}
    return value


def iter_values(value):
    """The leaves of nested tuples, lists and dicts (model inputs/outputs, op results)."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from iter_values(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from iter_values(v)


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


def _announce_writes(func, args, kwargs) -> None:
    """A call about to write a tensor in place (`x.add_(1)`, `x[i] = y`, `out=`, `inplace=True`):
    the weights captured as views of that tensor keep their values (ir.own_views_of)."""
    targets = [kwargs.get("out")]
    if args and (naming.is_inplace(func) or kwargs.get("inplace") is True
                 or getattr(func, "__name__", "") == "__setitem__"):
        targets.append(args[0])
    for target in iter_values(targets):
        if isinstance(target, torch.Tensor):
            own_views_of(target)
