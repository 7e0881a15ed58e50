"""The generic rule: an aten operator without a rule of its own goes to the same-named
`F.*`, `torch.*` or `Tensor.*` callable (tensors positional, the rest by keyword)."""
from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F

from ...errors import ConversionError

# Operators upstream writes as Tensor methods even where a torch function exists.
_TENSOR_FIRST = {"view", "reshape", "permute", "contiguous", "expand", "expand_as", "repeat",
                 "type_as", "masked_fill", "view_as", "reshape_as", "new_zeros", "new_ones",
                 "new_full", "new_empty", "index_put", "fill", "zero", "clone", "detach", "float",
                 "int", "long", "half", "double", "bool", "to"}
_DROPPED = {"memory_format", "layout", "device", "pin_memory", "non_blocking", "copy"}


def _accepts(fn, kwargs: dict) -> dict:
    """Keep the keywords a Python function takes; builtins get all of them."""
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return kwargs
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return kwargs
    return {k: v for k, v in kwargs.items() if k in parameters}


def _generic(name: str, kwargs: dict):
    kwargs = {k: v for k, v in kwargs.items() if k not in _DROPPED}
    first_name = next(iter(kwargs), None)
    this = kwargs.pop(first_name) if first_name in ("self", "input") else None
    candidates, original = [], name
    if name.endswith("_") and callable(getattr(F, name, None)):
        candidates.append(("function", getattr(F, name)))  # F.relu_ and friends exist as such
    name = name.rstrip("_") if not name.startswith("_") else name
    if name not in _TENSOR_FIRST:
        for namespace in (F, torch, torch.special, torch.linalg, torch.fft):
            fn = getattr(namespace, name, None)
            if namespace in _PREFIXES:
                prefix = _PREFIXES[namespace]
                fn = getattr(namespace, name[len(prefix):], None) if name.startswith(prefix) else None
            if callable(fn):
                candidates.append(("function", fn))
    for method in (name, original):
        # only methods: reading a property (`x.real`) is a call the capture would record
        if isinstance(this, torch.Tensor) and callable(getattr(torch.Tensor, method, None)):
            candidates.append(("method", getattr(this, method)))
    for style, fn in candidates:
        first = (this,) if style == "function" and this is not None else ()
        try:
            rest = dict(kwargs)
            return fn(*first, *_leading_tensors(fn, rest), **_accepts(fn, rest))
        except TypeError:
            continue
    given = {**({"self": this} if this is not None else {}), **kwargs}
    args = ", ".join(f"{k}={_kind(v)}" for k, v in given.items())
    raise ConversionError(f"TorchScript operator aten::{name} has no Python API mapping for its arguments ({args})")


def _kind(value) -> str:
    """An argument's type as the error shows it: `list[SymInt]` for sizes a trace kept symbolic
    (ssdlite's torch.stack of image sizes)."""
    if isinstance(value, (list, tuple)):
        kinds = sorted({type(v).__name__ for v in value})
        return f"{type(value).__name__}[{'|'.join(kinds)}]"
    return type(value).__name__


_PREFIXES = {torch.special: "special_", torch.linalg: "linalg_", torch.fft: "fft_"}


def _leading_tensors(fn, kwargs: dict) -> tuple:
    """Tensor arguments of a torch builtin go positionally (`torch.atan2(a, b)`), as users
    write them: the tracer turns positional binary calls into pnnx.Expression. A `Tensor[]
    tensors` argument of a function taking `*tensors` (torch.meshgrid, broadcast_tensors,
    block_diag, cartesian_prod) is spread."""
    if isinstance(kwargs.get("tensors"), (list, tuple)) and _takes_varargs(fn):
        return tuple(kwargs.pop("tensors"))
    if inspect.isfunction(fn) or inspect.ismethod(fn) or getattr(fn, "__self__", None) is not None \
            and isinstance(fn.__self__, torch.Tensor):
        return ()
    leading = []
    for key in list(kwargs):
        if not isinstance(kwargs[key], torch.Tensor):
            break
        leading.append(kwargs.pop(key))
    return tuple(leading)


def _takes_varargs(fn) -> bool:
    try:
        return any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
