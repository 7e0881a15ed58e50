"""The call as the model spelled it, where the graph records it (torch.export's
`meta["torch_fn"]`: `method_descriptor.argmax` for `x.argmax()`, `builtin_function_or_method.argmax`
for `torch.argmax(x)`, `function.relu` for `F.relu(x)`). aten keeps one operator for all
three; calling the callable the model used lets the capture name it as the Python door does
(`Tensor.argmax`, `torch.argmax`, `F.relu`), with that callable's own argument names.

A spelling is only used for the aten call it names (a composite such as `F.normalize`
records its name on each of its several aten calls: none of them is `F.normalize`), and only
when the call binds; otherwise the rule table decides, as it does without a spelling."""
from __future__ import annotations

import functools
import inspect
import re
from pathlib import Path
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..python.expressions import BINARY, REFLECTED, UNARY

NOT_SPELLED = object()
ARITHMETIC = set(UNARY) | set(BINARY) | set(REFLECTED)

# Tensor methods that are one aten `to` / `_to_copy` call (`x.float()`).
CASTS = {"float": torch.float32, "double": torch.float64, "half": torch.float16,
         "bfloat16": torch.bfloat16, "long": torch.int64, "int": torch.int32, "short": torch.int16,
         "char": torch.int8, "byte": torch.uint8, "bool": torch.bool}
_CAST_OPS = {"to", "_to_copy"}
# aten arguments that steer placement and never reach the Python call.
_DROPPED = {"memory_format", "layout", "device", "pin_memory", "non_blocking", "copy"}


@dataclass(frozen=True)
class Spelling:
    kind: str   # "method", "builtin", "function" (a Python function), or its namespace: "F", "torch", "Tensor"
    name: str   # the callable's name


_NAMESPACES = {"F": F, "torch": torch, "Tensor": torch.Tensor}
_KINDS = {"method_descriptor": "method", "builtin_function_or_method": "builtin", "function": "function",
          "wrapper_descriptor": "method"}


def from_torch_fn(torch_fn) -> Spelling | None:
    """`('argmax_1', 'method_descriptor.argmax')` -> Spelling("method", "argmax")."""
    if not (isinstance(torch_fn, tuple) and len(torch_fn) == 2 and isinstance(torch_fn[1], str)):
        return None
    kind, _, name = torch_fn[1].partition(".")
    return Spelling(_KINDS[kind], name) if kind in _KINDS and name else None


# In-place arithmetic: torch.export records `x += y` as the method `add_`, as it does `x.add_(y)`;
# the Python door writes both as one pnnx.Expression, through the operator's in-place method.
IN_PLACE = {"add_": "__iadd__", "sub_": "__isub__", "mul_": "__imul__", "div_": "__itruediv__",
            "floor_divide_": "__ifloordiv__", "remainder_": "__imod__", "pow_": "__ipow__"}


# Where a TorchScript trace recorded the call (the innermost frame of its source range, kept in
# the .pt's debug info): a Python function of torch names its namespace by its file.
_FRAME = re.compile(r"(?P<path>.*)\((?P<line>\d+)\): (?P<function>\w+)$")
_FILES = {"torch/nn/functional.py": "F", "torch/functional.py": "torch", "torch/_tensor.py": "Tensor"}


def from_stack(source_range: str, aten_name: str) -> Spelling | None:
    """The spelling a `.pt` node's source range shows (its Python stack, innermost frame
    first). `F.relu`, `torch.split` and `Tensor.unflatten` are Python functions: the outermost
    frame of torch's own names the call the model made (torch.split runs Tensor.split inside).
    A builtin leaves the model's own frame innermost, which only tells that no Python function
    of torch made the call: an operator the rule table would write as `F.X` (a Python function)
    was then `torch.X` (or `Tensor.X`, which the trace does not tell apart; torch.X is upstream's
    name)."""
    frames = [m for m in map(_FRAME.match, (source_range or "").split("\n")) if m is not None]
    if not frames:
        return None
    in_torch = [_is_torch(m["path"]) for m in frames]
    if not in_torch[0]:
        return Spelling("builtin", aten_name) if aten_name in _PYTHON_F else None
    outer = frames[in_torch.index(False) - 1] if False in in_torch else frames[-1]
    path = outer["path"].replace("\\", "/")
    namespace = next((ns for tail, ns in _FILES.items() if path.endswith(tail)), None)
    return Spelling(namespace, outer["function"]) if namespace is not None else None


def in_torch(source_range: str) -> bool:
    """Whether the innermost frame of a `.pt` node's Python stack is torch's own code."""
    frame = _ANY_FRAME.match((source_range or "").split("\n")[0])
    return frame is not None and _is_torch(frame["path"])


_ANY_FRAME = re.compile(r"(?P<path>.*)\(\d+\): ")  # a frame of any function (`<listcomp>` too)


@functools.lru_cache(maxsize=None)
def _is_torch(path: str) -> bool:
    """A file of torch's own (the trace may come from another machine: matched by the part
    after `/torch/`, which must be a file of the torch installed here)."""
    parts = path.replace("\\", "/").split("/torch/")
    return any((_TORCH_DIR / "/".join(parts[i:])).is_file() for i in range(1, len(parts)))


_TORCH_DIR = Path(torch.__file__).parent


# F.sigmoid and F.tanh are deprecated aliases the rule table never writes.
_PYTHON_F = {name for name in dir(F) if inspect.isfunction(getattr(F, name)) and not name.startswith("_")} \
    - {"sigmoid", "tanh"}


def call(spelling: Spelling, aten_name: str, kwargs: dict):
    """The call through the spelled callable, or NOT_SPELLED where it does not apply."""
    if not _names_this_call(spelling, aten_name):
        return NOT_SPELLED
    kwargs = {k: v for k, v in kwargs.items() if k not in _DROPPED}
    if not kwargs:
        return NOT_SPELLED
    first, *_ = kwargs
    this, rest = kwargs[first], {k: v for k, v in kwargs.items() if k != first}
    if spelling.name == "__getitem__":
        return _select(this, rest) if aten_name == "select" else NOT_SPELLED
    if (spelling.name, aten_name) in _RENAMED:
        return _RENAMED[spelling.name, aten_name][0](spelling)(this, rest)
    if aten_name in IN_PLACE:  # `method_descriptor.add_`; `function.pow_` for `**=`
        return _in_place(aten_name, this, rest)
    if spelling.kind == "method":
        return _method(spelling.name, aten_name, this, rest)
    fn = _function(spelling)
    if fn is None:
        return NOT_SPELLED
    return _bound(fn, (this,), rest)


def _norm(this, rest: dict):
    """torch.norm(x, p, dim, keepdim, dtype) is aten linalg_vector_norm(x, ord, ...); its
    default p='fro' is the 2-norm (an explicit p=2 reads the same: it is written 'fro')."""
    dim = rest.get("dim")
    dim = dim[0] if isinstance(dim, (list, tuple)) and len(dim) == 1 else dim
    ord_ = rest.get("ord", 2)
    return torch.norm(this, p="fro" if ord_ == 2 else ord_, dim=dim, keepdim=rest.get("keepdim", False),
                      dtype=rest.get("dtype"))


def _split(spelling: Spelling):
    """torch.split / Tensor.split with a list of sizes is aten split_with_sizes."""
    def call(this, rest: dict):
        fn = torch.split if spelling.kind == "torch" else torch.Tensor.split
        return fn(this, list(rest["split_sizes"]), rest.get("dim", 0))
    return call


# Python functions of torch that are one aten call of another name: (function, aten) -> call
# maker, given the spelling, and the namespaces the function is spelled in.
_RENAMED = {("norm", "linalg_vector_norm"): (lambda spelling: _norm, ("torch",)),
            ("split", "split_with_sizes"): (_split, ("torch", "Tensor"))}


def _names_this_call(spelling: Spelling, aten_name: str) -> bool:
    if (spelling.name, aten_name) in _RENAMED:
        return spelling.kind in _RENAMED[spelling.name, aten_name][1]
    if spelling.name == "__getitem__":
        return aten_name == "select"
    if spelling.name in ARITHMETIC:  # `x + y`, `x.add(y)`: one pnnx.Expression, as the rule writes it
        return False
    if aten_name in _CAST_OPS:
        return spelling.kind == "method" and (spelling.name in CASTS or spelling.name == "to")
    return spelling.name == aten_name


def _in_place(aten_name: str, this, rest: dict):
    """`x += y` (or `x.add_(y)`) as the operator's in-place method, which the capture writes as
    an expression and which still writes `x`; a call with more (alpha, rounding_mode) is not."""
    other = rest.get("other", rest.get("exponent"))
    more = {k: v for k, v in rest.items() if k not in ("other", "exponent") and not (k == "alpha" and v == 1)}
    if not isinstance(this, torch.Tensor) or other is None or more:
        return NOT_SPELLED
    return getattr(this, IN_PLACE[aten_name])(other)


def _select(this, rest: dict):
    """`x[:, 2]`: the index the model wrote, which the capture records as the Python door does."""
    if not isinstance(this, torch.Tensor) or not isinstance(rest.get("dim"), int) \
            or not isinstance(rest.get("index"), int):
        return NOT_SPELLED
    return this[(slice(None),) * (rest["dim"] % this.dim()) + (rest["index"],)]


def _method(name: str, aten_name: str, this, rest: dict):
    if not isinstance(this, torch.Tensor) or not hasattr(this, name):
        return NOT_SPELLED
    if name in CASTS:  # x.float(): the cast the aten call makes, nothing else
        dtype = rest.get("dtype")
        return getattr(this, name)() if dtype in (None, CASTS[name]) else NOT_SPELLED
    if aten_name in _CAST_OPS:
        return NOT_SPELLED  # x.to(...): the rule writes it
    return _bound(getattr(this, name), (), rest)


def _function(spelling: Spelling):
    """The callable: a builtin from torch (F's builtins are torch's); the one Python function
    of that name in F, torch or Tensor (`F.relu`, `Tensor.unflatten`; `function.split` names
    both torch.split and Tensor.split, and is left to the rule table)."""
    if spelling.kind in _NAMESPACES:
        fn = getattr(_NAMESPACES[spelling.kind], spelling.name, None)
        return fn if inspect.isfunction(fn) else None
    builtin = spelling.kind == "builtin"
    found = []
    for namespace in ((torch, torch._C._nn) if builtin else (F, torch, torch.Tensor)):
        fn = getattr(namespace, spelling.name, None)
        if callable(fn) and inspect.isbuiltin(fn) == builtin and inspect.isroutine(fn):
            found.append(fn)
    return found[0] if found and (builtin or len(found) == 1) else None


def _bound(fn, leading: tuple, rest: dict):
    """fn(*leading, **rest) where fn takes those keywords; else the arguments in schema order
    where fn takes exactly that many (a builtin parses them by the same schema)."""
    for args, kwargs in _attempts(fn, leading, rest):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            continue
    return NOT_SPELLED


# Parameters of a Python function that the aten call cannot carry but that change nothing it
# computes. Any other one left at its default may be work the function does around the aten
# call (torch.stft's `center` pads before aten::stft, which has no such argument).
_NO_EFFECT = {"inplace", "_stacklevel"}


def _attempts(fn, leading: tuple, rest: dict):
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin: its own parser checks names and types
        yield leading, rest
        yield leading + tuple(rest.values()), {}
        return
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return
    names = {p.name for p in parameters[len(leading):]}
    if set(rest) <= names and names - set(rest) <= _NO_EFFECT:
        yield leading, rest
    elif len(parameters) == len(leading) + len(rest):
        yield leading + tuple(rest.values()), {}
