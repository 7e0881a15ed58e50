"""Tensor.*: the `shape` family (emit/*/families/shape.py): flatten, permute, reshape, reshape_as,
size, slice, squeeze, t, transpose, unflatten, unsqueeze, view, view_as."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, case, f, i, table


@family("Tensor.view")
def _view():
    return table("Tensor.view", [
        ("r4_to_r2", "x0.view(1, 3, 64)", [f(1, 3, 8, 8)]),
        ("minus1", "x0.view(-1, 12)", [f(2, 4, 6)]),
        ("size_based", "x0.view(x0.size(0), -1)", [f(2, 13, 3, 3)]),
        ("shape_based_split_heads", "x0.view(x0.shape[0], x0.shape[1], 4, -1)", [f(2, 5, 16)]),
        ("to_r1", "x0.view(-1)", [f(3, 4, 5)]),
        ("add_unit_dims", "x0.view(1, 12, 1, 4)", [f(4, 12)]),
        ("dtype_int", "x0.view(3, 8)", [i(2, 12, dtype="i32")]),
    ])


@family("Tensor.reshape")
def _reshape():
    return table("Tensor.reshape", [
        ("r4_to_r3", "x0.reshape(1, 3, 64)", [f(1, 3, 8, 8)]),
        ("minus1_first", "x0.reshape(-1, 8)", [f(2, 4, 6)]),
        ("size_based", "x0.reshape(x0.size(0), x0.size(1) * x0.size(2), -1)", [f(2, 13, 3, 3)]),
        ("noncontig", "x = x0.transpose(1, 2)\nx.reshape(2, -1)", [f(2, 4, 6)]),
        ("tuple_arg", "x0.reshape((4, 3, 2))", [f(24)]),
        ("to_r5", "x0.reshape(1, 2, 3, 2, -1)", [f(3, 16)]),
        ("bool", "x0.reshape(-1)", [b(3, 5)]),
    ])


@family("Tensor.reshape_as")
def _reshape_as():
    return table("Tensor.reshape_as", [
        ("r4_as_r2", "x0.reshape_as(x1)", [f(1, 3, 8, 8), f(3, 64)]),
        ("r1_as_r3", "x0.reshape_as(x1)", [f(24), f(2, 3, 4)]),
        ("noncontig", "x0.t().reshape_as(x1)", [f(4, 6), f(3, 8)]),
        ("int_as_float", "x0.reshape_as(x1)", [i(2, 6), f(3, 4)]),
        ("same_shape", "x0.reshape_as(x1) + x1", [f(13, 2), f(13, 2)]),
    ])


@family("Tensor.view_as")
def _view_as():
    return table("Tensor.view_as", [
        ("r4_as_r2", "x0.view_as(x1)", [f(1, 3, 8, 8), f(3, 64)]),
        ("r1_as_r3", "x0.view_as(x1)", [f(24), f(2, 3, 4)]),
        ("r3_as_r4", "x0.view_as(x1) * x1", [f(2, 4, 6), f(2, 4, 2, 3)]),
        ("int", "x0.view_as(x1)", [i(2, 8), f(4, 4)]),
        ("c13", "x0.view_as(x1)", [f(1, 13, 4), f(13, 2, 2)]),
    ])


@family("Tensor.permute")
def _permute():
    return table("Tensor.permute", [
        ("r4_nhwc", "x0.permute(0, 2, 3, 1)", [f(1, 3, 8, 8)]),
        ("r3_021", "x0.permute(0, 2, 1)", [f(2, 13, 5)]),
        ("r2_10", "x0.permute(1, 0)", [f(4, 12)]),
        ("negative_dims", "x0.permute(-1, -3, -2)", [f(3, 4, 5)]),
        ("tuple_arg_r5", "x0.permute((0, 4, 1, 3, 2))", [f(1, 2, 3, 4, 5)]),
        ("r4_3012", "x0.permute(3, 0, 1, 2)", [f(2, 3, 4, 16)]),
        ("int", "x0.permute(1, 0, 2)", [i(2, 3, 4)]),
    ])


@family("Tensor.transpose")
def _transpose():
    return table("Tensor.transpose", [
        ("r4_12", "x0.transpose(1, 2)", [f(1, 3, 8, 8)]),
        ("r3_neg", "x0.transpose(-1, -2)", [f(2, 13, 5)]),
        ("r2", "x0.transpose(0, 1)", [f(4, 12)]),
        ("r4_03", "x0.transpose(0, 3)", [f(2, 3, 4, 5)]),
        ("same_dim", "x0.transpose(1, 1)", [f(3, 4)]),
        ("r5_14", "x0.transpose(1, 4)", [f(1, 2, 3, 4, 5)]),
    ])


@family("Tensor.t")
def _t():
    return table("Tensor.t", [
        ("r2", "x0.t()", [f(4, 12)]),
        ("r2_c13", "x0.t() * 2.0", [f(13, 3)]),
        ("r1", "x0.t()", [f(7)]),
        ("int", "x0.t()", [i(3, 5)]),
        ("twice_noncontig_in", "x0.t().t()", [f(4, 6)]),
    ])


@family("Tensor.flatten")
def _flatten():
    return table("Tensor.flatten", [
        ("all", "x0.flatten()", [f(1, 3, 8, 8)]),
        ("start1", "x0.flatten(1)", [f(2, 13, 3, 3)]),
        ("start1_end2", "x0.flatten(start_dim=1, end_dim=2)", [f(2, 3, 4, 5)]),
        ("neg", "x0.flatten(-2, -1)", [f(2, 4, 6)]),
        ("r1", "x0.flatten()", [f(9)]),
        ("noncontig", "x0.transpose(1, 2).flatten(1)", [f(2, 4, 6)]),
    ])


@family("Tensor.unflatten")
def _unflatten():
    return table("Tensor.unflatten", [
        ("d1", "x0.unflatten(1, (4, 4))", [f(2, 16, 3)]),
        ("dneg1_minus1", "x0.unflatten(-1, (2, -1))", [f(1, 3, 12)]),
        ("d0", "x0.unflatten(0, (2, 3))", [f(6, 4)]),
        ("three", "x0.unflatten(1, (2, 2, 3))", [f(1, 12, 5)]),
        ("c13", "x0.unflatten(2, (13, 1))", [f(1, 2, 13)]),
    ])


@family("Tensor.squeeze")
def _squeeze():
    return table("Tensor.squeeze", [
        ("all", "x0.squeeze()", [f(1, 3, 1, 8)]),
        ("d0", "x0.squeeze(0)", [f(1, 13, 5)]),
        ("dneg1", "x0.squeeze(-1)", [f(2, 4, 1)]),
        ("tuple", "x0.squeeze((0, 2))", [f(1, 3, 1, 4)]),
        ("noop", "x0.squeeze(1)", [f(2, 3, 4)]),
        ("int", "x0.squeeze(1)", [i(3, 1, 4)]),
    ])


@family("Tensor.unsqueeze")
def _unsqueeze():
    return table("Tensor.unsqueeze", [
        ("d0", "x0.unsqueeze(0)", [f(3, 8, 8)]),
        ("d1", "x0.unsqueeze(1)", [f(2, 13)]),
        ("dneg1", "x0.unsqueeze(-1)", [f(2, 4, 5)]),
        ("r1_d0", "x0.unsqueeze(0)", [f(16)]),
        ("twice", "x0.unsqueeze(1).unsqueeze(-1)", [f(4, 12)]),
        ("bool", "x0.unsqueeze(2)", [b(3, 4)]),
    ])


@family("Tensor.view", "Tensor.unsqueeze", "Tensor.slice")
def _ncnn_forms():
    """Forms the hand-written ncnn export tests held, now op cases: a channel shuffle spelled
    with view/transpose/reshape (the ncnn lowering makes it one ShuffleChannel), an unsqueeze
    undone after an op, a strided slice of a batch-1 input."""
    yield case("Tensor.view", "channel_shuffle_pattern",
               "x0.view(1, 2, 4, 12, 12).transpose(1, 2).contiguous().reshape(1, 8, 12, 12).relu()", [f(1, 8, 12, 12)])
    yield case("Tensor.unsqueeze", "d2_then_squeeze_b1", "x0.unsqueeze(2).relu().squeeze(2) * 2", [f(1, 5, 9)])
    yield case("Tensor.slice", "strided_multi_b1", "x0[:, 1:8:3, :, ::2]", [f(1, 8, 12, 12)])


@family("Tensor.size")
def _size():
    return table("Tensor.size", [
        ("div_by_last", "x0 / x0.size(-1)", [f(2, 3, 16)]),
        ("view_by_sizes", "x0.view(x0.size(0), x0.size(1), -1)", [f(1, 3, 8, 8)]),
        ("size_tuple", "n, c, h, w = x0.size()\nx0.reshape(n, c * h * w)", [f(2, 13, 2, 2)]),
        ("size_of_other", "x0.expand(x1.size(0), x1.size(1))", [f(1, 5), f(4, 5)]),
        ("shape_attr", "x0.view(x0.shape[0], -1).mean(1) * x0.shape[1]", [f(3, 4, 5)]),
    ])
