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
from .context import MAX_BLOB_RANK, Context

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
        b = self.ctx.batch_axis(x)
        if d == b:
            return f"{k}n"
        physical = [i for i in range(len(shape)) if i != b]
        if len(physical) > MAX_BLOB_RANK:
            raise Unsupported(f"operand {x.name} is a rank-{len(physical)} blob")
        return f"{k}{_LETTERS[len(physical)][len(physical) - 1 - physical.index(d)]}"


def padded_expression(rank: int, padded: int) -> str:
    """Blob 0 (of `rank` dims) with outer dims of 1 up to `padded` dims, as a Reshape list."""
    return ",".join([f"0{letter}" for letter in _LETTERS[rank]] + ["1"] * (padded - rank))


def size_of(operand_index: int, dim: int) -> ex.Node:
    """`size(@operand_index, dim)`."""
    return ex.Call("size", (ex.Input(operand_index), ex.literal(int(dim))))


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


def shape_items(operand: Operand) -> tuple[list[ex.Node], list[Operand]] | None:
    """The items of the list a pnnx.Expression computes for `operand` and the operands its `@i`
    stand for, or None when `operand` is not such a list."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Expression":
        return None
    tree = ex.parse(producer.params.get("expr", ""))
    if not isinstance(tree, ex.ListExpr):
        return None
    return list(tree.items), list(producer.inputs)


# operator types that read a shape list at input 1 (the reshape family's `shape`, interpolate's
# `size`) and write it as an ncnn shape expression
SHAPE_READERS = frozenset({"Tensor.view", "Tensor.reshape", "torch.reshape", "F.interpolate", "F.upsample",
                           "nn.Upsample"})


def shape_list_only(operand: Operand) -> bool:
    """Whether every consumer of `operand` reads it as its shape list (never as data)."""
    return bool(operand.consumers) and all(
        c.type in SHAPE_READERS and operand not in c.inputs[:1] for c in operand.consumers)
