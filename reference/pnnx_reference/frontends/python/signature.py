"""Bind the arguments of a captured call to their Python keyword names, defaults included,
so `F.normalize(x, eps=1e-3)` becomes params `dim=1 eps=0.001 p=2.0` and input `$input`."""
from __future__ import annotations

import functools
import inspect
import types

import torch
from torch._jit_internal import boolean_dispatched

# Arguments that never become params (they steer execution, not the computation).
DROPPED = {"out", "inplace", "_stacklevel", "layout", "device", "pin_memory", "requires_grad",
           "memory_format", "non_blocking", "copy", "generator"}
# Upstream's keyword names where the Python signature differs (Tensor.view(*shape)).
RENAMES = {("Tensor.view", "size"): "shape", ("Tensor.reshape", "size"): "shape",
           ("Tensor.expand", "size"): "sizes", ("Tensor.repeat", "repeats"): "sizes",
           ("Tensor.permute", "dims"): "dims"}


@functools.lru_cache(maxsize=None)
def _python_signature(func):
    if isinstance(func, types.FunctionType) and func in boolean_dispatched:
        func = boolean_dispatched[func]["if_false"]  # F.max_pool2d(..., return_indices=False)
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


@functools.lru_cache(maxsize=None)
def _schemas(name: str):
    return [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}")
            if not any(a.name == "out" for a in s.arguments) and s.overload_name not in ("out",)]


def _accepts(arg_type: str, value, name: str = "") -> bool:
    """Whether `value` fits a TorchScript schema type such as `Optional[List[int]]`."""
    if arg_type.startswith("Optional["):
        return value is None or _accepts(arg_type[9:-1], value, name)
    if name in ("dtype", "memory_format", "layout"):
        return isinstance(value, (torch.dtype, torch.memory_format, torch.layout))
    if isinstance(value, torch.Tensor):
        return arg_type == "Tensor" or (arg_type in ("number", "Scalar") and value.dim() == 0)
    if arg_type.startswith("List["):
        inner = arg_type[5:-1]
        if isinstance(value, (list, tuple)):
            return all(_accepts(inner, v) for v in value)
        return inner == "int" and _accepts("int", value)  # int[2] accepts a single int
    checks = {
        "Tensor": lambda v: False,
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda v: isinstance(v, bool),
        "str": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, (int, float, bool, complex)),
        "complex": lambda v: isinstance(v, (int, float, complex)),
    }
    check = checks.get(arg_type)
    return check(value) if check is not None else True


def _schema_bind(name: str, args: tuple, kwargs: dict):
    for schema in _schemas(name):
        positional = [a for a in schema.arguments if not a.kwarg_only]
        packed = _pack_varargs(positional, args)
        if packed is None:
            continue
        names = {a.name for a in schema.arguments}
        if not set(kwargs) <= names:
            continue
        bound = dict(zip((a.name for a in positional), packed))
        if set(bound) & set(kwargs):  # an argument given twice: another overload is meant
            continue
        bound.update(kwargs)
        if any(a.name not in bound and not a.has_default_value() for a in schema.arguments):
            continue
        if not all(_accepts(str(a.type), bound[a.name], a.name) for a in schema.arguments if a.name in bound):
            continue
        return [(a.name, _as_declared(str(a.type), bound[a.name] if a.name in bound else a.default_value))
                for a in schema.arguments]
    return None


def _as_declared(arg_type: str, value):
    """`x.view(24)` and `torch.sum(x, 1)`: an int given for an int list is a one-element list."""
    if arg_type.removeprefix("Optional[").startswith("List[int]") and isinstance(value, int) \
            and not isinstance(value, bool):
        return [value]
    return value


def _pack_varargs(positional, args):
    """Tensor.view(1, -1) binds as view(self, size=[1, -1]); torch.einsum("ii", x) as
    einsum(equation, tensors=[x]); torch.randn(2, 3) as randn(size=[2, 3])."""
    if len(args) < len(positional) or not positional:
        return list(args)
    last = len(positional) - 1
    if not str(positional[last].type).startswith("List["):
        return list(args) if len(args) == len(positional) else None
    rest = list(args[last:])
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        return list(args)
    return list(args[:last]) + [rest]


def bind(func, op_type: str, args: tuple, kwargs: dict) -> list[tuple[str, object]]:
    """(keyword, value) pairs for every argument, in signature order, defaults filled in."""
    signature = _python_signature(func) if not op_type.startswith("Tensor.") else None
    pairs = None
    if signature is not None and not _has_only_varargs(signature):
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            pairs = list(bound.arguments.items())
        except TypeError:
            pairs = None
    if pairs is None:
        name = getattr(func, "__name__", op_type.split(".")[-1])
        pairs = _schema_bind(name, args, kwargs) or _schema_bind(op_type.split(".")[-1], args, kwargs)
    if pairs is None:
        pairs = [("input" if i == 0 else f"arg_{i}", a) for i, a in enumerate(args)] + list(kwargs.items())
    return [(_keyword(op_type, k), v) for k, v in pairs if k not in DROPPED]


def _keyword(op_type: str, name: str) -> str:
    return "input" if name == "self" else RENAMES.get((op_type, name), name)


def _has_only_varargs(signature) -> bool:
    return any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values())
