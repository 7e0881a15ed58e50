"""Complex tensors around the FFTs, carried as real tensors with a trailing axis of 2 (real,
imaginary): torch.complex, real, imag, conj, view_as_real/view_as_complex. These lowerings are
looked up only for operators with a complex operand (registry.COMPLEX_LOWERINGS), except
torch.real of a real tensor."""
from __future__ import annotations

from ....errors import Unsupported
from ..dtypes import COMPLEX_PARTS
from ..registry import COMPLEX_LOWERINGS, LOWERINGS


@COMPLEX_LOWERINGS.register("torch.complex")
def make_complex(ctx, op):
    real, imag = op.input("real", 0), op.input("imag", 1)
    if real is None or imag is None:
        raise Unsupported("needs real and imag")
    if ctx.dtype(real) != ctx.dtype(imag) or ctx.dtype(real) not in ("f32", "f64"):
        raise Unsupported("real and imag must both be f32 or both f64")
    out_shape = ctx.shape(op.outputs[0])
    if any(d < 0 for d in out_shape):
        raise Unsupported("needs a static output shape")
    shape = ctx.const(out_shape + [1], hint="shape")
    last = ctx.const([-1], hint="axes")
    parts = [ctx.node("Expand", [ctx.node("Unsqueeze", [part.name, last]), shape])
             for part in (real, imag)]
    ctx.node("Concat", parts, ctx.y(op), axis=-1)


@LOWERINGS.register("torch.real", "Tensor.real")
def real_of_real(ctx, op):
    ctx.node("Identity", [ctx.x(op)], ctx.y(op))


def _part(index: int):
    def lower(ctx, op):
        ctx.node("Gather", [ctx.x(op), ctx.const(index, hint="part")], ctx.y(op), axis=-1)
    return lower


COMPLEX_LOWERINGS.register("torch.real", "Tensor.real")(_part(0))
COMPLEX_LOWERINGS.register("torch.imag", "Tensor.imag")(_part(1))


@COMPLEX_LOWERINGS.register("torch.conj", "Tensor.conj", "torch.conj_physical")
def conj(ctx, op):
    dtype = COMPLEX_PARTS.get(ctx.dtype(op.inputs[0]))
    if dtype is None:
        raise Unsupported(f"conj of a {ctx.dtype(op.inputs[0])} tensor")
    ctx.node("Mul", [ctx.x(op), ctx.const([1.0, -1.0], dtype, "conj")], ctx.y(op))


@COMPLEX_LOWERINGS.register("torch.view_as_real", "torch.view_as_complex")
def view_as(ctx, op):
    ctx.node("Identity", [ctx.x(op)], ctx.y(op))
