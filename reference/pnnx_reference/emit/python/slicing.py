"""`Tensor.slice` and `Tensor.index` rendered as Python indexing (`v[:,1:3,::2,-1]`)."""
from __future__ import annotations

from pnnx_reference import expression
from pnnx_reference.errors import InvalidGraph
from pnnx_reference.formats.textfile import is_digits
from pnnx_reference.ir import Operator

INT_MAX = 2147483647


def _component(op: Operator, ctx, singular: str, plural: str, i: int, default: int):
    """One of start/end/step/select for slice position i: an int or a variable name."""
    if singular in op.params:
        return _as_int(op, op.params[singular])
    if plural in op.params:
        values = op.params[plural]
        if not isinstance(values, list) or i >= len(values):
            raise InvalidGraph(f"{op.name!r}: Tensor.slice {plural} has no entry {i}")
        return _as_int(op, values[i])
    operand = op.input(singular)
    if operand is not None:
        return ctx.var(operand)
    operand = op.input(plural)
    if operand is not None:
        return _slice_index(op, ctx, operand, i)
    return default


def _slice_index(op: Operator, ctx, operand, i: int):
    producer = operand.producer
    if producer is None or producer.type != "pnnx.SliceIndexes":
        raise InvalidGraph(f"{op.name!r}: Tensor.slice index input must come from pnnx.SliceIndexes")
    indexes = producer.params.get("indexes")
    if not isinstance(indexes, list) or i >= len(indexes):
        raise InvalidGraph(f"{producer.name!r}: pnnx.SliceIndexes has no index {i}")
    text = str(indexes[i])
    if text.startswith("@") and is_digits(text[1:]) and int(text[1:]) < len(producer.inputs):
        return ctx.var(producer.inputs[int(text[1:])])
    try:
        return int(text)
    except ValueError:
        raise InvalidGraph(f"{producer.name!r}: bad slice index {text!r}") from None


def _as_int(op: Operator, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidGraph(f"{op.name!r}: Tensor.slice expects integers, got {value!r}")
    return value


def _one_dim(op: Operator, ctx, i: int) -> str:
    select = _component(op, ctx, "select", "selects", i, INT_MAX)
    if select != INT_MAX:
        return str(select)
    start = _component(op, ctx, "start", "starts", i, 0)
    end = _component(op, ctx, "end", "ends", i, INT_MAX)
    step = _component(op, ctx, "step", "steps", i, 1)
    text = ("" if start == 0 else str(start)) + ":" + ("" if end == INT_MAX else str(end))
    return text + ("" if step == 1 else f":{step}")


def slice_expression(op: Operator, ctx) -> str:
    dims = op.params.get("dims", [op.params.get("dim")])
    if not isinstance(dims, list) or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        raise InvalidGraph(f"{op.name!r}: Tensor.slice needs integer dim/dims, got {dims!r}")
    positive, negative = [], []
    last = -1
    for i, dim in enumerate(dims):
        part = positive if dim >= 0 else negative
        part.extend([":"] * max(0, dim - last - 1))
        last = dim
        part.append(_one_dim(op, ctx, i))
    if negative:
        # upstream leaves out the full slices after the last negative dim; `v[...,a]` would
        # then index dim -1 instead of e.g. dim -2
        negative.extend([":"] * max(0, -1 - last))
        return ",".join(positive + ["..."] + negative)
    return ",".join(positive)


def index_expression(op: Operator, ctx) -> str:
    """`Tensor.index expr=[None,@1]`: None is a full slice, `@i` an index tensor input."""
    expr = op.params.get("expr", "")
    if isinstance(expr, list):  # read back from pnnx.param, `[None,@1]` is an array param
        expr = "[" + ",".join("None" if v is None else str(v) for v in expr) + "]"
    node = expression.parse(expr)
    if not isinstance(node, expression.ListExpr):
        raise InvalidGraph(f"{op.name!r}: Tensor.index expr must be a list")
    names = [ctx.var(o) for o in op.inputs]
    parts = [":" if isinstance(n, expression.Literal) and n.value is None
             else expression.render_python(n, names) for n in node.items]
    return ",".join(parts)
