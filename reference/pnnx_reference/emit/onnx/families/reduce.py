"""Reductions: Reduce* (axes as an input, opset 18+), ArgMax/ArgMin, any/all, norms,
var/std (and their _mean forms); torch.max/min with a dim give values and indices
(ReduceMax + ArgMax), with two tensors they are elementwise."""
from __future__ import annotations

from onnx import TensorProto

from ....errors import Unsupported
from ..builder import axis, int_list
from ..promote import in_output_dtype
from ..registry import LOWERINGS


def _axes(ctx, op) -> list[int] | None:
    dims = op.params.get("dim", op.params.get("axis"))
    if dims is None:
        return None
    rank = ctx.rank(op.inputs[0])
    return sorted(axis(d, rank) for d in int_list(dims))


def _reduce(ctx, op, onnx_op: str, out: str | None = None, source: str | None = None) -> str:
    axes = _axes(ctx, op)
    inputs = [source or ctx.x(op)] + ([ctx.const(axes, hint="axes")] if axes else [])
    keep = 1 if op.params.get("keepdim", False) else 0
    return ctx.node(onnx_op, inputs, out or ctx.y(op), keepdims=keep)


def _simple(onnx_op: str, *types: str):
    @LOWERINGS.register(*types)
    def lower(ctx, op):
        _reduce(ctx, op, onnx_op, source=in_output_dtype(ctx, op))
    return lower


_simple("ReduceMean", "torch.mean", "Tensor.mean")
_simple("ReduceSum", "torch.sum", "Tensor.sum")
_simple("ReduceProd", "torch.prod", "Tensor.prod")
_simple("ReduceMax", "torch.amax", "Tensor.amax")
_simple("ReduceMin", "torch.amin", "Tensor.amin")
_simple("ReduceLogSumExp", "torch.logsumexp", "Tensor.logsumexp")


@LOWERINGS.register("torch.norm", "Tensor.norm", "torch.linalg.vector_norm", "torch.linalg.norm")
def norm(ctx, op):
    p = op.params.get("p", op.params.get("ord", "fro"))
    onnx_op = {"fro": "ReduceL2", 2: "ReduceL2", 1: "ReduceL1",  # 2.0 and 1.0 hash as 2 and 1
               None: "ReduceL2"}.get(p)
    if onnx_op is None:
        raise Unsupported(f"p={p!r}")
    _reduce(ctx, op, onnx_op)


def _max_min(reduce_op: str, arg_op: str, binary_op: str):
    def lower(ctx, op):
        if len(op.inputs) == 2:  # torch.max(a, b): elementwise
            ctx.node(binary_op, [o.name for o in op.inputs], ctx.y(op))
            return
        _reduce(ctx, op, reduce_op)
        if len(op.outputs) == 2:
            dim = _axes(ctx, op)
            if dim is None or len(dim) != 1:
                raise Unsupported("indices need one dim")
            ctx.node(arg_op, [ctx.x(op)], ctx.y(op, 1), axis=dim[0],
                   keepdims=1 if op.params.get("keepdim", False) else 0)
    return lower


LOWERINGS.register("torch.max", "Tensor.max")(_max_min("ReduceMax", "ArgMax", "Max"))
LOWERINGS.register("torch.min", "Tensor.min")(_max_min("ReduceMin", "ArgMin", "Min"))


def _arg(onnx_op: str):
    def lower(ctx, op):
        dim = op.params.get("dim")
        keep = 1 if op.params.get("keepdim", False) else 0
        if dim is None:
            flat = ctx.node("Reshape", [ctx.x(op), ctx.const([-1], hint="shape")])
            out = ctx.node(onnx_op, [flat], 1 if keep else ctx.y(op), axis=0, keepdims=keep)
            if keep:  # torch keeps every dim as size 1
                ctx.node("Reshape", [out, ctx.const([1] * ctx.rank(op.inputs[0]), hint="shape")], ctx.y(op))
            return
        ctx.node(onnx_op, [ctx.x(op)], ctx.y(op), axis=axis(int(dim), ctx.rank(op.inputs[0])),
               keepdims=keep)
    return lower


LOWERINGS.register("torch.argmax", "Tensor.argmax")(_arg("ArgMax"))
LOWERINGS.register("torch.argmin", "Tensor.argmin")(_arg("ArgMin"))


def _any_all(onnx_op: str):
    def lower(ctx, op):
        source = ctx.x(op) if ctx.dtype(op.inputs[0]) == "bool" else \
            ctx.node("Cast", [ctx.x(op)], to=TensorProto.BOOL)
        _reduce(ctx, op, onnx_op, source=source)
    return lower


LOWERINGS.register("torch.any", "Tensor.any")(_any_all("ReduceMax"))
LOWERINGS.register("torch.all", "Tensor.all")(_any_all("ReduceMin"))


def _moments(ctx, op, var_out, mean_out) -> str:
    """Variance with torch's correction (unbiased=True means correction=1); the mean too
    when `mean_out` is given."""
    axes = _axes(ctx, op) or list(range(ctx.rank(op.inputs[0])))
    shape = ctx.shape(op.inputs[0])
    if any(shape[a] < 0 for a in axes):
        raise Unsupported("variance over a dynamic dimension")
    count = 1
    for a in axes:
        count *= shape[a]
    correction = op.params.get("correction")
    if correction is None:
        correction = 1 if op.params.get("unbiased", True) else 0
    axes_c = ctx.const(axes, hint="axes")
    keep = 1 if op.params.get("keepdim", False) else 0
    mean = ctx.node("ReduceMean", [ctx.x(op), axes_c], keepdims=1)
    centred = ctx.node("Sub", [ctx.x(op), mean])
    sq = ctx.node("ReduceSumSquare", [centred, axes_c], keepdims=keep)
    dt = ctx.dtype(op.inputs[0])
    var = ctx.node("Div", [sq, ctx.const(float(max(count - correction, 0)), dt, "count")], var_out)
    if mean_out:
        ctx.node("Identity", [mean], mean_out) if keep else ctx.node("Squeeze", [mean, axes_c], mean_out)
    return var


def _spread(take_sqrt: bool, with_mean: bool):
    def lower(ctx, op):
        mean_out = ctx.y(op, 1) if with_mean else None
        var = _moments(ctx, op, 1 if take_sqrt else ctx.y(op), mean_out)
        if take_sqrt:
            ctx.node("Sqrt", [var], ctx.y(op))
    return lower


LOWERINGS.register("torch.var", "Tensor.var")(_spread(False, False))
LOWERINGS.register("torch.std", "Tensor.std")(_spread(True, False))
LOWERINGS.register("torch.var_mean")(_spread(False, True))
LOWERINGS.register("torch.std_mean")(_spread(True, True))
