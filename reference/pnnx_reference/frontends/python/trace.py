"""`trace(model, inputs)`: run the model once under the Tracer and return the graph.

A moduleop call is one operator in the graph; its module is then traced once more on its own,
on a copy of the arguments it was called with, and that body is attached to the operator
(`Operator.subgraph`), so that the Python and ONNX emitters can write what it computes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn as nn

from ...errors import ConversionError, PnnxError, cause
from ...ir import Graph, Operand, Operator, body_weight_key
from . import branches
from .leaves import clone_tensors, names_class
from .recorder import iter_values
from .tracer import Tracer
from .valuedep import BOUNDARIES, ValueDependence


@dataclass
class Capture:
    graph: Graph
    values: dict[Operand, object] = field(default_factory=dict)
    # (moduleop operator, the capture of its body), in graph order; nested bodies have their own
    bodies: list[tuple[Operator, "Capture"]] = field(default_factory=list)
    # value-dependent conversions accepted with allow_value_dependent, one line each
    value_dependent: list[str] = field(default_factory=list)


def _as_tuple(inputs) -> tuple:
    if isinstance(inputs, torch.Tensor):
        return (inputs,)
    if isinstance(inputs, (list, tuple)):
        return tuple(inputs)
    raise ConversionError(f"inputs must be a tensor or a tuple of tensors, not {type(inputs).__name__}")


def trace(model: nn.Module, inputs, *, moduleop=(), allow_value_dependent: bool = False) -> Capture:
    """Record `model(*inputs)` as a Graph of Python-API operators. A value-dependent
    conversion (`int(x.max())`, see valuedep.py) raises ConversionError unless
    `allow_value_dependent`, which records it in `Capture.value_dependent` with a warning."""
    if not isinstance(model, nn.Module):
        raise ConversionError(f"the model must be a torch.nn.Module, not {type(model).__name__}")
    args = _as_tuple(inputs)
    _check_moduleop(model, moduleop)
    tensors = [t for t in iter_values(args) if isinstance(t, torch.Tensor)]
    _materialise_lazy(model, args)
    policy = ValueDependence(allow_value_dependent)
    captured = _trace(Tracer(model, tuple(moduleop), policy=policy), tensors, lambda: model(*args))
    if policy.branches:
        captured.value_dependent += branches.prove(policy, captured.graph, lambda forced: _trace(
            Tracer(model, tuple(moduleop), policy=forced), tensors, lambda: model(*args)).graph)
    return captured


def _check_moduleop(model: nn.Module, moduleop) -> None:
    """Every moduleop entry must name a module class the model has: a misspelt one would
    otherwise be ignored and the module traced through."""
    classes = {type(m) for m in model.modules()}
    for entry in moduleop:
        if not any(names_class(entry, c) for c in classes):
            name = entry if isinstance(entry, str) else getattr(entry, "__qualname__", repr(entry))
            own = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if not c.__module__.startswith("torch."))
            listed = own or sorted(f"{c.__module__}.{c.__qualname__}" for c in classes)
            more = f" and {len(listed) - 12} more" if len(listed) > 12 else ""
            raise ConversionError(f"moduleop {name} names no module class of the model; its "
                                  f"{'own ' if own else ''}module classes are {', '.join(listed[:12])}{more}")


def _materialise_lazy(model: nn.Module, args: tuple) -> None:
    """A lazy module (`nn.LazyConv2d`) creates its weights on its first forward and then becomes
    its plain class (`nn.Conv2d`); that first forward runs here, untraced, on copies of the
    inputs, since the Tracer must see the real weights from the start."""
    from torch.nn.modules.lazy import LazyModuleMixin

    if not any(isinstance(m, LazyModuleMixin) and m.has_uninitialized_params() for m in model.modules()):
        return
    try:
        with torch.no_grad():
            model(*clone_tensors(args))
    except Exception as err:
        raise _cannot_run(err) from err


def _cannot_run(err: Exception) -> ConversionError:
    return ConversionError(f"the model cannot run on the given inputs: {cause(err)}")


def _trace(tracer: Tracer, inputs: list, run: Callable[[], object]) -> Capture:
    rec = tracer.recorder
    try:
        for i, tensor in enumerate(inputs):
            rec.add_input(tensor, i)
        with torch.no_grad(), tracer:
            output = run()
        for i, tensor in enumerate(t for t in iter_values(output) if isinstance(t, torch.Tensor)):
            rec.add_output(tensor, i)
        rec.unknown_value_shapes()
    except PnnxError:
        raise
    except (Exception, SystemExit) as err:  # the user's model failed on the example inputs
        raise _cannot_run(err) from err
    finally:
        tracer.close()
    if rec.policy.refused:  # the model caught the refusal and went on
        raise ConversionError(rec.policy.refused[0])
    if not rec.graph.outputs():
        raise ConversionError("the model returned no tensor")
    captured = Capture(rec.graph, rec.values, value_dependent=rec.policy.accepted)
    for op, module, args, kwargs in tracer.leaves.calls:
        body = _trace_body(module, args, kwargs, tracer.leaves.moduleop, rec.policy)
        if body is not None:
            _share_weights(op, body.graph)
            op.subgraph = body.graph
            captured.bodies.append((op, body))
    return captured


def _share_weights(op: Operator, body: Graph) -> None:
    """The body's weights become the very Attribute objects of the moduleop operator, which
    pnnx.bin stores as `<op>.<path>`; a body weight not among them (a constant the forward
    builds) keeps its own data."""
    for inner in body.ops:
        for key, attr in inner.attrs.items():
            mine = op.attrs.get(body_weight_key(inner, key))
            if mine is not None and (mine.shape, mine.dtype, mine.data) == (attr.shape, attr.dtype, attr.data):
                inner.attrs[key] = mine


def _trace_body(module: nn.Module, args: tuple, kwargs: dict, moduleop: tuple,
                policy: ValueDependence) -> Capture | None:
    """The body of one moduleop call, its weights bound to the operator's; None when it cannot
    be captured: the operator then stays opaque, as it is in a graph read from pnnx.param."""
    inputs = [t for t in iter_values(args) if isinstance(t, torch.Tensor)]
    inputs += [v for v in kwargs.values() if isinstance(v, torch.Tensor)]
    try:
        return _trace(Tracer(module, moduleop, body=True, policy=policy), inputs,
                      lambda: module(*args, **kwargs))
    except PnnxError:
        return None


BOUNDARIES.add(_trace.__code__)  # the user's source line is never further out than this
