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
where/masked_fill select by cond * x + (1 - cond) * y, exact while the tensors x and y are
finite (an infinite number is built so that it never meets a 0; with one, the other side is
added unmasked, exact also where it holds infinities of the same sign); a constant tensor with
any other inf or NaN is refused."""
from __future__ import annotations

import numpy as np

from .... import expression as ex
from ....errors import Unsupported
from ..arithmetic import BINARY, argument_nodes, lower_tree
from ..context import Context
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
FP16_MAX = 65504.0


def _term(mask, value) -> ex.Node:
    """mask * value for a 0/1 mask: exactly value or 0. An infinite literal value must never
    be multiplied by 0 (NaN), in fp32 or in a GPU's fp16 (where FLT_MAX is already inf): the
    mask is scaled by fp16's largest finite number twice (inf in fp16) and squared four times
    (inf in fp32), which leaves 0 where the mask is 0, then given the value's sign."""
    if not (isinstance(value, ex.Literal) and np.isinf(value.value)):
        return _call("mul", value, mask)
    node = _call("mul", _call("mul", mask, ex.literal(FP16_MAX)), ex.literal(FP16_MAX))
    for _ in range(4):
        node = _call("square", node)
    return node if value.value > 0 else _call("mul", node, ex.literal(-1.0))


def _infinite(node) -> float | None:
    """The sign (+1.0/-1.0) of an infinite literal, else None."""
    if isinstance(node, ex.Literal) and isinstance(node.value, float) and np.isinf(node.value):
        return float(np.sign(node.value))
    return None


def _constant_nonfinite(op, node) -> set[float] | None:
    """For a constant tensor operand (a pnnx.Attribute): the set of its non-finite values' signs
    (+1.0, -1.0; NaN as nan); None for anything else (a number, a run-time tensor)."""
    if not isinstance(node, ex.Input):
        return None
    producer = op.inputs[node.index].producer
    if producer is None or producer.type != "pnnx.Attribute" or not producer.attrs:
        return None
    data = Context.attribute_data(producer)
    if not np.issubdtype(data.dtype, np.floating):
        return set()
    bad = data[~np.isfinite(data)]
    return {float(np.sign(v)) if not np.isnan(v) else float("nan") for v in np.unique(bad)}


def _select(ctx: Context, op, cond, x, y) -> None:
    """op's output = x where cond else y: cond * x + (1 - cond) * y, exact while x and y are
    finite tensors or any non-NaN numbers. With an infinite number on one side the other side is
    added unmasked (-inf * cond + y), which is also exact where that side holds infinities of the
    same sign: an attention mask made with masked_fill(..., -inf) and filled again with -inf. A
    constant tensor with other non-finite values (which a mask would multiply by 0: NaN) is refused."""
    if any(isinstance(v, ex.Literal) and np.isnan(v.value) for v in (x, y)):
        raise Unsupported(f"{op.type} with a NaN number is not lowered")
    not_cond = _call("sub", ex.literal(1), cond)
    nonfinite_x, nonfinite_y = _constant_nonfinite(op, x), _constant_nonfinite(op, y)
    for number, masked, other, found in ((x, cond, y, nonfinite_y), (y, not_cond, x, nonfinite_x)):
        sign = _infinite(number)
        if sign is not None and (found is None or found <= {sign}):
            _tree(ctx, op, _call("add", _term(masked, number), other), op.outputs[0].name)
            return
    if nonfinite_x or nonfinite_y:
        raise Unsupported(f"{op.type} of a constant tensor holding inf or NaN is not lowered (ncnn selects "
                          "by multiplying with a 0/1 mask, and inf * 0 is NaN)")
    _tree(ctx, op, _call("add", _term(cond, x), _term(not_cond, y)), op.outputs[0].name)


@LOWERINGS.register("torch.where", "Tensor.where", bool_operands=True, int_operands=True, batch=ANY)
def where(ctx: Context, op) -> None:
    _select(ctx, op, *argument_nodes(op, ("condition", "input", "other")).values())


@LOWERINGS.register("Tensor.masked_fill", "Tensor.masked_fill_", bool_operands=True, int_operands=True, batch=ANY)
def masked_fill(ctx: Context, op) -> None:
    x, mask, value = argument_nodes(op, ("input", "mask", "value")).values()
    _select(ctx, op, mask, value, x)
