"""Tensor manipulation: Reshape (constant shapes), Transpose, Concat, Split, Squeeze,
Unsqueeze, Slice, Gather (select), ScatterND (a write into a slice), Expand, Tile, Cast, Where, Pad."""
from __future__ import annotations

import numpy as np

from ..builder import axis, int_list, ints
from ..dtypes import from_torch_name, onnx_type
from ..registry import Unsupported, lowering

INT_MAX = 2147483647
INT64_MAX = 2**63 - 1


def _reshape(b, op, target: list[int], out: str | None = None):
    target = [int(d) for d in target]
    if target.count(-1) > 1:
        raise Unsupported(f"shape {target} has more than one unknown dimension")
    allowzero = 1 if 0 in target else None
    if allowzero and -1 in target:
        raise Unsupported("a shape with both 0 and -1")
    return b.node("Reshape", [b.x(op), b.const(target, hint="shape")], out or b.y(op),
                  allowzero=allowzero)


def _reshape_to_output(b, op):
    """Reshape to the output operand's shape; one `?` becomes -1, and a leading `?` that the
    input has in the same place becomes 0 (copy)."""
    src, dst = b.shape(op.inputs[0]), b.shape(op.outputs[0])
    target = []
    for i, d in enumerate(dst):
        copy = d < 0 and i < len(src) and src[i] < 0 and src[:i] == dst[:i]
        target.append(0 if copy else d)
    if 0 in target and -1 in target:
        raise Unsupported(f"output shape {dst} has too many unknown dimensions")
    if target.count(-1) > 1:
        raise Unsupported(f"output shape {dst} has more than one unknown dimension")
    b.node("Reshape", [b.x(op), b.const(target, hint="shape")], b.y(op))


@lowering("Tensor.view", "Tensor.reshape", "torch.reshape")
def reshape(b, op):
    shape = op.params.get("shape")
    if shape is None or len(op.inputs) > 1:
        _reshape_to_output(b, op)
        return
    _reshape(b, op, int_list(shape))


@lowering("torch.flatten", "Tensor.flatten", "nn.Flatten", "F.flatten", "nn.Unflatten",
          "Tensor.unflatten", "torch.unflatten", "Tensor.view_as", "Tensor.reshape_as")
def reshape_to_output(b, op):
    _reshape_to_output(b, op)


@lowering("Tensor.permute", "torch.permute")
def permute(b, op):
    rank = b.rank(op.inputs[0])
    dims = op.params.get("dims")
    b.node("Transpose", [b.x(op)], b.y(op), perm=[axis(d, rank) for d in int_list(dims)])


@lowering("Tensor.movedim", "torch.movedim", "Tensor.moveaxis", "torch.moveaxis")
def movedim(b, op):
    rank = b.rank(op.inputs[0])
    src = [axis(d, rank) for d in int_list(op.params["source"])]
    dst = [axis(d, rank) for d in int_list(op.params["destination"])]
    rest = iter(d for d in range(rank) if d not in src)
    placed = dict(zip(dst, src))
    b.node("Transpose", [b.x(op)], b.y(op),
           perm=[placed[i] if i in placed else next(rest) for i in range(rank)])


@lowering("F.one_hot")
def one_hot(b, op):
    depth = int(op.params.get("num_classes", -1))
    if depth < 0:
        raise Unsupported("num_classes=-1 depends on the data")
    b.node("OneHot", [b.x(op), b.const([depth], hint="depth"), b.const([0, 1], hint="values")],
           b.y(op), axis=-1)


@lowering("Tensor.transpose", "torch.transpose", "torch.swapaxes", "Tensor.swapaxes")
def transpose(b, op):
    rank = b.rank(op.inputs[0])
    perm = list(range(rank))
    d0 = axis(int(op.params.get("dim0", op.params.get("axis0", 0))), rank)
    d1 = axis(int(op.params.get("dim1", op.params.get("axis1", 0))), rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    b.node("Transpose", [b.x(op)], b.y(op), perm=perm)


@lowering("torch.t", "Tensor.t")
def t(b, op):
    if b.rank(op.inputs[0]) < 2:
        b.node("Identity", [b.x(op)], b.y(op))
        return
    b.node("Transpose", [b.x(op)], b.y(op), perm=[1, 0])


@lowering("torch.cat", "torch.concat", "torch.concatenate")
def cat(b, op):
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.outputs[0]))
    b.node("Concat", [o.name for o in op.inputs], b.y(op), axis=dim)


@lowering("torch.stack")
def stack(b, op):
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.outputs[0]))
    axes = b.const([dim], hint="axes")
    parts = [b.node("Unsqueeze", [o.name, axes]) for o in op.inputs]
    b.node("Concat", parts, b.y(op), axis=dim)


@lowering("torch.unsqueeze", "Tensor.unsqueeze")
def unsqueeze(b, op):
    dim = axis(int(op.params["dim"]), b.rank(op.outputs[0]))
    b.node("Unsqueeze", [b.x(op), b.const([dim], hint="axes")], b.y(op))


@lowering("torch.squeeze", "Tensor.squeeze")
def squeeze(b, op):
    shape = b.shape(op.inputs[0])
    dims = op.params.get("dim")
    candidates = range(len(shape)) if dims is None else [axis(d, len(shape)) for d in int_list(dims)]
    if any(shape[d] < 0 for d in candidates):
        raise Unsupported("squeeze of a dynamic dimension")
    squeezed = [d for d in candidates if shape[d] == 1]  # torch skips non-1 dims silently
    if not squeezed:
        b.node("Identity", [b.x(op)], b.y(op))
        return
    b.node("Squeeze", [b.x(op), b.const(squeezed, hint="axes")], b.y(op))


def _split_sizes(b, op, dim: int) -> list[int]:
    sizes = [b.shape(o)[dim] for o in op.outputs]
    if any(s < 0 for s in sizes):
        raise Unsupported("split of a dynamic dimension")
    return sizes


@lowering("torch.chunk", "Tensor.chunk", "torch.split", "Tensor.split", "torch.tensor_split",
          "Tensor.tensor_split")
def split(b, op):
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.inputs[0]))
    sizes = _split_sizes(b, op, dim)
    b.node("Split", [b.x(op), b.const(sizes, hint="split")], [o.name for o in op.outputs], axis=dim)


@lowering("torch.unbind", "Tensor.unbind")
def unbind(b, op):
    dim = axis(int(op.params.get("dim", 0)), b.rank(op.inputs[0]))
    parts = b.node("Split", [b.x(op), b.const([1] * len(op.outputs), hint="split")],
                   len(op.outputs), axis=dim)
    parts = parts if isinstance(parts, list) else [parts]
    axes = b.const([dim], hint="axes")
    for part, out in zip(parts, op.outputs):
        b.node("Squeeze", [part, axes], out.name)


def _slice_params(op):
    p = op.params
    if "dims" in p:
        n = len(int_list(p["dims"]))
        return (int_list(p["dims"]), ints(p.get("starts", 0), n), ints(p.get("ends", INT_MAX), n),
                ints(p.get("steps", 1), n), ints(p.get("selects", INT_MAX), n))
    for key in ("dim", "start", "end", "step"):
        if key in p and not isinstance(p[key], int) and p[key] is not None:
            raise Unsupported(f"{key}={p[key]!r} is not a constant int")
    start = p.get("start", 0)
    end = p.get("end", INT_MAX)
    return ([p["dim"]], [0 if start is None else start], [INT_MAX if end is None else end],
            [p.get("step", 1) or 1], [p.get("select", INT_MAX)])


@lowering("Tensor.slice", "torch.slice_copy")
def slice_(b, op):
    if len(op.inputs) > 1:
        raise Unsupported("slice bounds given as tensors")
    dims, starts, ends, steps, selects = _slice_params(op)
    rank = b.rank(op.inputs[0])
    dims = [axis(d, rank) for d in dims]
    picked = [d for d, s in zip(dims, selects) if s != INT_MAX]
    if len(dims) == 1 and picked:  # x[:, i]: one Gather drops the dim
        b.node("Gather", [b.x(op), b.const(selects[0], hint="index")], b.y(op), axis=dims[0])
        return
    for i, s in enumerate(selects):
        if s != INT_MAX:  # a select is a one-element slice, squeezed below
            starts[i], ends[i], steps[i] = s, (s + 1 if s != -1 else INT64_MAX), 1
    ends = [INT64_MAX if e >= INT_MAX else e for e in ends]
    inputs = [b.x(op), b.const(starts, hint="starts"), b.const(ends, hint="ends"),
              b.const(dims, hint="axes"), b.const(steps, hint="steps")]
    if not picked:
        b.node("Slice", inputs, b.y(op))
        return
    b.node("Squeeze", [b.node("Slice", inputs), b.const(picked, hint="axes")], b.y(op))


def _written_box(shape, dims, starts, ends, steps, selects) -> list[range]:
    """Per input dim, the indices a slice write covers (a select covers one)."""
    box = [range(n) for n in shape]
    for dim, start, end, step, sel in zip(dims, starts, ends, steps, selects):
        n = shape[dim]
        if sel != INT_MAX:
            sel = sel + n if sel < 0 else sel
            box[dim] = range(sel, sel + 1)
        else:
            box[dim] = range(*slice(start, None if end >= INT_MAX else end, step).indices(n))
    return box


@lowering("Tensor.slice_copy", "torch.slice_scatter")
def slice_copy(b, op):
    """`x[..., a:b:s] = y` (and slice_scatter) as ScatterND: constant indices over the dims up to the last one
    written (the trailing dims go whole), the value broadcast to the written box."""
    src = b.named_input(op, "src", 1)
    shape = b.shape(op.inputs[0])
    if src is None or min(shape, default=0) < 0:
        raise Unsupported("needs a src operand and a static input shape")
    dims, starts, ends, steps, selects = _slice_params(op)
    dims = [axis(d, len(shape)) for d in dims]
    box = _written_box(shape, dims, starts, ends, steps, selects)
    if not dims or min(len(r) for r in box) == 0:  # x[...] = y writes the whole of x; x[0:0] = y nothing
        raise Unsupported("a write into the whole tensor or an empty slice is not lowered")
    lead = max(dims) + 1
    grid = np.stack(np.meshgrid(*box[:lead], indexing="ij"), axis=-1).astype(np.int64)
    picked = {d for d, s in zip(dims, selects) if s != INT_MAX}
    updates = _box_updates(b, op, src, [len(r) for r in box], picked)
    b.node("ScatterND", [b.x(op), b.const(grid, hint="indices"), updates], b.y(op))


def _box_updates(b, op, src, full: list[int], picked: set[int]) -> str:
    """src in input's dtype, broadcast to the slice's shape, then with the selected dims put
    back as 1s."""
    name = src.name
    if b.dtype(src) != b.dtype(op.inputs[0]):
        name = b.node("Cast", [name], to=onnx_type(b.dtype(op.inputs[0])))
    view = [n for i, n in enumerate(full) if i not in picked]
    if b.rank(src) > len(view):  # torch drops the value's extra leading 1s
        name = b.node("Reshape", [name, b.const(view, hint="shape")])
    name = b.node("Expand", [name, b.const(view, hint="shape")])
    return name if view == full else b.node("Reshape", [name, b.const(full, hint="shape")])


@lowering("Tensor.select", "torch.select")
def select(b, op):
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    b.node("Gather", [b.x(op), b.const(int(op.params["index"]), hint="index")], b.y(op), axis=dim)


@lowering("torch.flip", "Tensor.flip")
def flip(b, op):
    dims = [axis(d, b.rank(op.inputs[0])) for d in int_list(op.params["dims"])]
    n = len(dims)
    b.node("Slice", [b.x(op), b.const([-1] * n, hint="starts"),
                     b.const([-INT64_MAX - 1] * n, hint="ends"), b.const(dims, hint="axes"),
                     b.const([-1] * n, hint="steps")], b.y(op))


@lowering("Tensor.expand_as")
def expand_as(b, op):
    out = b.shape(op.outputs[0])
    target = b.const(out, hint="shape") if min(out) >= 0 else b.node("Shape", [b.x(op, 1)])
    b.node("Expand", [b.x(op), target], b.y(op))


@lowering("Tensor.expand", "torch.broadcast_to")
def expand(b, op):
    out = b.shape(op.outputs[0])
    if any(d < 0 for d in out):
        sizes = int_list(op.params.get("sizes", op.params.get("size")))
        if not sizes or len(op.inputs) > 1:
            raise Unsupported("dynamic expand target")
        out = [1 if d == -1 else d for d in sizes]  # Expand broadcasts: 1 keeps the input size
    b.node("Expand", [b.x(op), b.const(out, hint="shape")], b.y(op))


@lowering("Tensor.repeat", "torch.tile", "Tensor.tile")
def repeat(b, op):
    reps = int_list(op.params.get("sizes", op.params.get("dims", op.params.get("repeats"))))
    shape = b.shape(op.inputs[0])
    src = b.x(op)
    if len(reps) > len(shape):  # torch prepends size-1 dimensions first
        src = b.node("Unsqueeze", [src, b.const(list(range(len(reps) - len(shape))), hint="axes")])
    elif len(reps) < len(shape):  # torch.tile pads the repeats instead
        reps = [1] * (len(shape) - len(reps)) + reps
    b.node("Tile", [src, b.const(reps, hint="repeats")], b.y(op))


@lowering("Tensor.to", "Tensor.type", "Tensor.float", "Tensor.double", "Tensor.half",
          "Tensor.int", "Tensor.long", "Tensor.bool")
def cast(b, op):
    target = b.dtype(op.outputs[0])
    name = op.params.get("dtype")
    if isinstance(name, str) and name.startswith("torch."):
        target = from_torch_name(name)
    b.node("Cast", [b.x(op)], b.y(op), to=onnx_type(target))


@lowering("Tensor.masked_fill", "torch.masked_fill")
def masked_fill(b, op):
    mask = b.named_input(op, "mask", 1)
    if mask is None or "value" not in op.params:
        raise Unsupported("needs a mask operand and a constant value")
    value = b.const(op.params["value"], b.dtype(op.inputs[0]), "value")
    b.node("Where", [mask.name, value, b.x(op)], b.y(op))


@lowering("torch.where")
def where(b, op):
    if len(op.inputs) != 3:
        raise Unsupported("scalar operands or the one-argument form")
    b.node("Where", [o.name for o in op.inputs], b.y(op))


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}
_PAD_MODULES = {"ZeroPad": "constant", "ConstantPad": "constant", "ReflectionPad": "reflect",
                "ReplicationPad": "replicate", "CircularPad": "circular"}


def _onnx_pads(torch_pad: list[int], rank: int) -> list[int]:
    """torch pads the last dim first as (begin, end) pairs; ONNX lists all begins then ends."""
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(torch_pad) // 2):
        begins[rank - 1 - i], ends[rank - 1 - i] = torch_pad[2 * i], torch_pad[2 * i + 1]
    return begins + ends


@lowering("F.pad", "nn.ZeroPad1d", "nn.ZeroPad2d", "nn.ZeroPad3d", "nn.ConstantPad1d",
          "nn.ConstantPad2d", "nn.ConstantPad3d", "nn.ReflectionPad1d", "nn.ReflectionPad2d",
          "nn.ReflectionPad3d", "nn.ReplicationPad1d", "nn.ReplicationPad2d",
          "nn.ReplicationPad3d", "nn.CircularPad1d", "nn.CircularPad2d", "nn.CircularPad3d")
def pad(b, op):
    rank = b.rank(op.inputs[0])
    if op.type == "F.pad":
        torch_pad, mode = int_list(op.params["pad"]), op.params.get("mode", "constant")
    else:
        kind = op.type[3:-2]
        mode, n = _PAD_MODULES[kind], int(op.type[-2])
        torch_pad = ints(op.params["padding"], 2 * n, "padding")
    if mode not in _PAD_MODES:
        raise Unsupported(f"mode={mode!r}")
    inputs = [b.x(op), b.const(_onnx_pads(torch_pad, rank), hint="pads")]
    value = op.params.get("value")
    if _PAD_MODES[mode] == "constant" and value not in (None, 0, 0.0):
        inputs.append(b.const(value, b.dtype(op.inputs[0]), "pad_value"))
    b.node("Pad", inputs, b.y(op), mode=_PAD_MODES[mode])


@lowering("torch.index_select", "Tensor.index_select")
def index_select(b, op):
    index = b.named_input(op, "index", 1)
    if index is None:
        raise Unsupported("no index operand")
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    b.node("Gather", [b.x(op), index.name], b.y(op), axis=dim)


@lowering("torch.narrow", "Tensor.narrow")
def narrow(b, op):
    start, length = op.params.get("start"), op.params.get("length")
    if not isinstance(start, int) or not isinstance(length, int):
        raise Unsupported("start and length must be constant ints")
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    if start < 0:
        start += b.shape(op.inputs[0])[dim]
    b.node("Slice", [b.x(op), b.const([start], hint="starts"), b.const([start + length], hint="ends"),
                     b.const([dim], hint="axes")], b.y(op))


@lowering("torch.roll", "Tensor.roll")
def roll(b, op):
    """Per rolled dim: the last `shift` elements moved to the front (Slice, Slice, Concat)."""
    shape = b.shape(op.inputs[0])
    shifts, dims = int_list(op.params.get("shifts")), int_list(op.params.get("dims"))
    if not dims or len(shifts) != len(dims) or any(shape[d] < 0 for d in dims):
        raise Unsupported("roll needs dims and static sizes (the flattened form is not lowered)")
    current = b.x(op)
    for k, (shift, dim) in enumerate(zip(shifts, dims)):
        dim = axis(dim, len(shape))
        n = shape[dim]
        cut = (n - shift % n) % n
        out = b.y(op) if k == len(dims) - 1 else 1
        if cut == 0:
            current = b.node("Identity", [current], out)
            continue
        axes = b.const([dim], hint="axes")
        tail = b.node("Slice", [current, b.const([cut], hint="starts"),
                                b.const([n], hint="ends"), axes])
        head = b.node("Slice", [current, b.const([0], hint="starts"),
                                b.const([cut], hint="ends"), axes])
        current = b.node("Concat", [tail, head], out, axis=dim)


@lowering("torch.scatter_add", "Tensor.scatter_add")
def scatter_add(b, op):
    index, src = b.named_input(op, "index", 1), b.named_input(op, "src", 2)
    if index is None or src is None:
        raise Unsupported("needs index and src operands")
    dim = axis(int(op.params["dim"]), b.rank(op.inputs[0]))
    updates = src.name
    want, have = b.shape(index), b.shape(src)
    if want != have:  # torch reads only the index-shaped corner of a larger src
        if min(want + have) < 0:
            raise Unsupported("src larger than index with dynamic sizes")
        n = len(want)
        updates = b.node("Slice", [updates, b.const([0] * n, hint="starts"),
                                   b.const(want, hint="ends"), b.const(list(range(n)), hint="axes")])
    b.node("ScatterElements", [b.x(op), index.name, updates], b.y(op), axis=dim, reduction="add")
