"""The core of the capture, as torch.fx's `Graph.create_node` is: the Graph being built, the
operand each traced tensor stands for (and the value it had), and `emit`, which adds one
operator. It also follows which operands depend on the input values (valuedep.py): an
operator's outputs do when one of its inputs does, and its outputs' shapes do when one of its
inputs' shapes does.

Everything that decides *what* to record (the TorchFunctionMode in tracer.py, leaves.py,
getitem.py, setitem.py, inplace.py, customop.py, getters.py, valuecheck.py) sits above this
module and calls it; it imports none of them."""
from __future__ import annotations

import contextlib
import itertools
import weakref

import torch
import torch.nn as nn

from ...errors import ConversionError, NotAParam
from ...ir import UNKNOWN_DIM, Attribute, Graph, Operand, Operator, annotation_suffix_of
from . import valuedep
from .params import to_param, without_whitespace
from .spilled import SpilledValues
from .shapes import ARMED, SymInt, has_symint, operands_of, render


def disarmed(fn):
    """The tracer's own code: sizes may become ints here (the user's code is not running)."""
    def run(*args, **kwargs):
        armed, ARMED[0] = ARMED[0], False
        try:
            return fn(*args, **kwargs)
        finally:
            ARMED[0] = armed
    return run


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


def tensors_in(value) -> list[torch.Tensor]:
    return [t for t in iter_values(value) if isinstance(t, torch.Tensor)]


class Recorder:
    def __init__(self, model: nn.Module, policy: valuedep.ValueDependence):
        """`policy`: what to do with value-dependent conversions."""
        self.graph = Graph()
        # the value each operand had while tracing (tensors on disk: spilled.py)
        self.values: SpilledValues = SpilledValues()
        self.policy = policy
        self.dynamic: set[Operand] = set()        # operands whose value depends on the inputs
        self.value_shaped: set[Operand] = set()   # ... and whose shape does (torch.nonzero)
        # id(tensor) -> (weak reference to it, its operand): a tensor the model drops is freed
        # (its value is in `values`), and its entry goes with it
        self._tensors: dict[int, tuple[weakref.ref, Operand]] = {}
        # id(view) -> (weak reference to the view, base, index) for each view made by basic
        # indexing `base[index]` (add_view, view_of)
        self._views: dict[int, tuple[weakref.ref, torch.Tensor, object]] = {}
        self.muted = 0   # > 0: calls are not recorded (inside a leaf, or our own torch calls)
        self._counters = {k: itertools.count() for k in ("operand", "op", "expr", "const", "unique")}
        self._names: set[str] = set()
        self._tensor_paths = {id(t): p for p, t in itertools.chain(
            _named_plain_tensors(model),
            model.named_parameters(remove_duplicate=False), model.named_buffers(remove_duplicate=False))}

    @contextlib.contextmanager
    def quiet(self):
        """Our own torch calls (reading weights) must not be recorded."""
        self.muted += 1
        try:
            yield
        finally:
            self.muted -= 1

    # --- names -------------------------------------------------------------------------
    def unique(self, name: str) -> str:
        if name in self._names:
            name = f"pnnx_unique_{next(self._counters['unique'])}"
        self._names.add(name)
        return name

    def op_name(self, op_type: str) -> str:
        return f"{op_type}_{next(self._counters['op'])}"

    def expr_name(self) -> str:
        return f"pnnx_expr_{next(self._counters['expr'])}"

    # --- operands ------------------------------------------------------------------
    def _new_operand(self, value, kept: bool = False) -> Operand:
        """`kept`: the value stays in memory (a constant the graph's Attribute holds anyway)."""
        operand = self.graph.new_operand(f"pnnx_{next(self._counters['operand'])}")
        if isinstance(value, torch.Tensor):
            with self.quiet():
                operand.shape = [int(d) for d in value.shape]
                operand.dtype = annotation_suffix_of(value.dtype)
                self.rebind(value, operand)
        if kept:
            self.values.keep(operand, value)
        else:
            self.values[operand] = value
        return operand

    def known(self, tensor) -> Operand | None:
        """The operand a recorded op produced as `tensor`, or None."""
        known = self._tensors.get(id(tensor))
        return known[1] if known is not None and known[0]() is tensor else None

    def is_traced(self, tensor) -> bool:
        """Whether `tensor` was recorded."""
        return self.known(tensor) is not None

    def rebind(self, tensor: torch.Tensor, operand: Operand) -> None:
        """`tensor` stands for `operand` from now on (`x.data`, `x[...]`)."""
        self._tensors[id(tensor)] = (weakref.ref(tensor, _forgetting(self._tensors, id(tensor))), operand)

    def add_view(self, view: torch.Tensor, base: torch.Tensor, index) -> None:
        """`view` is `base[index]` (basic indexing): a write into it is a write into `base`."""
        self._views[id(view)] = (weakref.ref(view, _forgetting(self._views, id(view))), base, index)

    def view_of(self, tensor) -> tuple[torch.Tensor, object] | None:
        """(base, index) when `tensor` is a view add_view recorded, else None."""
        known = self._views.get(id(tensor))
        return (known[1], known[2]) if known is not None and known[0]() is tensor else None

    def operand_of(self, tensor: torch.Tensor) -> Operand:
        known = self.known(tensor)
        return known if known is not None else self._constant(tensor)

    def _constant(self, tensor: torch.Tensor) -> Operand:
        """A tensor not produced by a recorded op: a parameter, buffer or constant."""
        path = self._tensor_paths.get(id(tensor))
        name = path if path is not None else f"pnnx_{next(self._counters['const'])}"
        op = self.graph.new_operator("pnnx.Attribute", self.unique(name))
        with self.quiet():
            op.attrs["data"] = Attribute.from_torch(tensor.detach())
        operand = self._new_operand(tensor, kept=True)
        self.graph.connect(op, outputs=[operand])
        return operand

    def add_input(self, tensor: torch.Tensor, index: int) -> None:
        op = self.graph.new_operator("pnnx.Input", self.unique(f"pnnx_input_{index}"))
        operand = self._new_operand(tensor)
        self.dynamic.add(operand)
        self.graph.connect(op, outputs=[operand])

    def add_output(self, tensor: torch.Tensor, index: int) -> None:
        operand = self.operand_of(tensor)
        op = self.graph.new_operator("pnnx.Output", self.unique(f"pnnx_output_{index}"))
        self.graph.connect(op, inputs=[operand])

    # --- operators -----------------------------------------------------------------
    def emit(self, op_type: str, name: str, inputs: list, inputnames: list, params: dict,
             results: list, attrs: dict | None = None) -> Operator:
        op = self.graph.new_operator(op_type, self.unique(name))
        op.params.update(params)
        op.attrs.update(attrs or {})
        op.inputnames = list(inputnames) if any(inputnames) else []
        self.graph.connect(op, inputs=inputs, outputs=[self._new_operand(r) for r in results])
        if op_type not in valuedep.VALUE_FREE and any(i in self.dynamic for i in inputs):
            self.dynamic.update(op.outputs)
        if any(i in self.value_shaped for i in inputs):  # a shape derived from one
            self.value_shaped.update(op.outputs)
        return op

    def add(self, op_type: str, inputs: list, inputnames: list, params: dict, results: list) -> Operator:
        """`emit` under the next `<op_type>_<n>` name."""
        return self.emit(op_type, self.op_name(op_type), inputs, inputnames, params, results)

    def record_call(self, op_type: str, pairs, result) -> None:
        """One operator for a call whose arguments are (name, value) `pairs`: tensors are its
        inputs, traced sizes a pnnx.Expression input, anything else a param."""
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
                inputs.append(self.shape_expression(value))
                inputnames.append(key)
            else:
                params[key] = self.param(op_type, key, value)
        self.add(op_type, inputs, inputnames, params, tensors_in(result))

    def param(self, op_type, key, value):
        try:
            return without_whitespace(op_type, key, to_param(value, key))
        except NotAParam as err:
            raise ConversionError(f"{op_type}: argument {key}: {err}") from None

    def shape_expression(self, value) -> Operand:
        """`x.view(x.size(0), -1)`: the shape list becomes `[size(@0,0),-1]`."""
        operands = operands_of(value, [])
        op = self.graph.new_operator("pnnx.Expression", self.unique(self.expr_name()))
        op.params["expr"] = render(value, operands)
        concrete = [int(v) for v in value] if isinstance(value, (list, tuple)) else int(value)
        out = self._new_operand(concrete)
        self.graph.connect(op, inputs=operands, outputs=[out])
        if any(o in self.value_shaped for o in operands):  # `torch.zeros(idx.size(0))`
            self.value_shaped.add(out)
        return out

    def size(self, tensor, result, dim=None):
        """`x.size()` / `x.shape` as SymInts that remember `size(@x,d)`; reading one as an int
        is a conversion when x's shape depends on the input values."""
        operand = self.operand_of(tensor)
        guard = self.policy.conversion if operand in self.value_shaped else None
        if dim is not None:
            return SymInt(result, ("size", operand, dim % tensor.dim()), guard)
        return torch.Size([SymInt(v, ("size", operand, d), guard) for d, v in enumerate(result)])

    # --- value dependence ------------------------------------------------------------
    def any_dynamic(self, values) -> bool:
        for t in iter_values(values):
            if isinstance(t, torch.Tensor):
                operand = self.known(t)
                if operand is not None and operand in self.dynamic:
                    return True
        return False

    def is_value_shaped(self, tensor) -> bool:
        operand = self.known(tensor)
        return operand is not None and operand in self.value_shaped

    def unknown_value_shapes(self) -> None:
        """Every dim of an operand whose shape depends on the input values is unknown (`?`),
        as `inputshape2` marks the dims that change: no pass may fold the example's size."""
        for operand in self.value_shaped:
            if operand.shape:
                operand.shape = [UNKNOWN_DIM] * len(operand.shape)


def _forgetting(table: dict, key: int):
    """A weak reference's callback: the entry `key` of `table` goes when its tensor is freed
    (unless a tensor born at the same address has taken the entry over since)."""
    def forget(ref) -> None:
        entry = table.get(key)
        if entry is not None and entry[0] is ref:
            del table[key]
    return forget


def _named_plain_tensors(model: nn.Module):
    """(path, tensor) for each tensor held as a plain module attribute (`self.t = tensor`,
    neither parameter nor buffer): it is named after its path like a buffer is."""
    for prefix, module in model.named_modules(remove_duplicate=False):
        for key, value in vars(module).items():
            if isinstance(value, torch.Tensor):
                yield (f"{prefix}.{key}" if prefix else key), value
