"""The shared `aten::` rule table: an aten call back to the Python API, one small rule per
operator, used by every frontend that reads aten graphs (TorchScript `.pt`, torch.export
`.pt2`). A frontend names the call's arguments by the operator's schema and calls
`call(name, kwargs)` under the Python-API tracer, which records what the rule calls.
Operators without a rule go to the same-named `F.*`, `torch.*` or `Tensor.*` callable
(tensors positional, the rest by keyword).

A rule whose Python call is named differently from its aten operator says what it calls in
`produces=(...)` (`pnnx-cases where F.conv2d` finds `_convolution` by it); a rule without
the trait calls the same-named operator (aten `einsum` -> `torch.einsum`)."""
from __future__ import annotations

import inspect
import operator

import torch
import torch.nn.functional as F

from ...errors import ConversionError
from ...registry import Registry

RULES = Registry("aten", "aten operator name (no `aten::`) -> fn(name, kwargs) calling the Python API")
_INT64_MAX = 9223372036854775807
# Operators upstream writes as Tensor methods even where a torch function exists.
_TENSOR_FIRST = {"view", "reshape", "permute", "contiguous", "expand", "expand_as", "repeat",
                 "type_as", "masked_fill", "view_as", "reshape_as", "new_zeros", "new_ones",
                 "new_full", "new_empty", "index_put", "fill", "zero", "clone", "detach", "float",
                 "int", "long", "half", "double", "bool", "to"}
_DROPPED = {"memory_format", "layout", "device", "pin_memory", "non_blocking", "copy"}


rule = RULES.register


def call(name: str, kwargs: dict):
    """Run aten operator `name` (`conv2d`, `add_`, ...) with its arguments named by its schema,
    through the Python API."""
    if not any(isinstance(v, torch.Tensor) for v in _flat(kwargs.values())) and name in _SCALAR_OPS:
        return _SCALAR_OPS[name](*kwargs.values())
    found = RULES.lookup(name)
    if found is not None:
        return found.fn(name, kwargs)
    base = name.rstrip("_") if not name.startswith("_") else name
    found = RULES.lookup(base)
    if found is not None:
        return found.fn(base, kwargs)
    return _generic(name, kwargs)


def _flat(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


# --- the generic rule ------------------------------------------------------------------------
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
        if isinstance(this, torch.Tensor) and hasattr(this, method):
            candidates.append(("method", getattr(this, method)))
    for style, fn in candidates:
        first = (this,) if style == "function" and this is not None else ()
        try:
            rest = dict(kwargs)
            return fn(*first, *_leading_tensors(fn, rest), **_accepts(fn, rest))
        except TypeError:
            continue
    raise ConversionError(f"TorchScript operator aten::{name} has no Python API mapping")


_PREFIXES = {torch.special: "special_", torch.linalg: "linalg_", torch.fft: "fft_"}


def _leading_tensors(fn, kwargs: dict) -> tuple:
    """Tensor arguments of a torch builtin go positionally (`torch.atan2(a, b)`), as users
    write them: the tracer turns positional binary calls into pnnx.Expression."""
    if inspect.isfunction(fn) or inspect.ismethod(fn) or getattr(fn, "__self__", None) is not None \
            and isinstance(fn.__self__, torch.Tensor):
        return ()
    leading = []
    for key in list(kwargs):
        if not isinstance(kwargs[key], torch.Tensor):
            break
        leading.append(kwargs.pop(key))
    return tuple(leading)


# --- arithmetic: Python operators, so the tracer records pnnx.Expression --------------------
@rule("add", "sub")
def _add_sub(name, kw):
    other = kw["other"] if kw.get("alpha", 1) == 1 else kw["other"] * kw["alpha"]
    return kw["self"] + other if name == "add" else kw["self"] - other


@rule("rsub")
def _rsub(name, kw):
    other = kw["other"] if kw.get("alpha", 1) == 1 else kw["other"] * kw["alpha"]
    return other - kw["self"]


_BINARY = {"mul": operator.mul, "pow": operator.pow, "remainder": operator.mod,
           "floor_divide": operator.floordiv, "matmul": operator.matmul, "__and__": operator.and_,
           "__or__": operator.or_, "__xor__": operator.xor}


@rule(*_BINARY)
def _binary(name, kw):
    second = kw.get("other", kw.get("exponent"))
    return _BINARY[name](kw["self"], second)


@rule("div")
def _div(name, kw):
    mode = kw.get("rounding_mode")
    if mode is None:
        return kw["self"] / kw["other"]
    if mode == "floor":
        return kw["self"] // kw["other"]
    return torch.div(kw["self"], kw["other"], rounding_mode=mode)


@rule("neg")
def _neg(name, kw):
    return -kw["self"]


# --- indexing --------------------------------------------------------------------------------
def _index_at(dim: int, item) -> tuple:
    if dim < 0:
        return (Ellipsis, item) + (slice(None),) * (-dim - 1)
    return (slice(None),) * dim + (item,)


@rule("slice")
def _slice(name, kw):
    start, end, step = kw.get("start"), kw.get("end"), kw.get("step", 1)
    end = None if end == _INT64_MAX else end
    start = None if start == 0 else start
    if start is None and end is None and step == 1:
        return kw["self"]  # a full slice is how tracing writes the `:` of other dims
    return kw["self"][_index_at(kw["dim"], slice(start, end, step))]


@rule("select")
def _select_method(name, kw):
    return kw["self"].select(kw["dim"], kw["index"])  # upstream writes Tensor.select


@rule("size")
def _size(name, kw):
    return kw["self"].size(kw["dim"]) if "dim" in kw else kw["self"].size()


# --- calls whose Python form differs from the aten schema ------------------------------------
@rule("_convolution", "convolution", produces=(
    "F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d"))
def _convolution(name, kw):
    spatial = kw["weight"].dim() - 2
    common = dict(input=kw["input"], weight=kw["weight"], bias=kw["bias"], stride=kw["stride"],
                  padding=kw["padding"], dilation=kw["dilation"], groups=kw["groups"])
    if kw["transposed"]:
        fn = getattr(F, f"conv_transpose{spatial}d")
        return fn(output_padding=kw["output_padding"], **common)
    return getattr(F, f"conv{spatial}d")(**common)


@rule("batch_norm")
def _batch_norm(name, kw):
    return F.batch_norm(kw["input"], kw["running_mean"], kw["running_var"], kw["weight"], kw["bias"],
                        kw["training"], kw["momentum"], kw["eps"])


@rule("instance_norm")
def _instance_norm(name, kw):
    return F.instance_norm(kw["input"], kw["running_mean"], kw["running_var"], kw["weight"], kw["bias"],
                           kw["use_input_stats"], kw["momentum"], kw["eps"])


@rule("layer_norm")
def _layer_norm(name, kw):
    return F.layer_norm(kw["input"], kw["normalized_shape"], kw["weight"], kw["bias"], kw["eps"])


@rule("group_norm")
def _group_norm(name, kw):
    return F.group_norm(kw["input"], kw["num_groups"], kw["weight"], kw["bias"], kw["eps"])


@rule("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout",
      produces=("F.dropout", "F.dropout2d", "F.alpha_dropout", "F.feature_alpha_dropout"))
def _dropout(name, kw):
    fn = {"dropout": F.dropout, "feature_dropout": F.dropout2d, "alpha_dropout": F.alpha_dropout,
          "feature_alpha_dropout": F.feature_alpha_dropout}[name]
    return fn(kw["input"], kw["p"], kw["train"])


_UPSAMPLE = {"upsample_nearest1d": "nearest", "upsample_nearest2d": "nearest",
             "upsample_nearest3d": "nearest", "upsample_linear1d": "linear",
             "upsample_bilinear2d": "bilinear", "upsample_trilinear3d": "trilinear",
             "upsample_bicubic2d": "bicubic", "_upsample_nearest_exact2d": "nearest-exact"}


@rule(*_UPSAMPLE, produces=("F.interpolate",))
def _upsample(name, kw):
    size, scale = kw.get("output_size"), kw.get("scale_factors", kw.get("scales"))
    extra = {"align_corners": kw["align_corners"]} if "align_corners" in kw else {}
    if size is not None and scale is not None:
        scale = None
    return F.interpolate(kw["input"], size=size, scale_factor=scale, mode=_UPSAMPLE[name], **extra)


@rule("contiguous", "detach", "clone")
def _identity_method(name, kw):
    return getattr(kw["self"], name)()


@rule("to")
def _to(name, kw):
    dtype = kw.get("dtype")
    if isinstance(kw.get("other"), torch.Tensor):
        return kw["self"].to(kw["other"])
    return kw["self"].to(dtype) if dtype is not None else kw["self"]


@rule("Int", "Float", produces=())  # Python scalars, no operator
def _cast_scalar(name, kw):
    return int(kw["a"]) if name == "Int" else float(kw["a"])


# Calls on plain Python values (scripted control flow, shape arithmetic).
_SCALAR_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
               "div": lambda a, b, rounding_mode=None: a / b if rounding_mode is None else a // b,
               "floordiv": operator.floordiv, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
               "gt": operator.gt, "le": operator.le, "ge": operator.ge, "__not__": operator.not_,
               "neg": operator.neg, "len": len, "__getitem__": lambda s, i: s[i], "__is__": operator.is_,
               "__isnot__": operator.is_not, "remainder": operator.mod, "floor_divide": operator.floordiv,
               "__and__": operator.and_, "__or__": operator.or_, "__contains__": operator.contains,
               "format": lambda fmt, *a: fmt.format(*a), "warn": lambda *a: None,
               "append": lambda lst, x: lst.append(x) or lst}


@rule("einsum")
def _einsum(name, kw):
    return torch.einsum(kw["equation"], *kw["tensors"])


@rule("embedding")
def _embedding(name, kw):
    padding_idx = None if kw["padding_idx"] == -1 else kw["padding_idx"]
    return F.embedding(kw["indices"], kw["weight"], padding_idx=padding_idx,
                       scale_grad_by_freq=kw["scale_grad_by_freq"], sparse=kw["sparse"])


@rule("grid_sampler", produces=("F.grid_sample",))
def _grid_sampler(name, kw):
    mode = ("bilinear", "nearest", "bicubic")[kw["interpolation_mode"]]
    padding = ("zeros", "border", "reflection")[kw["padding_mode"]]
    return F.grid_sample(kw["input"], kw["grid"], mode=mode, padding_mode=padding,
                         align_corners=kw["align_corners"])


@rule("affine_grid_generator", produces=("F.affine_grid",))
def _affine_grid(name, kw):
    return F.affine_grid(kw["theta"], kw["size"], align_corners=kw["align_corners"])


@rule("log_sigmoid", produces=("F.logsigmoid",))
def _logsigmoid(name, kw):
    return F.logsigmoid(kw["self"])


@rule("im2col", produces=("F.unfold",))
def _im2col(name, kw):
    return F.unfold(kw["self"], kw["kernel_size"], kw["dilation"], kw["padding"], kw["stride"])


@rule("col2im", produces=("F.fold",))
def _col2im(name, kw):
    return F.fold(kw["self"], kw["output_size"], kw["kernel_size"], kw["dilation"], kw["padding"],
                  kw["stride"])
