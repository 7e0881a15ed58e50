"""Tensor.* methods that reshape, reorder, slice or split, and `Tensor.size`."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, case, f, i, table

MO = {"tags": {"multi-output"}}


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


@family("Tensor.contiguous")
def _contiguous():
    return table("Tensor.contiguous", [
        ("after_transpose", "x0.transpose(1, 2).contiguous()", [f(1, 3, 8, 8)]),
        ("after_permute", "x0.permute(0, 2, 3, 1).contiguous()", [f(2, 13, 4, 5)]),
        ("already", "x0.contiguous()", [f(4, 12)]),
        ("then_view", "x0.transpose(0, 1).contiguous().view(-1)", [f(3, 5)]),
        ("after_slice", "x0[:, ::2].contiguous()", [f(2, 16, 3)]),
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


@family("Tensor.expand")
def _expand():
    return table("Tensor.expand", [
        ("c_to_hw", "x0.expand(1, 3, 8, 8)", [f(1, 3, 1, 1)]),
        ("minus1", "x0.expand(-1, 4, -1)", [f(2, 1, 5)]),
        ("new_leading", "x0.expand(2, 3, 13)", [f(13)]),
        ("size_based", "x0.expand(x1.size(0), -1)", [f(1, 16), f(4, 3)]),
        ("bool", "x0.expand(3, 4)", [b(1, 4)]),
        ("then_add", "x0.expand(2, 6, 4) + 1.0", [f(2, 1, 4)]),
    ])


@family("Tensor.expand_as")
def _expand_as():
    return table("Tensor.expand_as", [
        ("c_to_hw", "x0.expand_as(x1)", [f(1, 3, 1, 1), f(2, 3, 8, 8)]),
        ("r1_to_r3", "x0.expand_as(x1)", [f(13), f(2, 4, 13)]),
        ("mid", "x0.expand_as(x1) * x1", [f(2, 1, 5), f(2, 4, 5)]),
        ("int", "x0.expand_as(x1)", [i(1, 4), f(3, 4)]),
        ("same", "x0.expand_as(x1)", [f(3, 4), f(3, 4)]),
    ])


@family("Tensor.repeat")
def _repeat():
    return table("Tensor.repeat", [
        ("r4_hw", "x0.repeat(1, 1, 2, 3)", [f(1, 3, 4, 4)]),
        ("new_leading", "x0.repeat(2, 1, 1)", [f(4, 5)]),
        ("r1", "x0.repeat(3)", [f(13)]),
        ("all_ones", "x0.repeat(1, 1)", [f(3, 4)]),
        ("tuple_arg", "x0.repeat((2, 2, 1))", [f(2, 3, 4)]),
        ("int", "x0.repeat(2, 2)", [i(3, 4)]),
    ])


@family("Tensor.select")
def _select():
    return table("Tensor.select", [
        ("d1_i0", "x0.select(1, 0)", [f(1, 3, 8, 8)]),
        ("d0_i1", "x0.select(0, 1)", [f(2, 13, 5)]),
        ("dneg1_ineg1", "x0.select(-1, -1)", [f(2, 4, 6)]),
        ("d2_i3", "x0.select(2, 3)", [f(1, 3, 5, 7)]),
        ("r1", "x0.select(0, 4)", [f(9)]),
        ("int", "x0.select(1, 2)", [i(3, 4)]),
    ])


@family("Tensor.slice")
def _slice():
    return table("Tensor.slice", [
        ("d1_1_3", "x0[:, 1:3]", [f(1, 8, 6, 6)]),
        ("d2_step2", "x0[:, :, ::2]", [f(2, 3, 9)]),
        ("neg", "x0[..., -3:]", [f(2, 4, 13)]),
        ("multi_dim", "x0[:, 1:, 2:5, :-1]", [f(1, 4, 7, 8)]),
        ("d0_end_over", "x0[2:100]", [f(6, 4)]),
        ("size_based", "x0[:, : x0.size(1) // 2]", [f(2, 16, 3)]),
        ("ellipsis_step3", "x0[..., 1::3]", [f(2, 3, 16)]),
        ("int", "x0[1:, :2]", [i(4, 5)]),
    ])


@family("Tensor.slice_copy")
def _slice_copy():
    return table("Tensor.slice_copy", [
        ("d1", "torch.slice_copy(x0, 1, 1, 3)", [f(1, 8, 6, 6)]),
        ("d2_step2", "torch.slice_copy(x0, 2, 0, 9, 2)", [f(2, 3, 9)]),
        ("neg_start", "torch.slice_copy(x0, -1, -4)", [f(2, 4, 13)]),
        ("d0", "torch.slice_copy(x0, 0, 2, 5)", [f(6, 4)]),
        ("kw", "torch.slice_copy(x0, dim=1, start=0, end=2, step=1)", [f(3, 5)]),
    ])


@family("Tensor.chunk")
def _chunk():
    return table("Tensor.chunk", [
        ("c2_d1", "x0.chunk(2, 1)", [f(1, 8, 4, 4)], MO),
        ("c3_dneg1_uneven", "x0.chunk(3, dim=-1)", [f(2, 4, 13)], MO),
        ("c4_d0", "x0.chunk(4, 0)", [f(8, 3)], MO),
        ("c2_uneven_r1", "x0.chunk(2)", [f(7)], MO),
        ("c3_d2_use_one", "x0.chunk(3, 2)[1]", [f(1, 3, 12, 2)]),
        ("c1", "x0.chunk(1, 1)", [f(2, 5)], MO),
    ])


@family("Tensor.split")
def _split():
    return table("Tensor.split", [
        ("s2_d1", "x0.split(2, 1)", [f(1, 8, 4, 4)], MO),
        ("s5_dneg1_uneven", "x0.split(5, dim=-1)", [f(2, 4, 13)], MO),
        ("sizes_d1", "x0.split([3, 5, 8], dim=1)", [f(2, 16, 3)], MO),
        ("sizes_d0", "x0.split((1, 2), 0)", [f(3, 4)], MO),
        ("s4_r1", "x0.split(4)", [f(12)], MO),
        ("use_one", "x0.split(2, 2)[0]", [f(1, 3, 4, 5)]),
    ])


@family("Tensor.unbind")
def _unbind():
    return table("Tensor.unbind", [
        ("d0", "x0.unbind(0)", [f(3, 8, 8)], MO),
        ("d1", "x0.unbind(1)", [f(2, 4, 5)], MO),
        ("dneg1", "x0.unbind(-1)", [f(2, 3)], MO),
        ("size1", "x0.unbind(0)", [f(1, 13)], MO),
        ("int", "x0.unbind(dim=1)", [i(2, 3)], MO),
    ])


@family("Tensor.flip")
def _flip():
    return table("Tensor.flip", [
        ("d1", "x0.flip(1)", [f(1, 3, 8, 8)]),
        ("dneg1", "x0.flip(-1)", [f(2, 13)]),
        ("d23", "x0.flip(2, 3)", [f(2, 4, 5, 6)]),
        ("list", "x0.flip([0, 1])", [f(3, 4)]),
        ("r1", "x0.flip(0)", [f(16)]),
        ("int", "x0.flip(1)", [i(3, 4)]),
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
