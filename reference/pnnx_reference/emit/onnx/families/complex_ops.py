"""Complex tensors around the FFTs: graph inputs/outputs, torch.complex, real, imag, conj,
view_as_real/view_as_complex, and pnnx.Expression arithmetic (add, sub, mul, neg, abs).

A complex tensor is carried as a real one with a trailing axis of 2 (real, imaginary); these
lowerings are looked up only for operators with a complex operand (registry.complex_lowering).
"""
from __future__ import annotations

from .... import expression as ex
from ..dtypes import COMPLEX_PARTS
from ..registry import Unsupported, complex_lowering, lowering
from .expression import parse_expression
from .io import graph_input, graph_output

complex_lowering("pnnx.Input")(graph_input)
complex_lowering("pnnx.Output")(graph_output)


@complex_lowering("torch.complex")
def make_complex(b, op):
    real, imag = b.named_input(op, "real", 0), b.named_input(op, "imag", 1)
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


@lowering("torch.real", "Tensor.real")
def real_of_real(b, op):
    b.node("Identity", [b.x(op)], b.y(op))


def _part(index: int):
    def lower(b, op):
        b.node("Gather", [b.x(op), b.const(index, hint="part")], b.y(op), axis=-1)
    return lower


complex_lowering("torch.real", "Tensor.real")(_part(0))
complex_lowering("torch.imag", "Tensor.imag")(_part(1))


@complex_lowering("torch.conj", "Tensor.conj", "torch.conj_physical")
def conj(b, op):
    dtype = COMPLEX_PARTS.get(b.dtype(op.inputs[0]))
    if dtype is None:
        raise Unsupported(f"conj of a {b.dtype(op.inputs[0])} tensor")
    b.node("Mul", [b.x(op), b.const([1.0, -1.0], dtype, "conj")], b.y(op))


@complex_lowering("torch.view_as_real", "torch.view_as_complex")
def view_as(b, op):
    b.node("Identity", [b.x(op)], b.y(op))


# pnnx.Expression on complex operands: add, sub, mul, neg of complex and real values, abs
# (complex -> real). A value is ("complex", name), ("real", name) or ("const", float).

def _pairs_of(b, value, dtype: str) -> str:
    kind, v = value
    if kind == "complex":
        return v
    if kind == "const":
        return b.const([v, 0.0], dtype, "complex_const")
    return b.node("Mul", [b.node("Unsqueeze", [v, b.const([-1], hint="axes")]),
                          b.const([1.0, 0.0], dtype, "as_complex")])


def _complex_product(b, x: str, y: str) -> str:
    def part(v, i):
        return b.node("Gather", [v, b.const(i, hint="part")], axis=-1)

    (xr, xi), (yr, yi) = (part(x, 0), part(x, 1)), (part(y, 0), part(y, 1))
    real = b.node("Sub", [b.node("Mul", [xr, yr]), b.node("Mul", [xi, yi])])
    imag = b.node("Add", [b.node("Mul", [xr, yi]), b.node("Mul", [xi, yr])])
    last = b.const([-1], hint="axes")
    return b.node("Concat", [b.node("Unsqueeze", [real, last]), b.node("Unsqueeze", [imag, last])],
                  axis=-1)


def _scale(b, value, dtype: str) -> str:
    """A real factor, shaped to broadcast over a trailing (real, imaginary) axis."""
    kind, v = value
    if kind == "const":
        return b.const(v, dtype, "factor")
    return b.node("Unsqueeze", [v, b.const([-1], hint="axes")])


def _complex_call(b, func: str, args: list, dtype: str):
    if func == "abs" and args[0][0] == "complex":
        return "real", b.node("ReduceL2", [args[0][1], b.const([-1], hint="axes")], keepdims=0)
    if func == "neg" and args[0][0] == "complex":
        return "complex", b.node("Neg", [args[0][1]])
    if func in ("add", "sub") and len(args) == 2:
        pair = [_pairs_of(b, a, dtype) for a in args]
        return "complex", b.node("Add" if func == "add" else "Sub", pair)
    if func == "mul" and len(args) == 2:
        (ka, a), (kb, c) = args
        if ka == kb == "complex":
            return "complex", _complex_product(b, a, c)
        if ka == "complex":
            return "complex", b.node("Mul", [a, _scale(b, args[1], dtype)])
        if kb == "complex":
            return "complex", b.node("Mul", [c, _scale(b, args[0], dtype)])
    raise Unsupported(f"{func} on complex operands")


def _complex_tree(b, op, node, dtype: str):
    if isinstance(node, ex.Input):
        operand = op.inputs[node.index]
        return ("complex" if operand.dtype in COMPLEX_PARTS else "real"), operand.name
    if isinstance(node, ex.Literal) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return "const", float(node.value)
    if isinstance(node, ex.Call):
        return _complex_call(b, node.func, [_complex_tree(b, op, a, dtype) for a in node.args],
                             dtype)
    raise Unsupported(f"expression {op.params.get('expr')!r} on complex operands")


@complex_lowering("pnnx.Expression")
def complex_expression(b, op):
    tree = parse_expression(op)
    out = op.outputs[0]
    dtype = COMPLEX_PARTS.get(out.dtype, out.dtype)
    kind, value = _complex_tree(b, op, tree, dtype)
    if kind != ("complex" if out.dtype in COMPLEX_PARTS else "real"):
        raise Unsupported(f"expression {op.params.get('expr')!r} on complex operands")
    b.node("Identity", [value], b.y(op))
