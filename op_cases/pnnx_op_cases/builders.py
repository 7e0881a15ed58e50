"""Render a Case's `source` from a short declarative description, so families stay short.

Stable API (used by every family module, nn and F/Tensor/torch alike):

Inputs
    rand(*shape, low=-1.0, high=1.0, dtype="f32") -> InputSpec   floats in [low, high)
    ints(*shape, low=0, high=10, dtype="i64")     -> InputSpec   integers in [low, high)
    bools(*shape)                                 -> InputSpec
    Param(shape, low=-1.0, high=1.0, dtype="f32", buffer=False)
        a model parameter (or buffer) `self.<name>` = torch.rand(shape) scaled to [low, high);
        integer dtypes use torch.randint(low, high). A plain tuple means Param(tuple).

Cases (forward arguments are always named x0, x1, ... one per InputSpec, in order)
    module_case(op, variant, ctor, inputs, *, call=None, pre=None, ret=None, init=None,
                modules=None, smoke=False, tags=(), reasons=None, tolerance=None) -> Case
        __init__: `self.m = <ctor>` (e.g. "nn.Conv2d(3, 16, 3, stride=2)"), one
        `self.<name> = <ctor>` per entry of `modules` (more submodules the forward uses,
        e.g. {"fc": "nn.Linear(8, 3)"}), then the `init` lines (run under torch.no_grad();
        e.g. "self.m.running_var.uniform_(0.5, 1.5)").
        forward: the `pre` lines (e.g. "x0 = x0.transpose(1, 2)"), then
        `y = <call>` where call defaults to "self.m(x0, x1, ...)", then `return <ret>`.
        ret: None returns y; a str is a return expression over y; a sequence of str makes a
        tuple (multiple outputs, e.g. ret=("y[0]", "y[1][0]", "y[1][1]") for LSTM).
    call_case(op, variant, call, inputs, *, params=None, pre=None, ret=None, init=None,
              smoke=False, tags=(), reasons=None, tolerance=None) -> Case
        __init__: one `self.<name>` per entry of params (dict name -> shape tuple or Param).
        forward: pre lines, `y = <call>` (e.g. "F.conv2d(x0, self.w0, stride=2)"), return.

    Tags: `smoke=True` adds the smoke tier; `reasons={"no-trace": "why"}` adds each key as
    a tag with its reason (random, training-only and no-trace need one). Tags derived from
    the description are added automatically: multi-input (2+ inputs), multi-output (ret is
    a sequence), integer / bool (such inputs), noncontiguous (a pre line rebinding an input
    to a strided view of itself, e.g. "x0 = x0.transpose(1, 2)" or "x0 = x0[:, ::2]").

Helpers
    vid(*parts, **named) -> str      variant name: vid("2d", k=3, s=2) == "2d_k3_s2";
                                     True -> just the key, False/None -> dropped.
    case_id(op, variant) -> str      "op/variant", validated.
    render_source(init_lines, n_inputs, body_lines) -> str   the module text itself.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from .case import REASON_TAGS, TIER_SMOKE, Case, InputSpec, ToleranceHint

ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*/[A-Za-z0-9_.-]+$")
_INT_DTYPES = {"i8", "i16", "i32", "i64", "u8"}
# a pre line that rebinds an input to a strided view of itself: "x0 = x0.transpose(1, 2)"
_NONCONTIGUOUS = re.compile(r"\bx\d+\s*=\s*x\d+(\.(transpose|permute|movedim|swapaxes|mT|T|t)\b|\[)")

HEADER = (
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
)


# --- inputs and parameters -------------------------------------------------------------
def rand(*shape: int, low: float = -1.0, high: float = 1.0, dtype: str = "f32") -> InputSpec:
    return InputSpec(tuple(shape), dtype, low, high)


def ints(*shape: int, low: int = 0, high: int = 10, dtype: str = "i64") -> InputSpec:
    return InputSpec(tuple(shape), dtype, low, high)


def bools(*shape: int) -> InputSpec:
    return InputSpec(tuple(shape), "bool", 0, 2)


@dataclass(frozen=True)
class Param:
    shape: tuple[int, ...]
    low: float = -1.0
    high: float = 1.0
    dtype: str = "f32"
    buffer: bool = False

    def init_line(self, name: str) -> str:
        value = self._value_expr()
        if self.buffer:
            return f"self.register_buffer({name!r}, {value})"
        grad = ""
        if self.dtype in _INT_DTYPES or self.dtype == "bool":
            grad = ", requires_grad=False"
        return f"self.{name} = nn.Parameter({value}{grad})"

    def _value_expr(self) -> str:
        shape = repr(tuple(self.shape))
        if self.dtype == "bool":
            return f"torch.randint(0, 2, {shape}).bool()"
        if self.dtype in _INT_DTYPES:
            return (f"torch.randint({int(self.low)}, {int(self.high)}, {shape}, "
                    f"dtype={_torch_dtype_name(self.dtype)})")
        expr = f"torch.rand({shape})"
        scale = self.high - self.low
        if scale != 1:
            expr += f" * {_num(scale)}"
        if self.low:
            expr += f" - {_num(-self.low)}" if self.low < 0 else f" + {_num(self.low)}"
        if self.dtype != "f32":
            expr = f"({expr}).to({_torch_dtype_name(self.dtype)})"
        return expr


def _torch_dtype_name(suffix: str) -> str:
    from .dtypes import torch_dtype

    return str(torch_dtype(suffix))      # "torch.int64"


def _num(x: float) -> str:
    return repr(float(x)) if x != int(x) else repr(int(x))


# --- ids and variant names -------------------------------------------------------------
def vid(*parts: object, **named: object) -> str:
    out = [str(p) for p in parts if p not in (None, "", False)]
    for key, value in named.items():
        if value is None or value is False:
            continue
        if value is True:
            out.append(key)
        elif isinstance(value, (tuple, list)):
            out.append(key + "x".join(str(v) for v in value))
        else:
            out.append(f"{key}{value}")
    text = "_".join(out)
    return text.replace("-", "m").replace(" ", "") or "default"


def case_id(op: str, variant: str) -> str:
    cid = f"{op}/{variant}"
    if not ID_RE.match(cid):
        raise ValueError(f"case id {cid!r} is not readable (want op/variant of [A-Za-z0-9_.-])")
    return cid


# --- source rendering ------------------------------------------------------------------
def render_source(init_lines: Sequence[str], n_inputs: int, body_lines: Sequence[str]) -> str:
    args = ", ".join(["self"] + [f"x{i}" for i in range(n_inputs)])
    uses_torchvision = any("torchvision." in ln for ln in list(init_lines) + list(body_lines))
    lines = [HEADER + ("import torchvision\n" if uses_torchvision else ""), "", "class Model(nn.Module):",
             "    def __init__(self):",
             "        super().__init__()"]
    lines += [f"        {ln}" for ln in init_lines]
    lines += ["", f"    def forward({args}):"]
    lines += [f"        {ln}" for ln in body_lines]
    return "\n".join(lines) + "\n"


def _lines(text: str | Sequence[str] | None) -> list[str]:
    if text is None:
        return []
    if isinstance(text, str):
        return [ln for ln in text.splitlines() if ln.strip()]
    return list(text)


def _init_block(init: str | Sequence[str] | None) -> list[str]:
    lines = _lines(init)
    if not lines:
        return []
    return ["with torch.no_grad():"] + [f"    {ln}" for ln in lines]


def _return_lines(call: str, ret: str | Sequence[str] | None) -> list[str]:
    if ret is None:
        return [f"return {call}"]
    expr = ret if isinstance(ret, str) else ", ".join(ret)
    return [f"y = {call}", f"return {expr}"]


def _auto_tags(inputs: Sequence[InputSpec], ret, pre) -> set[str]:
    tags = set()
    if len(inputs) > 1:
        tags.add("multi-input")
    if ret is not None and not isinstance(ret, str) and len(ret) > 1:
        tags.add("multi-output")
    if any(s.dtype in _INT_DTYPES for s in inputs):
        tags.add("integer")
    if any(s.dtype == "bool" for s in inputs):
        tags.add("bool")
    if pre and any(_NONCONTIGUOUS.search(ln) for ln in _lines(pre)):
        tags.add("noncontiguous")
    return tags


def _make_case(op, variant, source, inputs, *, smoke, tags, reasons, tolerance, ret, pre) -> Case:
    reasons = dict(reasons or {})
    all_tags = set(tags) | set(reasons) | _auto_tags(inputs, ret, pre)
    if smoke:
        all_tags.add(TIER_SMOKE)
    missing = sorted(t for t in all_tags & REASON_TAGS if not reasons.get(t))
    if missing:
        raise ValueError(f"{op}/{variant}: tag(s) {missing} need a reason")
    return Case(id=case_id(op, variant), op=op, source=source, inputs=tuple(inputs),
                tags=frozenset(all_tags), reasons=reasons, tolerance=tolerance)


def module_case(op: str, variant: str, ctor: str, inputs: Iterable[InputSpec], *,
                call: str | None = None, pre: str | Sequence[str] | None = None,
                ret: str | Sequence[str] | None = None,
                init: str | Sequence[str] | None = None, modules: Mapping[str, str] | None = None,
                smoke: bool = False, tags: Iterable[str] = (), reasons: Mapping[str, str] | None = None,
                tolerance: ToleranceHint | None = None) -> Case:
    inputs = list(inputs)
    call = call or "self.m({})".format(", ".join(f"x{i}" for i in range(len(inputs))))
    init_lines = [f"self.m = {ctor}"] + [f"self.{name} = {c}" for name, c in (modules or {}).items()]
    init_lines += _init_block(init)
    body = _lines(pre) + _return_lines(call, ret)
    source = render_source(init_lines, len(inputs), body)
    return _make_case(op, variant, source, inputs, smoke=smoke, tags=tags, reasons=reasons,
                      tolerance=tolerance, ret=ret, pre=pre)


def call_case(op: str, variant: str, call: str, inputs: Iterable[InputSpec], *,
              params: Mapping[str, tuple | Param] | None = None,
              pre: str | Sequence[str] | None = None,
              ret: str | Sequence[str] | None = None,
              init: str | Sequence[str] | None = None, smoke: bool = False,
              tags: Iterable[str] = (), reasons: Mapping[str, str] | None = None,
              tolerance: ToleranceHint | None = None) -> Case:
    inputs = list(inputs)
    init_lines = []
    for name, spec in (params or {}).items():
        p = spec if isinstance(spec, Param) else Param(tuple(spec))
        init_lines.append(p.init_line(name))
    init_lines += _init_block(init)
    body = _lines(pre) + _return_lines(call, ret)
    source = render_source(init_lines, len(inputs), body)
    return _make_case(op, variant, source, inputs, smoke=smoke, tags=tags, reasons=reasons,
                      tolerance=tolerance, ret=ret, pre=pre)
