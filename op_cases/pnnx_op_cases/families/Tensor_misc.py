"""Tensor.* methods: indexing, filling, creation-like, dtype casts, math and reductions."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, binary, case, f, i, reduce, table, unary

MO = {"tags": {"multi-output"}}
_UNINIT = "new_empty returns uninitialised memory; compare shape and dtype only"


@family("Tensor.copy")
def _copy():
    return table("Tensor.copy", [
        ("same_shape", "y = x0 * 2.0\ny.copy_(x1)\ny + x0", [f(1, 3, 8, 8), f(1, 3, 8, 8)]),
        ("broadcast_src", "y = x0 * 1.0\ny.copy_(x1)", [f(2, 4, 5), f(5)]),
        ("int_to_float", "y = x0 + 0.0\ny.copy_(x1)", [f(3, 4), i(3, 4)]),
        ("into_slice", "y = x0 * 1.0\ny[:, :2].copy_(x1)\ny", [f(2, 6), f(2, 2)], {"tags": {"inplace"}}),
        ("noncontig_src", "y = x0 * 1.0\ny.copy_(x1.t())", [f(4, 13), f(13, 4)]),
    ], tags={"inplace"})


@family("Tensor.fill")
def _fill():
    return table("Tensor.fill", [
        ("scalar", "y = x0 * 1.0\ny.fill_(2.5)", [f(1, 3, 8, 8)]),
        ("tensor_value", "y = x0 * 1.0\ny.fill_(x1.sum())", [f(2, 13), f(4)]),
        ("slice", "y = x0 + 0.0\ny[:, 1:3].fill_(-1.0)\ny", [f(2, 5, 4)]),
        ("int", "y = x0 + 0\ny.fill_(7)", [i(3, 4)]),
        ("zero", "y = x0 * 1.0\ny.fill_(0)\ny + x0", [f(16)]),
    ], tags={"inplace"})


@family("Tensor.index")
def _index():
    return table("Tensor.index", [
        ("d0_idx", "x0[x1]", [f(6, 4), i(3, high=6)]),
        ("d1_idx", "x0[:, x1]", [f(2, 13, 3), i(5, high=13)]),
        ("bool_mask", "x0[x1]", [f(4, 5), b(4, 5)], {"tags": {"dynamic"}}),
        ("two_idx", "x0[x1, x2]", [f(5, 6), i(4, high=5), i(4, high=6)]),
        ("idx_r2", "x0[x1]", [f(8, 3), i(2, 3, high=8)]),
        ("last_dim", "x0[..., x1]", [f(2, 3, 16), i(4, high=16)]),
        ("int_src", "x0[x1]", [i(6, 4), i(3, high=6)]),
    ])


@family("Tensor.index_put")
def _index_put():
    return table("Tensor.index_put", [
        ("d0_tensor_values", "x0.index_put((x1,), x2)", [f(6, 4), i(3, high=6), f(3, 4)]),
        ("scalar_value_setitem", "y = x0 * 1.0\ny[x1] = 0.0\ny", [f(6, 4), i(2, high=6)], {"tags": {"inplace"}}),
        ("accumulate", "x0.index_put((x1,), x2, accumulate=True)", [f(5, 3), i(6, high=5), f(6, 3)]),
        ("two_idx", "x0.index_put((x1, x2), x3)", [f(5, 6), i(4, high=5), i(4, high=6), f(4)]),
        ("bool_mask_setitem", "y = x0 * 1.0\ny[x1] = 1.0\ny", [f(4, 5), b(4, 5)], {"tags": {"inplace"}}),
        ("inplace_method", "y = x0 * 1.0\ny.index_put_((x1,), x2)\ny", [f(8, 2), i(3, high=8), f(2)],
         {"tags": {"inplace"}}),
    ])


@family("Tensor.masked_fill")
def _masked_fill():
    return table("Tensor.masked_fill", [
        ("scalar", "x0.masked_fill(x1, -1.0)", [f(1, 3, 8, 8), b(1, 3, 8, 8)]),
        ("bcast_mask", "x0.masked_fill(x1, 0.0)", [f(2, 4, 5, 5), b(1, 1, 5, 5)]),
        ("neg_inf_attn", "x0.masked_fill(x1, float('-inf')).softmax(-1)", [f(2, 6, 6), b(6, 6)]),
        ("tensor_value", "x0.masked_fill(x1, x2.sum())", [f(3, 13), b(3, 13), f(2)]),
        ("mask_from_compare", "x0.masked_fill(x0 > 0.5, 2.0)", [f(4, 12)]),
        ("int", "x0.masked_fill(x1, 3)", [i(3, 4), b(3, 4)]),
        ("inplace", "y = x0 * 1.0\ny.masked_fill_(x1, 9.0)\ny", [f(2, 5), b(2, 5)], {"tags": {"inplace"}}),
    ])


@family("Tensor.new_empty")
def _new_empty():
    r = {"reasons": {"random": _UNINIT}}
    return table("Tensor.new_empty", [
        ("filled", "x0.new_empty((2, 3)).fill_(1.5) + x0.sum()", [f(4, 4)]),
        ("shape_of_input", "x0.new_empty(x0.shape).zero_() + x0", [f(1, 3, 8, 8)]),
        ("raw", "x0.new_empty((2, 5))", [f(3)], r),
        ("raw_dtype", "x0.new_empty((4,), dtype=torch.int64)", [f(2, 2)], r),
        ("size_based", "x0.new_empty(x0.size(0), 13).fill_(0.25)", [f(3, 2)]),
    ])


def _new_like(op: str, method: str, value_arg: str):
    return table(op, [
        ("literal", f"x0 + x0.new_{method}((2, 1, 4){value_arg})", [f(2, 3, 4)]),
        ("shape_of_input", f"x0.new_{method}(x0.shape{value_arg}) * x0", [f(1, 3, 8, 8)]),
        ("size_based", f"x0.new_{method}((x0.size(0), 13){value_arg})", [f(3, 2)]),
        ("dtype_i64", f"x0.new_{method}((2, 3){value_arg}, dtype=torch.int64)", [f(4)]),
        ("from_int", f"x0.new_{method}((5,){value_arg}) + x0", [i(5)]),
        ("r1_varargs", f"x0.new_{method}(7{value_arg})" if not value_arg else f"x0.new_{method}([7]{value_arg})", [f(2)]),
    ])


family("Tensor.new_full")(lambda: _new_like("Tensor.new_full", "full", ", 2.5"))
family("Tensor.new_ones")(lambda: _new_like("Tensor.new_ones", "ones", ""))
family("Tensor.new_zeros")(lambda: _new_like("Tensor.new_zeros", "zeros", ""))


@family("Tensor.size")
def _size():
    return table("Tensor.size", [
        ("div_by_last", "x0 / x0.size(-1)", [f(2, 3, 16)]),
        ("view_by_sizes", "x0.view(x0.size(0), x0.size(1), -1)", [f(1, 3, 8, 8)]),
        ("size_tuple", "n, c, h, w = x0.size()\nx0.reshape(n, c * h * w)", [f(2, 13, 2, 2)]),
        ("size_of_other", "x0.expand(x1.size(0), x1.size(1))", [f(1, 5), f(4, 5)]),
        ("shape_attr", "x0.view(x0.shape[0], -1).mean(1) * x0.shape[1]", [f(3, 4, 5)]),
    ])


@family("Tensor.to")
def _to():
    return table("Tensor.to", [
        ("f32_to_i32", "x0.to(torch.int32)", [f(3, 4, low=-10, high=10)]),
        ("i64_to_f32", "x0.to(torch.float32) / 3.0", [i(2, 13)]),
        ("f32_to_f64", "x0.to(dtype=torch.float64)", [f(1, 3, 8, 8)]),
        ("to_other", "x0.to(x1)", [f(4, 5), i(2, dtype="i32")]),
        ("bool_to_f32", "x0.to(torch.float32)", [b(3, 4)]),
        ("f32_to_bool", "x0.to(torch.bool)", [f(3, 4, low=-1, high=1)]),
        ("f32_to_f16", "x0.to(torch.float16)", [f(2, 8)]),
        ("f32_to_u8", "x0.to(torch.uint8)", [f(12, low=0, high=200)]),
    ])


@family("Tensor.type_as")
def _type_as():
    return table("Tensor.type_as", [
        ("i64_as_f32", "x0.type_as(x1) + x1", [i(3, 4), f(3, 4)]),
        ("f32_as_i32", "x0.type_as(x1)", [f(2, 13, low=-9, high=9), i(1, dtype="i32")]),
        ("f32_as_f64", "x0.type_as(x1)", [f(1, 3, 8, 8), f(2, dtype="f64")]),
        ("bool_as_f32", "x0.type_as(x1) * x1", [b(4, 4), f(4, 4)]),
        ("same", "x0.type_as(x1)", [f(5), f(5)]),
    ])


def _cast(op: str, method: str):
    return table(op, [
        ("from_f32", f"x0.{method}()", [f(2, 3, 4, low=-5, high=5)]),
        ("from_i64", f"x0.{method}()", [i(3, 13, low=-3, high=3)]),
        ("from_bool", f"x0.{method}()", [b(4, 4)]),
        ("from_f64", f"x0.{method}()", [f(1, 3, 8, 8, dtype="f64", low=-2, high=2)]),
        ("from_i32_noncontig", f"x0.t().{method}()", [i(4, 5, low=-2, high=3, dtype="i32")]),
    ])


family("Tensor.float")(lambda: _cast("Tensor.float", "float"))
family("Tensor.long")(lambda: _cast("Tensor.long", "long"))
family("Tensor.bool")(lambda: _cast("Tensor.bool", "bool"))


family("Tensor.mean")(lambda: reduce("Tensor.mean", "{x}.mean({args})"))
family("Tensor.sum")(lambda: reduce("Tensor.sum", "{x}.sum({args})", extra=[
    ("int", "x0.sum(1)", [i(3, 4)]), ("bool", "x0.sum()", [b(5, 6)]),
    ("dtype_f64", "x0.sum(-1, dtype=torch.float64)", [f(2, 8)])]))
family("Tensor.cumsum")(lambda: table("Tensor.cumsum", [
    ("d1", "x0.cumsum(1)", [f(1, 3, 8, 8)]), ("dneg1", "x0.cumsum(-1)", [f(2, 13)]),
    ("r1", "x0.cumsum(0)", [f(16)]), ("int", "x0.cumsum(dim=0)", [i(4, 3)]),
    ("dtype", "x0.cumsum(1, dtype=torch.float64)", [f(2, 5)]),
    ("bool", "x0.cumsum(1)", [b(2, 6)])]))


@family("Tensor.softmax")
def _softmax():
    return table("Tensor.softmax", [
        ("d1", "x0.softmax(1)", [f(1, 13, 8, 8, low=-4, high=4)]),
        ("dneg1", "x0.softmax(dim=-1)", [f(2, 4, 16, low=-4, high=4)]),
        ("d0_r1", "x0.softmax(0)", [f(20, low=-4, high=4)]),
        ("noncontig", "x0.transpose(1, 2).softmax(-1)", [f(2, 5, 8, low=-4, high=4)]),
        ("dtype", "x0.softmax(-1, dtype=torch.float64)", [f(3, 10)]),
    ])


@family("Tensor.clamp")
def _clamp():
    return table("Tensor.clamp", [
        ("min_max", "x0.clamp(-0.5, 0.5)", [f(1, 3, 8, 8)]),
        ("min_only", "x0.clamp(min=0.0)", [f(2, 13)]),
        ("max_only", "x0.clamp(max=0.25)", [f(16)]),
        ("tensor_bounds", "x0.clamp(x1, x2)", [f(3, 4), f(3, 4, low=-1, high=0), f(4, low=0, high=1)]),
        ("int", "x0.clamp(2, 7)", [i(3, 5)]),
        ("noncontig", "x0.t().clamp(min=-0.1, max=0.3)", [f(4, 6)]),
    ])


family("Tensor.sigmoid")(lambda: unary("Tensor.sigmoid", "{x}.sigmoid()", -6.0, 6.0))
family("Tensor.add")(lambda: binary("Tensor.add", "{a}.add({b})", with_ints=True, extra=[
    ("alpha", "x0.add(x1, alpha=2.0)", [f(3, 4), f(3, 4)])]))
family("Tensor.sub")(lambda: binary("Tensor.sub", "{a}.sub({b})", with_ints=True, extra=[
    ("alpha", "x0.sub(x1, alpha=0.5)", [f(3, 4), f(4)])]))
family("Tensor.mul")(lambda: binary("Tensor.mul", "{a}.mul({b})", with_ints=True, extra=[
    ("bool", "x0.mul(x1)", [b(3, 4), b(3, 4)])]))
family("Tensor.div")(lambda: binary("Tensor.div", "{a}.div({b})", 0.5, 2.0, with_ints=True, extra=[
    ("floor", "x0.div(x1, rounding_mode='floor')", [f(3, 4, low=-4, high=4), f(3, 4, low=0.5, high=2)]),
    ("trunc", "x0.div(x1, rounding_mode='trunc')", [f(3, 4, low=-4, high=4), f(4, low=0.5, high=2)])]))
family("Tensor.pow")(lambda: binary("Tensor.pow", "{a}.pow({b})", 0.1, 2.0, scalar="2", extra=[
    ("scalar_half", "x0.pow(0.5)", [f(2, 13, low=0.0, high=3.0)]),
    ("scalar_neg", "x0.pow(-1.5)", [f(4, 4, low=0.5, high=2.0)]),
    ("int", "x0.pow(2)", [i(3, 4, low=-5, high=5)])]))
family("Tensor.matmul")(lambda: table("Tensor.matmul", [
    ("r2_r2", "x0.matmul(x1)", [f(4, 13), f(13, 8)]),
    ("r3_batched", "x0.matmul(x1)", [f(2, 5, 16), f(2, 16, 3)]),
    ("r4_bcast", "x0.matmul(x1)", [f(2, 3, 4, 8), f(1, 3, 8, 5)]),
    ("r3_r2", "x0.matmul(x1)", [f(2, 6, 12), f(12, 4)]),
    ("r1_r2", "x0.matmul(x1)", [f(8), f(8, 3)]),
    ("r2_r1", "x0.matmul(x1)", [f(5, 8), f(8)]),
    ("noncontig", "x0.matmul(x1.transpose(-1, -2))", [f(2, 4, 8), f(2, 6, 8)]),
], tol=(1e-5, 1e-5, "dot-product accumulation order differs between runtimes")))


@family("Tensor.max")
def _max():
    return table("Tensor.max", [
        ("all", "x0.max()", [f(1, 3, 8, 8)]),
        ("d1_values_indices", "x0.max(1)", [f(2, 13, 5)], MO),
        ("dneg1_keepdim", "v, idx = x0.max(dim=-1, keepdim=True)\nv, idx", [f(2, 4, 6)], MO),
        ("d0_values", "x0.max(0)[0]", [f(7, 3)]),
        ("other", "x0.max(x1)", [f(3, 4), f(3, 4)]),
        ("int", "x0.max(1)[0]", [i(3, 5)]),
    ])


@family("Tensor.argmax")
def _argmax():
    return table("Tensor.argmax", [
        ("all", "x0.argmax()", [f(1, 3, 8, 8)]),
        ("d1", "x0.argmax(1)", [f(2, 13, 5)]),
        ("dneg1_keepdim", "x0.argmax(dim=-1, keepdim=True)", [f(2, 4, 6)]),
        ("r1", "x0.argmax(0)", [f(16)]),
        ("int", "x0.argmax(1)", [i(3, 5, high=1000)]),
    ])


@family("Tensor.gather")
def _gather():
    return table("Tensor.gather", [
        ("d1", "x0.gather(1, x1)", [f(2, 13, 4), i(2, 5, 4, high=13)]),
        ("d0", "x0.gather(0, x1)", [f(6, 3), i(4, 3, high=6)]),
        ("dneg1", "x0.gather(-1, x1)", [f(2, 3, 16), i(2, 3, 2, high=16)]),
        ("smaller_index", "x0.gather(1, x1)", [f(3, 8), i(2, 3, high=8)]),
        ("int_src", "x0.gather(1, x1)", [i(3, 5), i(3, 2, high=5)]),
    ])


@family("Tensor.mean")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("Tensor.mean", "d23_b1", "x0.mean(dim=(2, 3))", [f(1, 8, 12, 12)])
