"""Lowerings without a family of their own: functional recurrent ops recorded with their weights
as graph inputs (torch.gru / torch.rnn_tanh / torch.rnn_relu from nn.RNNBase, re-expressed as the
nn.GRU / nn.RNN they compute and lowered by the rnn family); embedding bags."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ....ir import Operator
from ..dtypes import onnx_type
from ..registry import Unsupported, lowering
from .rnn import recurrent


def _constant(operand, what: str = "weight"):
    """The tensor behind a pnnx.Attribute operand, else Unsupported."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Attribute" or len(producer.attrs) != 1:
        raise Unsupported(f"{what} {operand.name} is not a constant")
    return next(iter(producer.attrs.values()))


# functional op -> (module type, extra module params)
_MODULE = {"torch.gru": ("nn.GRU", {}),
           "torch.rnn_tanh": ("nn.RNN", {"nonlinearity": "tanh"}),
           "torch.rnn_relu": ("nn.RNN", {"nonlinearity": "relu"})}


def _weights(op: Operator, layers: int, directions: int, biases: bool) -> dict:
    """The flat params list (per layer, per direction: w_ih, w_hh[, b_ih, b_hh]) keyed
    the way nn.GRU names them."""
    params = [o for o, n in zip(op.inputs, op.inputnames) if n == "params"] if op.inputnames \
        else op.inputs[2:]
    names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if biases else [])
    keys = [f"{n}_l{layer}{suffix}" for layer in range(layers)
            for suffix in ["", "_reverse"][:directions] for n in names]
    if len(params) != len(keys):
        raise Unsupported(f"expected {len(keys)} weights, got {len(params)}")
    return {key: _constant(operand) for key, operand in zip(keys, params)}


@lowering(*_MODULE)
def functional_recurrent(b, op):
    if len(op.inputs) < 2 or (op.inputnames and op.inputnames[1] != "hx"):
        raise Unsupported(f"{op.type} without hx (packed sequence form)")
    layers = int(op.params.get("num_layers", 1))
    directions = 2 if op.params.get("bidirectional") else 1
    attrs = _weights(op, layers, directions, bool(op.params.get("has_biases", True)))
    kind, extra = _MODULE[op.type]
    module = Operator(kind, op.name, inputs=op.inputs[:2], outputs=op.outputs,
                      params={"num_layers": layers, "bidirectional": directions == 2,
                              "batch_first": bool(op.params.get("batch_first")), **extra},
                      attrs=attrs)
    recurrent(b, module)


# --- nn.EmbeddingBag / F.embedding_bag: Gather, then one reduction per bag -------------------

_BAG_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax"}


def _bag_reduce(b, mode: str, rows: str, mask: str | None, axis: int, keepdims: int) -> str:
    """Reduce gathered rows over `axis`; `mask` (1 keeps a row, 0 drops it, padding_idx)
    excludes rows from sum and mean, an all-padding bag giving zeros as torch does."""
    axes = b.const([axis], hint="axes")
    if mask is None:
        return b.node(_BAG_REDUCE[mode], [rows, axes], keepdims=keepdims)
    total = b.node("ReduceSum", [b.node("Mul", [rows, mask]), axes], keepdims=keepdims)
    if mode == "sum":
        return total
    count = b.node("ReduceSum", [mask, axes], keepdims=keepdims)
    one = b.node("CastLike", [b.const(1.0, "f32", "one"), count])
    return b.node("Div", [total, b.node("Max", [count, one])])


def _bag_bounds(b, op, offsets, n: int) -> list[tuple[int, int]]:
    """(start, end) of each bag from constant offsets over n indices."""
    starts = [int(s) for s in _constant(offsets, "offsets").to_numpy().reshape(-1)]
    ends = starts[1:] + [n]
    if op.params.get("include_last_offset"):
        starts, ends = starts[:-1], starts[1:]
    if any(not 0 <= s <= e <= n for s, e in zip(starts, ends)):
        raise Unsupported("offsets out of order or out of range")
    return list(zip(starts, ends))


def _rows(b, x: str | None, start: int, end: int) -> str | None:
    if x is None:
        return None
    return b.node("Slice", [x, b.const([start]), b.const([end]), b.const([0])])


def _bags_1d(b, op, rows: str, mask, bounds, mode: str, dim: int, dtype: str) -> str:
    """One Slice + reduction per bag; an empty bag is zeros, as in torch."""
    parts = []
    for start, end in bounds:
        if start == end:
            parts.append(b.const(np.zeros((1, dim)), dtype, "zeros"))
        else:
            parts.append(_bag_reduce(b, mode, _rows(b, rows, start, end),
                                     _rows(b, mask, start, end), 0, 1))
    return parts[0] if len(parts) == 1 else b.node("Concat", parts, axis=0)


def _embedding_bag(b, op, table: str, indices, offsets, weights, dim: int) -> None:
    p = op.params
    mode = p.get("mode", "mean")
    if mode not in _BAG_REDUCE or p.get("max_norm") is not None:
        raise Unsupported(f"mode {mode!r} or max_norm")
    padding = p.get("padding_idx")
    if weights is not None and mode != "sum":
        raise Unsupported("per_sample_weights needs mode='sum'")
    if padding is not None and (mode == "max" or int(padding) < 0):
        raise Unsupported("padding_idx with mode='max' or negative padding_idx")
    dtype = b.dtype(op.outputs[0])
    rows = b.node("Gather", [table, indices.name], axis=0)
    mask = None
    last = b.const([-1], hint="axes")
    if padding is not None:
        pad = b.const(int(padding), b.dtype(indices), "padding_idx")
        keep = b.node("Not", [b.node("Equal", [indices.name, pad])])
        mask = b.node("Unsqueeze", [b.node("Cast", [keep], to=onnx_type(dtype)), last])
    if weights is not None:
        rows = b.node("Mul", [rows, b.node("Unsqueeze", [weights.name, last])])
    if b.rank(indices) == 2:
        if offsets is not None:
            raise Unsupported("offsets with 2-D input")
        out = _bag_reduce(b, mode, rows, mask, 1, 0)
    elif b.rank(indices) == 1 and offsets is not None:
        n = b.shape(indices)[0]
        if n < 0:
            raise Unsupported("1-D input of unknown length")
        out = _bags_1d(b, op, rows, mask, _bag_bounds(b, op, offsets, n), mode, dim, dtype)
    else:
        raise Unsupported("needs 2-D input or 1-D input with offsets")
    b.node("Identity", [out], b.y(op))


@lowering("nn.EmbeddingBag")
def embedding_bag_module(b, op):
    weight = b.attr(op, "weight")
    offsets = b.named_input(op, "offsets", 1)
    weights = b.named_input(op, "per_sample_weights", 2)
    _embedding_bag(b, op, b.attr_weight(op, "weight"), op.inputs[0], offsets, weights,
                   weight.shape[1])


@lowering("F.embedding_bag")
def embedding_bag_function(b, op):
    table = b.named_input(op, "weight", 1)
    if table is None or table.shape is None:
        raise Unsupported("embedding table of unknown shape")
    _embedding_bag(b, op, table.name, op.inputs[0], b.named_input(op, "offsets", 2),
                   b.named_input(op, "per_sample_weights", None), table.shape[1])


# --- Tensor.index_put: ScatterND over the leading dims ----------------------------------------

def _index_put_mask(b, op, data, mask, values) -> None:
    """data[mask] = scalar: a Where (a non-scalar value needs the mask's nonzero count)."""
    if op.params.get("accumulate") or values.shape is None or int(np.prod(values.shape)) != 1:
        raise Unsupported("boolean-mask index_put needs one value and accumulate=False")
    value = b.node("CastLike", [values.name, data.name])
    if values.shape:
        value = b.node("Reshape", [value, b.const([], hint="shape")])
    b.node("Where", [mask.name, value, data.name], b.y(op))


def _scatter_indices(b, indices, dims: list[int]) -> str:
    """The index tensors (as int64, negatives wrapped) stacked on a new last axis, as
    ScatterND wants."""
    last = b.const([-1], hint="axes")
    columns = []
    for operand, dim in zip(indices, dims):
        index = operand.name if b.dtype(operand) == "i64" else \
            b.node("Cast", [operand.name], to=TensorProto.INT64)
        wrapped = b.node("Where", [b.node("Less", [index, b.const(0)]),
                                   b.node("Add", [index, b.const(dim)]), index])
        columns.append(b.node("Unsqueeze", [wrapped, last]))
    return columns[0] if len(columns) == 1 else b.node("Concat", columns, axis=-1)


@lowering("Tensor.index_put")
def index_put(b, op):
    data, values = op.inputs[0], op.inputs[-1]
    indices = op.inputs[1:-1]
    shape = b.shape(data)
    if not indices or any(i.shape is None for i in indices) or shape is None or -1 in shape:
        raise Unsupported("needs static shapes")
    if len(indices) == 1 and b.dtype(indices[0]) == "bool":
        return _index_put_mask(b, op, data, indices[0], values)
    if any(b.dtype(i) not in ("i64", "i32") for i in indices) or \
            any(i.shape != indices[0].shape for i in indices):
        raise Unsupported("index tensors must be integer and of one shape")
    where = _scatter_indices(b, indices, shape)
    target = list(indices[0].shape) + shape[len(indices):]
    value = b.node("CastLike", [values.name, data.name])
    update = b.node("Expand", [value, b.const(target, hint="shape")])
    reduction = "add" if op.params.get("accumulate") else None
    b.node("ScatterND", [data.name, where, update], b.y(op), reduction=reduction)



# --- torch.bitwise_left_shift / torch.bitwise_right_shift --------------------------------------
# ONNX BitShift takes unsigned types only. Signed shifts are exact integer arithmetic: x * 2^s
# (wrapping like torch) and floor(x / 2^s), 2^s read from a table so that s == bits-1 wraps too.
# torch gives 0 (left) or the sign fill (right) for a shift outside [0, bits).

_SIGNED_BITS = {"i32": 32, "i64": 64}
_UNSIGNED_BITS = {"u8": 8, "u16": 16, "u32": 32, "u64": 64}


def _wrapped(value: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def _floor_div(b, x: str, d: str, zero: str, minus_one: str) -> str:
    """floor(x / d) for d > 0 with truncating Div: negative x as -1 - (-1 - x) / d."""
    negative = b.node("Sub", [minus_one, b.node("Div", [b.node("Sub", [minus_one, x]), d])])
    return b.node("Where", [b.node("Less", [x, zero]), negative, b.node("Div", [x, d])])


def _signed_shift(b, op, x: str, s: str, bits: int, left: bool) -> None:
    dtype = b.dtype(op.outputs[0])
    zero = b.const(0, dtype, "zero")
    valid = b.node("And", [b.node("GreaterOrEqual", [s, zero]),
                           b.node("Less", [s, b.const(bits, dtype, "bits")])])
    index = b.node("Cast", [b.node("Where", [valid, s, zero])], to=TensorProto.INT64)
    table = b.const([_wrapped(1 << k, bits) for k in range(bits)], dtype, "pow2")
    power = b.node("Gather", [table, index], axis=0)
    if left:
        b.node("Where", [valid, b.node("Mul", [x, power]), zero], b.y(op))
        return
    minus_one = b.const(-1, dtype, "minus_one")
    fill = b.node("Where", [b.node("Less", [x, zero]), minus_one, zero])
    b.node("Where", [valid, _floor_div(b, x, power, zero, minus_one), fill], b.y(op))


def _unsigned_shift(b, op, x: str, s: str, bits: int, left: bool) -> None:
    """BitShift, with shifts of `bits` or more giving 0 as in torch."""
    dtype = b.dtype(op.outputs[0])
    zero = b.const(0, dtype, "zero")
    valid = b.node("Less", [s, b.const(bits, dtype, "bits")])
    shifted = b.node("BitShift", [x, b.node("Where", [valid, s, zero])],
                     direction="LEFT" if left else "RIGHT")
    b.node("Where", [valid, shifted, zero], b.y(op))


def _shift(b, op, left: bool) -> None:
    dtype = b.dtype(op.outputs[0])
    if any(b.dtype(o) != dtype for o in op.inputs):
        raise Unsupported("operands of different dtypes")
    other = b.named_input(op, "other", 1)
    if other is not None:
        s = other.name
    elif isinstance(op.params.get("other"), int):
        s = b.const(op.params["other"], dtype, "shift")
    else:
        raise Unsupported("shift amount is neither a tensor nor an integer")
    if dtype in _SIGNED_BITS:
        _signed_shift(b, op, b.x(op), s, _SIGNED_BITS[dtype], left)
    elif dtype in _UNSIGNED_BITS:
        _unsigned_shift(b, op, b.x(op), s, _UNSIGNED_BITS[dtype], left)
    else:
        raise Unsupported(f"shift of dtype {dtype}")


@lowering("torch.bitwise_left_shift")
def bitwise_left_shift(b, op):
    _shift(b, op, left=True)


@lowering("torch.bitwise_right_shift")
def bitwise_right_shift(b, op):
    _shift(b, op, left=False)
