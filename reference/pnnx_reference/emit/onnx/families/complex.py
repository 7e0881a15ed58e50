"""Complex tensors around the FFTs, carried as real tensors with a trailing axis of 2 (real,
imaginary): torch.complex, real, imag, conj, view_as_real/view_as_complex. These lowerings are
looked up only for operators with a complex operand (registry.COMPLEX_LOWERINGS), except
torch.real of a real tensor."""
from __future__ import annotations

from ....errors import Unsupported
from ..dtypes import COMPLEX_PARTS
from ..registry import COMPLEX_LOWERINGS, LOWERINGS


@COMPLEX_LOWERINGS.register("torch.complex")
def make_complex(b, op):
    real, imag = op.input("real", 0), op.input("imag", 1)
    if real is None or imag is None:
        raise Unsupported("needs real and imag")
    if b.dtype(real) != b.dtype(imag) or b.dtype(real) not in ("f32", "f64"):
        raise Unsupported("real and imag must both be f32 or both f64")
    out_shape = b.shape(op.outputs[0])
    if any(d < 0 for d in out_shape):
        raise Unsupported("needs a static output shape")
    shape = b.const(out_shape + [1], hint="shape")
    last = b.const([-1], hint="axes")
    parts = [b.node("Expand", [b.node("Unsqueeze", [part.name, last]), shape])
             for part in (real, imag)]
    b.node("Concat", parts, b.y(op), axis=-1)


@LOWERINGS.register("torch.real", "Tensor.real")
def real_of_real(b, op):
    b.node("Identity", [b.x(op)], b.y(op))


def _part(index: int):
    def lower(b, op):
        b.node("Gather", [b.x(op), b.const(index, hint="part")], b.y(op), axis=-1)
    return lower


COMPLEX_LOWERINGS.register("torch.real", "Tensor.real")(_part(0))
COMPLEX_LOWERINGS.register("torch.imag", "Tensor.imag")(_part(1))


@COMPLEX_LOWERINGS.register("torch.conj", "Tensor.conj", "torch.conj_physical")
def conj(b, op):
    dtype = COMPLEX_PARTS.get(b.dtype(op.inputs[0]))
    if dtype is None:
        raise Unsupported(f"conj of a {b.dtype(op.inputs[0])} tensor")
    b.node("Mul", [b.x(op), b.const([1.0, -1.0], dtype, "conj")], b.y(op))


@COMPLEX_LOWERINGS.register("torch.view_as_real", "torch.view_as_complex")
def view_as(b, op):
    b.node("Identity", [b.x(op)], b.y(op))
