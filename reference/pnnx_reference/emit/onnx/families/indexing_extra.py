"""Indexing and rearranging ops with no single ONNX operator: Tensor.index, masked_select,
repeat_interleave, diag, cross, unfold (im2col)."""
from __future__ import annotations

import numpy as np

from ..builder import ints
from ..dtypes import numpy_type
from ..registry import Unsupported, lowering


def _static(shape, what):
    if any(d < 0 for d in shape):
        raise Unsupported(f"needs static {what}")
    return list(shape)


def _flat_compress(b, data, mask, shape, out):
    """Elements of `data` where `mask` (both broadcast to `shape`) is true, flattened."""
    full = b.const(shape, hint="shape")
    flat = b.const([-1], hint="shape")
    values = b.node("Reshape", [b.node("Expand", [data, full]), flat])
    keep = b.node("Reshape", [b.node("Expand", [mask, full]), flat])
    b.node("Compress", [values, keep], out, axis=0)


def _index_entries(op):
    expr = str(op.params.get("expr", "")).strip()
    if not (expr.startswith("[") and expr.endswith("]")):
        raise Unsupported(f"index expression {expr!r}")
    entries = [e.strip() for e in expr[1:-1].split(",")]
    if any(e != "None" and not e.startswith("@") for e in entries):
        raise Unsupported(f"index expression {expr!r}")
    return entries


@lowering("Tensor.index")
def tensor_index(b, op):
    entries = _index_entries(op)
    used = [(axis, op.inputs[int(e[1:])]) for axis, e in enumerate(entries) if e != "None"]
    if len(used) == 1 and b.dtype(used[0][1]) == "bool":
        _index_mask(b, op, *used[0])
    elif len(used) == 1:
        axis, index = used[0]
        b.node("Gather", [b.x(op), index.name], b.y(op), axis=axis)
    elif [a for a, _ in used] == list(range(len(used))):
        _index_leading(b, op, [index for _, index in used])
    else:
        raise Unsupported("several index tensors not on the leading axes")


def _index_mask(b, op, axis, mask):
    shape = b.shape(op.inputs[0])
    if axis != 0 or b.shape(mask) != shape:
        raise Unsupported("boolean index must cover the whole input")
    _flat_compress(b, b.x(op), mask.name, _static(shape, "input shape"), b.y(op))


def _index_leading(b, op, indices):
    """x[i, j, ...] on the leading axes: GatherND on the broadcast index tuples."""
    if any(b.dtype(i) == "bool" for i in indices):
        raise Unsupported("boolean index among several indices")
    shape = np.broadcast_shapes(*[tuple(_static(b.shape(i), "index shape")) for i in indices])
    dims = b.const(list(shape), hint="shape")
    last = b.const([-1])
    parts = [b.node("Unsqueeze", [b.node("Expand", [i.name, dims]), last]) for i in indices]
    tuples = b.node("Concat", parts, axis=-1)
    # GatherND takes no negative indices: wrap each by its axis size
    sizes = _static(b.shape(op.inputs[0])[:len(indices)], "indexed sizes")
    wrapped = b.node("Mod", [b.node("Add", [tuples, b.const(sizes)]), b.const(sizes)])
    b.node("GatherND", [b.x(op), wrapped], b.y(op))


@lowering("torch.masked_select", "Tensor.masked_select")
def masked_select(b, op):
    mask = b.named_input(op, "mask", 1)
    if mask is None:
        raise Unsupported("no mask input")
    shape = np.broadcast_shapes(tuple(b.shape(op.inputs[0])), tuple(b.shape(mask)))
    _flat_compress(b, b.x(op), mask.name, _static(list(shape), "shapes"), b.y(op))


@lowering("torch.repeat_interleave", "Tensor.repeat_interleave")
def repeat_interleave(b, op):
    repeats = op.params.get("repeats")
    if not isinstance(repeats, int) or len(op.inputs) > 1:
        raise Unsupported("repeats must be a constant integer")
    shape = _static(b.shape(op.inputs[0]), "input shape")
    x, dim = b.x(op), op.params.get("dim")
    if dim is None:
        x = b.node("Reshape", [x, b.const([-1], hint="shape")])
        shape, dim = [int(np.prod(shape))], 0
    dim = dim % len(shape)
    grown = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    spread = b.node("Expand", [b.node("Unsqueeze", [x, b.const([dim + 1])]),
                               b.const(grown, hint="shape")])
    b.node("Reshape", [spread, b.const(_static(b.shape(op.outputs[0]), "output"), hint="shape")],
           b.y(op))


def _diagonal_positions(length, k):
    rows = np.arange(length) + max(-k, 0)
    return np.stack([rows, rows + k], axis=1).astype(np.int64)


@lowering("torch.diag", "Tensor.diag")
def diag(b, op):
    k = int(op.params.get("diagonal", 0) or 0)
    shape = _static(b.shape(op.inputs[0]), "input shape")
    if len(shape) == 1:
        m = shape[0] + abs(k)
        zeros = b.node("Expand", [b.const(0, b.dtype(op.inputs[0]), "zero"),
                                  b.const([m, m], hint="shape")])
        b.node("ScatterND", [zeros, b.const(_diagonal_positions(shape[0], k)), b.x(op)], b.y(op))
    elif len(shape) == 2:
        length = _static(b.shape(op.outputs[0]), "output")[0]
        b.node("GatherND", [b.x(op), b.const(_diagonal_positions(length, k))], b.y(op))
    else:
        raise Unsupported(f"rank-{len(shape)} input")


@lowering("torch.cross", "torch.linalg.cross", "Tensor.cross")
def cross(b, op):
    """a x b = a[1,2,0] * b[2,0,1] - a[2,0,1] * b[1,2,0] along dim."""
    other = b.named_input(op, "other", 1)
    if other is None or op.params.get("dim") is None:
        raise Unsupported("needs `other` and an explicit dim")
    rank = b.rank(op.outputs[0])
    dim = int(op.params["dim"]) % rank

    def rolled(operand, order):
        axis = dim - (rank - b.rank(operand))
        if axis < 0 or b.shape(operand)[axis] != 3:
            raise Unsupported("cross needs size 3 on dim in both inputs")
        return b.node("Gather", [operand.name, b.const(order)], axis=axis)

    first = b.node("Mul", [rolled(op.inputs[0], [1, 2, 0]), rolled(other, [2, 0, 1])])
    second = b.node("Mul", [rolled(op.inputs[0], [2, 0, 1]), rolled(other, [1, 2, 0])])
    b.node("Sub", [first, second], b.y(op))


@lowering("F.unfold", "nn.Unfold")
def unfold(b, op):
    """im2col as a grouped Conv whose kernel picks one window position per output channel."""
    rank = b.rank(op.inputs[0])
    if rank not in (3, 4) or not b.is_float(op.inputs[0]):
        raise Unsupported("needs 3-D or 4-D float input")
    x = b.x(op) if rank == 4 else b.node("Unsqueeze", [b.x(op), b.const([0])])
    c = _static(b.shape(op.inputs[0])[-3:-2], "channels")[0]
    kh, kw = ints(op.params["kernel_size"], 2, "kernel_size")
    kernel = np.zeros((c * kh * kw, 1, kh, kw), numpy_type(b.dtype(op.inputs[0])))
    for o in range(c * kh * kw):
        kernel[o, 0, (o % (kh * kw)) // kw, o % kw] = 1
    pad = ints(op.params.get("padding", 0), 2, "padding")
    cols = b.node("Conv", [x, b.const(kernel, b.dtype(op.inputs[0]), f"{op.name}.onehot")],
                  kernel_shape=[kh, kw], group=c, pads=pad + pad,
                  strides=ints(op.params.get("stride", 1), 2, "stride"),
                  dilations=ints(op.params.get("dilation", 1), 2, "dilation"))
    lead = [0] if rank == 4 else []
    b.node("Reshape", [cols, b.const(lead + [c * kh * kw, -1], hint="shape")], b.y(op))
