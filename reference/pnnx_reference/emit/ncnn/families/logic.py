"""Comparisons, boolean logic and where/masked_fill on float blobs.

ncnn blobs hold floats, so a bool tensor is carried as a float 0/1 blob (a bool graph input is
fed so); these lowerings are registered with `bool_operands=True`, which lets the driver hand
them bool operands. ncnn's Threshold layer gives 1 where x > threshold, else 0, so with
d = a - b: gt = Threshold(d), lt = Threshold(-d), ne = Threshold(|d|), and le, ge, eq are
1 minus gt, lt, ne. This is exact for finite a, b: IEEE subtraction of two different finite
floats is never 0 (gradual underflow; a build that flushes subnormals to zero would call values
closer than FLT_MIN equal) and has the sign of a - b (an overflow is a signed inf). Equal
infinities give inf - inf = NaN and Threshold(NaN) = 0, which is still right; a NaN operand is
not: it reads as "not greater, not less, not different", so ge/le/eq give 1 and ne 0 (torch:
0, 0, 0, 1).

An integer operand is carried as its float value (exact below 2^24), so comparisons, logic and
selection are exact on it as on floats; ~x of an integer is -1 - x (255 - x for uint8).

A non-bool operand is true where it is nonzero: Threshold(|x|) (a NaN reads as false).

where/masked_fill (x where cond, else y) take one of two forms:
- the blend cond * x + (1 - cond) * y (4 layers and a Split) where both sides are known finite in any
  storage: bool tensors, numbers and constant tensors within fp16's range (|v| <= 65504);
- otherwise the lattice max(min(A, x), min(-A, y)), A = (cond - 0.5) * inf: +inf where cond,
  -inf elsewhere (7 layers and a Split: a 1-element +inf MemoryData, never a product of inf and 0). It is
  exact for every finite and infinite x and y, in fp32 and in fp16 storage or arithmetic, where
  the blend gives inf * 0 = NaN: a run-time float may be inf, or past 65504 (inf in fp16, ncnn's
  default on Vulkan), and so may an integer (a float cast to int64 is clamped to +-2^63; T5's
  log(0) bucket). An infinite number costs nothing: min(A, +inf) is A, min(A, -inf) drops out.
  NaN: ncnn's x86 CPU min returns its first operand where either is NaN (packed and scalar
  paths; its max differs between them) and lavapipe's the other one, so a NaN on the unselected
  side is dropped on both (A comes first; the max then sees none) and a selected one reads as
  +inf (torch: NaN); other CPUs and GPUs may differ. A NaN number or constant is refused."""
from __future__ import annotations

import numpy as np

from .... import expression as ex
from ....errors import Unsupported
from ..arithmetic import BINARY, argument_nodes, lower_tree
from ..context import Context, dims_params
from ..layers import Weight
from ..registry import ANY, LOWERINGS
from ..truth import above_zero, complement, is_bool


def _call(func: str, *args) -> ex.Call:
    return ex.Call(func, tuple(args))


def _tree(ctx: Context, op, node, out: str) -> str:
    """Lowers an expression over op's arguments into `out`; the blob that holds the result."""
    lower_tree(ctx, op, node, op.inputs, out)
    return ctx.aliases.get(out, out)


def _mask_of(ctx: Context, op, node, negate: bool) -> None:
    """op's output = Threshold(node), or 1 minus it."""
    out = op.outputs[0].name
    value = _tree(ctx, op, node, ctx.temp(out))
    if negate:
        complement(ctx, above_zero(ctx, value, ctx.temp(out)), out)
    else:
        above_zero(ctx, value, out)


# --- comparisons ------------------------------------------------------------------------------
# name -> (what is masked, over @0 = input and @1 = other; whether the result is 1 minus the mask)
COMPARISONS = {
    "gt": ("sub(@0,@1)", False), "lt": ("sub(@1,@0)", False), "ne": ("abs(sub(@0,@1))", False),
    "le": ("sub(@0,@1)", True), "ge": ("sub(@1,@0)", True), "eq": ("abs(sub(@0,@1))", True),
}


def _comparison(text: str, negate: bool):
    def lower(ctx: Context, op) -> None:
        node = ex.remap_inputs(ex.parse(text), argument_nodes(op, ("input", "other")))
        _mask_of(ctx, op, node, negate)
    return lower


ALIASES = {"gt": "greater", "ge": "greater_equal", "lt": "less", "le": "less_equal", "ne": "not_equal"}

for _name, (_text, _negate) in COMPARISONS.items():
    _names = [_name] + ([ALIASES[_name]] if _name in ALIASES else [])
    LOWERINGS.register(*(f"{table}.{n}" for n in _names for table in ("torch", "Tensor")), bool_operands=True,
                       int_operands=True, batch=ANY)(_comparison(_text, _negate))


# --- boolean logic -----------------------------------------------------------------------------
def _magnitudes(op, names: tuple[str, ...]) -> list:
    """Per argument: itself when bool (0/1 already), else |x| (0 exactly where x is false)."""
    nodes = argument_nodes(op, names)
    return [node if isinstance(node, ex.Input) and is_bool(op.inputs[node.index]) else _call("abs", node)
            for node in nodes.values()]


def _all_bool(op) -> bool:
    return all(is_bool(operand) for operand in op.inputs)


def _and_or(func: str, op, ctx: Context, out: str) -> str:
    """logical and (func min) / or (max): min/max of the 0/1 operands, or the mask of min/max
    of the magnitudes."""
    node = _call(func, *_magnitudes(op, ("input", "other")))
    if _all_bool(op):
        return _tree(ctx, op, node, out)
    return above_zero(ctx, _tree(ctx, op, node, ctx.temp(out)), out)


@LOWERINGS.register("torch.logical_and", "Tensor.logical_and", bool_operands=True, int_operands=True, batch=ANY)
def logical_and(ctx: Context, op) -> None:
    _and_or("min", op, ctx, op.outputs[0].name)


@LOWERINGS.register("torch.logical_or", "Tensor.logical_or", bool_operands=True, int_operands=True, batch=ANY)
def logical_or(ctx: Context, op) -> None:
    _and_or("max", op, ctx, op.outputs[0].name)


@LOWERINGS.register("torch.logical_xor", "Tensor.logical_xor", bool_operands=True, int_operands=True, batch=ANY)
def logical_xor(ctx: Context, op) -> None:
    """|a - b| of 0/1 operands; otherwise or - and (both 0/1 of the broadcast shape)."""
    out = op.outputs[0].name
    if _all_bool(op):
        _tree(ctx, op, _call("abs", _call("sub", *_magnitudes(op, ("input", "other")))), out)
        return
    either = _and_or("max", op, ctx, ctx.temp(out))
    both = _and_or("min", op, ctx, ctx.temp(out))
    ctx.emit("BinaryOp", "xor", [either, both], [out], {0: BINARY["sub"][0]})


@LOWERINGS.register("torch.logical_not", "Tensor.logical_not", bool_operands=True, int_operands=True, batch=ANY)
def logical_not(ctx: Context, op) -> None:
    out = op.outputs[0].name
    if is_bool(op.inputs[0]):
        complement(ctx, ctx.blob(op.inputs[0]), out)
    else:
        _mask_of(ctx, op, _call("abs", ex.input_ref(0)), negate=True)


@LOWERINGS.register("torch.bitwise_not", "Tensor.bitwise_not", bool_operands=True, int_operands=True, batch=ANY)
def bitwise_not(ctx: Context, op) -> None:
    """~ of a bool, or of an integer: -1 - x in two's complement, 255 - x for uint8 (pnnx
    writes &, | and ^ as expressions)."""
    src = op.inputs[0]
    if is_bool(src):
        complement(ctx, ctx.blob(src), op.outputs[0].name)
        return
    if src.dtype is None or src.dtype[0] not in "iu":
        raise Unsupported(f"{op.type} of a {src.dtype} operand is not lowered")
    all_ones = 255.0 if src.dtype == "u8" else -1.0
    ctx.emit("BinaryOp", "not", [ctx.blob(src)], [op.outputs[0].name], {0: BINARY["sub"][1], 1: 1, 2: all_ones})


# --- selection ---------------------------------------------------------------------------------
FP16_MAX = 65504.0  # a larger magnitude is inf in fp16 storage (ncnn's default) or arithmetic


def _finite(op, node) -> bool:
    """Whether an operand holds only finite numbers whatever the storage: a bool tensor, a
    number or a constant tensor within fp16's range. An integer tensor is not: a float cast to
    int64 is clamped to +-2^63, which fp16 stores as inf."""
    if isinstance(node, ex.Literal):
        return abs(node.value) <= FP16_MAX
    operand = op.inputs[node.index]
    if is_bool(operand):
        return True
    data = _constant_data(operand)
    return data is not None and bool(np.all(np.abs(data.astype(np.float64)) <= FP16_MAX))


def _constant_data(operand) -> np.ndarray | None:
    """The data of a constant tensor operand (a pnnx.Attribute), else None."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Attribute" or not producer.attrs:
        return None
    return Context.attribute_data(producer)


def _holds_nan(op, node) -> bool:
    if isinstance(node, ex.Literal):
        return bool(np.isnan(node.value))
    data = _constant_data(op.inputs[node.index])
    return data is not None and np.issubdtype(data.dtype, np.floating) and bool(np.isnan(data).any())


def _blend(ctx: Context, op, cond, x, y) -> None:
    """cond * x + (1 - cond) * y: exact for finite x and y (a 0/1 mask times inf is NaN)."""
    not_cond = _call("sub", ex.literal(1), cond)
    _tree(ctx, op, _call("add", _call("mul", x, cond), _call("mul", y, not_cond)), op.outputs[0].name)


def _infinity(ctx: Context, op, cond) -> dict:
    """A 1-element MemoryData holding +inf, of cond's ncnn rank (it broadcasts without a
    Reshape), as an expression node past op's inputs -> (blob, ncnn shape) for lower_tree."""
    shape = [1] * max(ctx.rank(op.inputs[cond.index]), 1)
    blob = ctx.temp(op.outputs[0].name)
    ctx.emit("MemoryData", "inf", [], [blob], dims_params(shape), [Weight(np.full(1, np.inf, np.float32), tagged=False)])
    return {ex.input_ref(len(op.inputs)): (blob, shape)}


def _below(value, bound) -> ex.Node | None:
    """min(bound, value): value where bound is +inf, -inf where it is -inf; for an infinite
    number bound itself (+inf) or None (-inf: the side adds nothing to the max). The bound comes
    first: ncnn's CPU min returns its first operand where either is NaN."""
    sign = _infinite(value)
    if sign is None:
        return _call("min", bound, value)
    return bound if sign > 0 else None


def _infinite(node) -> float | None:
    """The sign (+1.0/-1.0) of an infinite number, else None."""
    if isinstance(node, ex.Literal) and np.isinf(node.value):
        return float(np.sign(node.value))
    return None


def _lattice(ctx: Context, op, cond, x, y) -> None:
    """max(min(A, x), min(-A, y)) with A = (cond - 0.5) * inf: +inf where cond, -inf elsewhere."""
    if _infinite(x) == _infinite(y) == -1.0:
        raise Unsupported(f"{op.type} of two -inf numbers is a constant")
    known = _infinity(ctx, op, cond)
    infinity = next(iter(known))
    up = _call("mul", _call("sub", cond, ex.literal(0.5)), infinity)
    down = _call("neg", up) if _infinite(x) != -1.0 else _call("mul", _call("sub", ex.literal(0.5), cond), infinity)
    parts = [p for p in (_below(x, up), _below(y, down)) if p is not None]
    node = parts[0] if len(parts) == 1 else _call("max", *parts)
    lower_tree(ctx, op, node, op.inputs, op.outputs[0].name, known)


def _select(ctx: Context, op, cond, x, y) -> None:
    """op's output = x where cond else y: the 0/1 blend where both sides are finite, else the
    min/max lattice (exact for infinities)."""
    if any(_holds_nan(op, v) for v in (x, y)):
        raise Unsupported(f"{op.type} with a NaN number or a constant tensor holding NaN is not lowered "
                          "(ncnn's min and max differ on NaN between backends)")
    if _finite(op, x) and _finite(op, y):
        _blend(ctx, op, cond, x, y)
    else:
        _lattice(ctx, op, cond, x, y)


@LOWERINGS.register("torch.where", "Tensor.where", bool_operands=True, int_operands=True, batch=ANY)
def where(ctx: Context, op) -> None:
    _select(ctx, op, *argument_nodes(op, ("condition", "input", "other")).values())


@LOWERINGS.register("Tensor.masked_fill", "Tensor.masked_fill_", bool_operands=True, int_operands=True, batch=ANY)
def masked_fill(ctx: Context, op) -> None:
    x, mask, value = argument_nodes(op, ("input", "mask", "value")).values()
    _select(ctx, op, mask, value, x)
