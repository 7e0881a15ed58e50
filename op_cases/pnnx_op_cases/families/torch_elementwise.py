"""torch.*: the `elementwise` family (emit/*/families/elementwise.py): abs, acos, acosh, add,
addcmul, asin, asinh, atan, atan2, atanh, ceil, cos, cosh, div, erf, exp, expm1, floor,
floor_divide, lgamma, log, log10, log1p, logaddexp, maximum, minimum, mul, neg, positive, pow,
reciprocal, relu, remainder, round, rsqrt, sigmoid, sign, sin, sinh, sqrt, square, sub, tan,
tanh, trunc."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, binary, case, f, i, table, unary


# op -> (low, high, accepts integer input): ranges keep each function inside its domain.
_UNARY = {
    "abs": (-3, 3, True), "acos": (-0.99, 0.99, False), "acosh": (1.0, 4.0, False),
    "asin": (-0.99, 0.99, False), "asinh": (-3, 3, False), "atan": (-3, 3, False),
    "atanh": (-0.95, 0.95, False), "ceil": (-3, 3, True), "cos": (-3, 3, False),
    "cosh": (-2, 2, False), "erf": (-2, 2, False), "exp": (-3, 3, False), "expm1": (-2, 2, False),
    "floor": (-3, 3, True), "lgamma": (0.1, 5.0, False), "log": (0.05, 4.0, False),
    "log10": (0.05, 4.0, False), "log1p": (-0.9, 3.0, False), "neg": (-3, 3, True),
    "positive": (-3, 3, True), "reciprocal": (0.25, 4.0, False), "round": (-4, 4, True),
    "rsqrt": (0.05, 4.0, False), "sign": (-3, 3, True), "sin": (-3, 3, False), "sinh": (-2, 2, False),
    "sqrt": (0.0, 4.0, False), "square": (-3, 3, True), "tan": (-1.2, 1.2, False),
    "tanh": (-3, 3, False), "trunc": (-3, 3, True), "relu": (-3, 3, True), "sigmoid": (-6, 6, False),
}


_TOL = {"lgamma": (1e-5, 1e-5, "lgamma is a series approximation in every runtime"),
        "tan": (1e-5, 1e-5, "tan grows steeply near the range ends"),
        "cosh": (1e-5, 1e-5, "exponential growth"), "sinh": (1e-5, 1e-5, "exponential growth")}


_EXTRA = {
    "round": [("decimals2", "torch.round(x0, decimals=2)", [f(3, 7, low=-4, high=4)])],
    "exp": [("f64", "torch.exp(x0)", [f(2, 5, dtype="f64")])],
    "abs": [("method_alias", "x0.abs() + torch.abs(x0)", [f(4, 4)])],
}


@family("torch.abs", "torch.acos", "torch.acosh", "torch.asin", "torch.asinh", "torch.atan", "torch.atanh",
        "torch.ceil", "torch.cos", "torch.cosh", "torch.erf", "torch.exp", "torch.expm1", "torch.floor",
        "torch.lgamma", "torch.log", "torch.log10", "torch.log1p", "torch.neg", "torch.positive",
        "torch.reciprocal", "torch.round", "torch.rsqrt", "torch.sign", "torch.sin", "torch.sinh",
        "torch.sqrt", "torch.square", "torch.tan", "torch.tanh", "torch.trunc", "torch.relu",
        "torch.sigmoid")
def unary_math():
    for name, (lo, hi, ints) in _UNARY.items():
        kwargs = {"tol": _TOL[name]} if name in _TOL else {}
        yield from unary(f"torch.{name}", f"torch.{name}({{x}})", lo, hi, with_ints=ints,
                         extra=_EXTRA.get(name, ()), **kwargs)


def _binary(op: str, call: str, lo=-1.0, hi=1.0, ints=False, scalar="0.5", lo2=None, extra=()):
    return binary(op, call, lo, hi, with_ints=ints, scalar=scalar, lo2=lo2, extra=extra)


family("torch.maximum")(lambda: _binary("torch.maximum", "torch.maximum({a}, {b})", ints=True, scalar=None))


family("torch.minimum")(lambda: _binary("torch.minimum", "torch.minimum({a}, {b})", ints=True, scalar=None))


family("torch.atan2")(lambda: _binary("torch.atan2", "torch.atan2({a}, {b})", scalar=None, extra=[
    ("quadrants_r1", "torch.atan2(x0, x1)", [f(16, low=-2, high=2), f(16, low=-2, high=2)])]))


family("torch.logaddexp")(lambda: _binary("torch.logaddexp", "torch.logaddexp({a}, {b})", -3.0, 3.0, scalar=None,
                                          extra=[
    ("far_apart", "torch.logaddexp(x0, x1 - 20.0)", [f(3, 13, low=-3, high=3), f(3, 13, low=-3, high=3)])]))


family("torch.add")(lambda: _binary("torch.add", "torch.add({a}, {b})", ints=True, extra=[
    ("alpha", "torch.add(x0, x1, alpha=2.0)", [f(3, 4), f(3, 4)]),
    ("bool", "torch.add(x0, x1)", [b(3, 4), b(3, 4)])]))


family("torch.sub")(lambda: _binary("torch.sub", "torch.sub({a}, {b})", ints=True, extra=[
    ("alpha", "torch.sub(x0, x1, alpha=0.5)", [f(3, 4), f(4)]),
    ("rsub_scalar", "torch.sub(1.0, x0)", [f(2, 5)])]))


family("torch.mul")(lambda: _binary("torch.mul", "torch.mul({a}, {b})", ints=True, extra=[
    ("bool", "torch.mul(x0, x1)", [b(3, 4), b(3, 4)]),
    ("int_by_float", "torch.mul(x0, x1)", [i(3, 4), f(3, 4)]),
    # a (c) vector as (c,1,1) against an unbatched (c,h,w): one BinaryOp on the vector in ncnn
    ("chan_vector_unbatched", "torch.mul(x0, x1.reshape(4, 1, 1))", [f(4, 5, 7), f(4)]),
    ("chan_vector_square", "torch.mul(x1.reshape(4, 1, 1), x0)", [f(4, 5, 4), f(4)])]))


family("torch.div")(lambda: _binary("torch.div", "torch.div({a}, {b})", 0.5, 2.0, ints=True, extra=[
    ("floor", "torch.div(x0, x1, rounding_mode='floor')", [f(3, 4, low=-4, high=4), f(3, 4, low=0.5, high=2)]),
    ("trunc", "torch.div(x0, x1, rounding_mode='trunc')", [f(3, 4, low=-4, high=4), f(4, low=0.5, high=2)]),
    ("int_true_div", "torch.div(x0, 3)", [i(2, 6)]),
    # exact multiples and mixed signs: a truncated float quotient (2996 / 7 -> 427.99997) is off by one
    ("int_trunc", "torch.div(x0, x1, rounding_mode='trunc')",
     [i(4, 16, low=-2000, high=2000, dtype="i32"), i(4, 16, low=1, high=9, dtype="i32")]),
    ("int_trunc_neg_divisor", "torch.div(x0 * 7, x1, rounding_mode='trunc')",
     [i(3, 8, low=-280, high=280, dtype="i32"), i(8, low=-9, high=-1, dtype="i32")])]))


family("torch.floor_divide")(lambda: _binary("torch.floor_divide", "torch.floor_divide({a}, {b})", -4.0, 4.0,
                                             ints=True, scalar="1.5", lo2=0.5))


family("torch.remainder")(lambda: _binary("torch.remainder", "torch.remainder({a}, {b})", -4.0, 4.0, ints=True,
                                          scalar="1.5", lo2=0.5, extra=[
    ("neg_divisor", "torch.remainder(x0, -1.5)", [f(3, 5, low=-4, high=4)])]))


family("torch.pow")(lambda: _binary("torch.pow", "torch.pow({a}, {b})", 0.1, 2.0, scalar="2", extra=[
    ("scalar_base", "torch.pow(2.0, x0)", [f(3, 4)]),
    ("scalar_half", "torch.pow(x0, 0.5)", [f(2, 13, low=0.0, high=3.0)]),
    ("int", "torch.pow(x0, 3)", [i(3, 4, low=-4, high=4)]),
    ("neg_base_cube", "torch.pow(x0, 3)", [f(1, 3, 4, 5, low=-2, high=2)]),
    ("neg_base_inverse_square", "x0 ** -2", [f(1, 3, 8, low=-2, high=-0.5)])]))


@family("torch.addcmul")
def _addcmul():
    return table("torch.addcmul", [
        ("same", "torch.addcmul(x0, x1, x2)", [f(3, 8), f(3, 8), f(3, 8)]),
        ("value", "torch.addcmul(x0, x1, x2, value=0.5)", [f(1, 3, 4, 4), f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("bcast", "torch.addcmul(x0, x1, x2, value=-2)", [f(13), f(2, 13), f(2, 1)]),
        ("r1", "torch.addcmul(x0, x1, x2)", [f(16), f(16), f(16)]),
        ("noncontig", "torch.addcmul(x0.t(), x1, x2)", [f(5, 4), f(4, 5), f(4, 5)]),
    ])


@family("torch.div", "torch.sub", "torch.add", "torch.mul", "torch.remainder", "torch.round")
def _ncnn_batch1():
    """Batch-1 expression chains, broadcasts and constant operands: the ncnn lowering turns
    them into BinaryOp/UnaryOp layers on batch-dropped blobs; moved from the hand-written ncnn
    export tests."""
    yield case("torch.div", "scalar_chain_b1", "torch.div(x0 * 2 + 1, 4) - 0.5", [f(1, 8, 12, 12)])
    yield case("torch.sub", "rsub_rdiv_b1", "torch.sub(1, x0) + 2 / (x0 + 1)", [f(1, 8, 12, 12, low=0.0, high=1.0)])
    yield case("torch.add", "bcast_c_b1", "torch.add(x0, x1)", [f(1, 8, 6, 6), f(1, 8, 1, 1)])
    yield case("torch.mul", "bcast_rank_b1", "torch.mul(x0, x1)", [f(1, 3, 4, 5), f(1, 5)])
    yield case("torch.mul", "const_operands_b1", "torch.mul(x0, self.w) + self.b", [f(1, 8, 12, 12)],
               params={"w": (8, 1, 1), "b": (12,)})
    yield case("torch.remainder", "mixed_signs_b1", "torch.remainder(x0 * 4 - 2, x1 - 0.5)",
               [f(1, 3, 4, low=0.0, high=1.0), f(1, 3, 4, low=0.0, high=1.0)])
    yield case("torch.round", "decimals1_b1", "torch.round(x0 * 10, decimals=1)", [f(1, 3, 4, low=0.0, high=1.0)])
