"""The shape a shape operator produces, as expression items over the sizes of its operands.

A size our IR traced as arithmetic between inputshape and inputshape2 (`size(@0,1)` in a
pnnx.Expression list, or a dim a reshape-like operator copies from its input) is described
here once; each emitter writes the items in its own form (ncnn's shape expressions,
ONNX's Shape/Gather arithmetic)."""
from __future__ import annotations

from .. import expression as ex
from ..errors import Unsupported
from ..ir import Operand


def size_of(operand_index: int, dim: int) -> ex.Node:
    """`size(@operand_index, dim)`."""
    return ex.Call("size", (ex.Input(operand_index), ex.literal(int(dim))))


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
# `size`): an emitter writes it as a shape computed at run time
SHAPE_READERS = frozenset({"Tensor.view", "Tensor.reshape", "torch.reshape", "F.interpolate", "F.upsample",
                           "nn.Upsample"})


def scalar_item(operand: Operand) -> tuple[ex.Node, list[Operand]]:
    """The expression a pnnx.Expression computes for the int `operand` and the operands its
    `@i` stand for."""
    producer = operand.producer
    if producer is None or producer.type != "pnnx.Expression":
        raise Unsupported(f"a slice bound {operand.name} that is no expression of sizes")
    return ex.parse(producer.params.get("expr", "")), list(producer.inputs)


def reshape_target(op) -> tuple[list, list]:
    """The torch-ordered output shape as expression items, and the operands their `@i` name."""
    src, out = op.inputs[0], op.outputs[0]
    computed = shape_items(op.inputs[1]) if len(op.inputs) > 1 and op.type in SHAPE_READERS else None
    if computed is not None:
        return computed
    if op.type in ("Tensor.view_as", "Tensor.reshape_as"):
        other = _known_shape(op.inputs[1])
        return [size_of(1, j) if d < 0 else ex.literal(int(d)) for j, d in enumerate(other)], [src, op.inputs[1]]
    in_shape, out_shape = _known_shape(src), _known_shape(out)
    if op.type in ("torch.flatten", "Tensor.flatten", "nn.Flatten", "torch.ravel"):
        return _flattened(op, in_shape), [src]
    unknown_in = [d for d, n in enumerate(in_shape) if n < 0]
    unknown_out = [d for d, n in enumerate(out_shape) if n < 0]
    if op.type in ("torch.squeeze", "Tensor.squeeze", "torch.unsqueeze", "Tensor.unsqueeze") \
            and len(unknown_in) == len(unknown_out):  # only dims of 1 come and go
        source = dict(zip(unknown_out, unknown_in))
        return [size_of(0, source[j]) if n < 0 else ex.literal(int(n)) for j, n in enumerate(out_shape)], [src]
    if len(unknown_out) <= 1:  # ncnn infers the one unknown dim
        return [ex.literal(int(n)) for n in out_shape], [src]
    raise Unsupported(f"{op.type} to {tuple(out_shape)}: the sizes of a shape that follows the input are not traced")


def _known_shape(x: Operand) -> list[int]:
    if x.shape is None:
        raise Unsupported(f"shape of operand {x.name} is unknown")
    return list(x.shape)


def _flattened(op, in_shape: list[int]) -> list:
    rank = len(in_shape)
    default = (1, -1) if op.type == "nn.Flatten" else (0, -1)
    start = 0 if op.type == "torch.ravel" else int(op.params.get("start_dim", default[0]))
    end = -1 if op.type == "torch.ravel" else int(op.params.get("end_dim", default[1]))
    start, end = start % max(rank, 1), end % max(rank, 1)

    def dim(d: int):
        return size_of(0, d) if in_shape[d] < 0 else ex.literal(int(in_shape[d]))

    merged = dim(start)
    for d in range(start + 1, end + 1):
        merged = ex.Call("mul", (merged, dim(d)))
    return [dim(d) for d in range(start)] + [merged] + [dim(d) for d in range(end + 1, rank)]
