"""Shapes that follow the input: ncnn's shape expressions.

ncnn evaluates a list expression at run time from the shapes of a layer's input blobs (Reshape
6=, Interp 9=): `op(arg,...)` prefix calls (`+ - * / //` and named functions), integer or
decimal literals, `-1` for "the rest" in a Reshape, and `<k><w|h|d|c|n>` for a dim of the
layer's input blob k (`n` its batch). A size our IR traced as arithmetic between inputshape and
inputshape2 (`size(@0,1)` in a pnnx.Expression, or a dim a shape operator copies from its
input) is written so instead of frozen at the traced value."""
from __future__ import annotations

from ... import expression as ex
from ...errors import Unsupported
from ...ir import Operand
from ..shape_lists import SHAPE_READERS, reshape_target, scalar_item, shape_items, size_of  # noqa: F401
from .context import MAX_BLOB_RANK, Context, dims_params

# ncnn's letter per physical dim, innermost first, by blob rank
_LETTERS = {1: "w", 2: "wh", 3: "whc", 4: "whdc"}
_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floor_divide": "//"}
# functions ncnn's expression evaluator has under the same name (arity as pnnx's)
_NAMED = frozenset("""trunc ceil floor round max min pow fmod remainder atan2 abs neg sign square sqrt
                      rsqrt reciprocal exp log log10 sin asin cos acos tan atan sinh asinh cosh acosh
                      tanh atanh""".split())
_ALIASES = {"maximum": "max", "minimum": "min", "int": "trunc"}


def is_dynamic(shape) -> bool:
    return shape is None or any(int(d) < 0 for d in shape)


class ShapeRefs:
    """The input blobs a shape-expression layer reads: the data blob(s) first, then each other
    operand whose size the expression refers to, once."""

    def __init__(self, ctx: Context, data: list[Operand]) -> None:
        self.ctx = ctx
        self.blobs = [ctx.blob(x) for x in data]

    def size(self, x: Operand, dim: int) -> str:
        """ncnn's reference to torch dim `dim` of operand `x`, as carried now."""
        shape = self.ctx.torch_shape(x)
        if not shape:
            raise Unsupported(f"size() of the 0-d operand {x.name}")
        d = dim + len(shape) if dim < 0 else dim
        blob = self.ctx.blob(x)
        if blob not in self.blobs:
            self.blobs.append(blob)
        k = self.blobs.index(blob)
        if k > 9:
            raise Unsupported("a shape expression reads the sizes of more than 10 blobs (ncnn's limit)")
        return dim_token(k, len(shape), self.ctx.batch_axis(x), d)


def dim_token(k: int, rank: int, axis: int | None, d: int) -> str:
    """ncnn's name of torch dim `d` of input blob `k`, a rank-`rank` tensor carried with batch
    axis `axis`: `kn` for the batch, else its letter among the blob's dims."""
    if d == axis:
        return f"{k}n"
    physical = [i for i in range(rank) if i != axis]
    if len(physical) > MAX_BLOB_RANK:
        raise Unsupported(f"a rank-{len(physical)} blob (ncnn blobs have at most {MAX_BLOB_RANK} dims)")
    return f"{k}{_LETTERS[len(physical)][len(physical) - 1 - physical.index(d)]}"


def padded_expression(rank: int, padded: int) -> str:
    """Blob 0 (of `rank` dims) with outer dims of 1 up to `padded` dims, as a Reshape list."""
    return ",".join([dim_token(0, rank, None, d) for d in reversed(range(rank))] + ["1"] * (padded - rank))


def with_outer_ones(ctx: Context, blob: str, shape: list[int], rank: int, base: str) -> str:
    """`blob` (ncnn `shape`) with outer 1s up to `rank` dims, in a new temp blob named after
    `base`; a dynamic blob's Reshape reads its own dims (a shape expression)."""
    if not is_dynamic(shape):
        return ctx.reshaped(blob, [1] * (rank - len(shape)) + list(shape), base)
    target = ctx.temp(base)
    ctx.emit("Reshape", "reshape", [blob], [target], {6: padded_expression(len(shape), rank)})
    return target


def own_shape_expression(shape: list[int], axis: int | None, drop: int | None = None) -> str:
    """The whole torch `shape` of blob 0, carried with batch axis `axis`, as a Reshape list: a
    static size as itself, a dynamic one read from the blob; dim `drop` left out (the batch
    axis the result is carried with)."""
    return ",".join(str(int(n)) if n >= 0 else dim_token(0, len(shape), axis, d)
                    for d, n in reversed(list(enumerate(shape))) if d != drop)


def reshape_to(ctx: Context, blob: str, shape: list[int], sizes: list[tuple[Operand, int] | None],
               out: str) -> str:
    """`blob` viewed as ncnn `shape` (outermost first) in blob `out`: each size that follows the
    input (-1) read at run time from torch dim `sizes[i][1]` of operand `sizes[i][0]`, so several
    of them can follow the input (ncnn infers one -1 only)."""
    if len(shape) > MAX_BLOB_RANK:
        raise Unsupported(f"a rank-{len(shape)} blob (ncnn blobs have at most {MAX_BLOB_RANK} dims)")
    if not is_dynamic(shape):
        ctx.emit("Reshape", "reshape", [blob], [out], dims_params(shape))
        return out
    refs = ShapeRefs(ctx, [])
    refs.blobs.append(blob)
    items = [str(int(n)) if n >= 0 else refs.size(*sizes[i]) for i, n in enumerate(shape)]
    ctx.emit("Reshape", "reshape", refs.blobs, [out], {6: ",".join(reversed(items))})
    return out


def render(node: ex.Node, operands: list[Operand], refs: ShapeRefs) -> str:
    """One item of a shape list in ncnn's syntax; `@i` in `size(@i, d)` is `operands[i]`."""
    if isinstance(node, ex.Literal):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise Unsupported(f"{node.text} in a shape expression")
        return str(node.value) if isinstance(node.value, int) else repr(float(node.value))
    if isinstance(node, ex.Call) and node.func == "size":
        x, dim = node.args if len(node.args) == 2 else (node.args[0], None)
        if not isinstance(x, ex.Input) or not isinstance(dim, ex.Literal) or not isinstance(dim.value, int):
            raise Unsupported(f"{ex.to_string(node)}: only size(tensor, dim) has an ncnn shape expression")
        return refs.size(operands[x.index], dim.value)
    if isinstance(node, ex.Call):
        args = ",".join(render(a, operands, refs) for a in node.args)
        func = _ALIASES.get(node.func, node.func)
        if func in _INFIX:
            return f"{_INFIX[func]}({args})"
        if func in _NAMED:
            return f"{func}({args})"
        raise Unsupported(f"{node.func} has no ncnn shape-expression form")
    raise Unsupported(f"{ex.to_string(node)}: a tensor's values in a shape (only its sizes are known "
                      "when ncnn evaluates the expression)")


def render_list(items: list[ex.Node], operands: list[Operand], refs: ShapeRefs) -> str:
    """A torch-ordered shape as ncnn's list, innermost (w) first."""
    return ",".join(render(item, operands, refs) for item in reversed(items))


# the readers of a shape list, and expand's target sizes: where they follow the input, the
# expand keeps those dims of its input (families/repeat.py) and reads none of the sizes
SIZE_READERS = SHAPE_READERS | {"Tensor.expand"}


def shape_only(operand: Operand) -> bool:
    """Whether every consumer of `operand` reads it as a shape list or a slice bound (never as
    data): its consumers write it as an ncnn expression, so it needs no layer of its own."""
    return bool(operand.consumers) and all(_reads_as_shape(c, operand) for c in operand.consumers)


def _reads_as_shape(op, operand: Operand) -> bool:
    if op.type == "Tensor.slice":
        return operand in (op.input("start"), op.input("end"))
    if op.type == "torch.arange":  # arange(size): a ramp read from the sized blob (ramps.py)
        return operand is op.input("end")
    return op.type in SIZE_READERS and operand not in op.inputs[:1]


def keeps_leading_dim(op) -> bool:
    """Whether a reshape to a shape that follows the input keeps dim 0 of its input as dim 0."""
    src = op.inputs[0]
    try:
        items, operands = reshape_target(op)
    except Unsupported:
        return False
    first = items[0] if items else None
    if isinstance(first, ex.Literal):
        return bool(src.shape) and first.value == src.shape[0] >= 0
    return (isinstance(first, ex.Call) and first.func == "size" and len(first.args) == 2
            and isinstance(first.args[0], ex.Input) and operands[first.args[0].index] is src
            and first.args[1].value == 0)


