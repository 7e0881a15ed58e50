"""torch.* functions that join, split, reshape, reorder, index or scatter."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, case, f, i, table

MO = {"tags": {"multi-output"}}


@family("torch.cat")
def _cat():
    return table("torch.cat", [
        ("d1_two", "torch.cat((x0, x1), 1)", [f(1, 3, 8, 8), f(1, 13, 8, 8)]),
        ("d0_three", "torch.cat([x0, x1, x2], dim=0)", [f(2, 4), f(1, 4), f(3, 4)]),
        ("dneg1", "torch.cat((x0, x1), dim=-1)", [f(2, 3, 5), f(2, 3, 16)]),
        ("r1", "torch.cat((x0, x1))", [f(7), f(12)]),
        ("self_twice", "torch.cat((x0, x0), 1)", [f(2, 4, 3)]),
        ("int", "torch.cat((x0, x1), 1)", [i(2, 3), i(2, 5)]),
        ("noncontig", "torch.cat((x0.transpose(1, 2), x1), 1)", [f(2, 3, 4), f(2, 2, 3)]),
    ])


@family("torch.stack")
def _stack():
    return table("torch.stack", [
        ("d0_two", "torch.stack((x0, x1))", [f(3, 8), f(3, 8)]),
        ("d1_three", "torch.stack([x0, x1, x2], dim=1)", [f(2, 13), f(2, 13), f(2, 13)]),
        ("dneg1", "torch.stack((x0, x1), dim=-1)", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("r1", "torch.stack((x0, x1), 0)", [f(16), f(16)]),
        ("int", "torch.stack((x0, x1), 2)", [i(2, 3), i(2, 3)]),
    ])


@family("torch.meshgrid")
def _meshgrid():
    return table("torch.meshgrid", [
        ("ij", "torch.stack(torch.meshgrid(x0, x1, indexing='ij'), 0)", [f(5), f(7)]),
        ("xy_three", "sum(torch.meshgrid(x0, x1, x2, indexing='xy'))", [f(3), f(4), f(2)]),
        ("one", "torch.meshgrid(x0, indexing='ij')[0] * 2", [f(6)]),
        ("ij_four", "sum(torch.meshgrid(x0, x1, x2, x3, indexing='ij'))", [f(2), f(3), f(2), f(4)]),
        # YOLO's anchors: grids of aranges over a feature map's size, added to it
        ("anchor_grid", "x0 + torch.stack(torch.meshgrid(torch.arange(x0.shape[-2]) + 0.5, "
                        "torch.arange(x0.shape[-1]) + 0.5, indexing='ij'), 0)", [f(1, 2, 6, 8)]),
    ])


@family("torch.chunk")
def _chunk():
    return table("torch.chunk", [
        ("c2_d1", "torch.chunk(x0, 2, 1)", [f(1, 8, 4, 4)], MO),
        ("c3_dneg1_uneven", "torch.chunk(x0, 3, dim=-1)", [f(2, 4, 13)], MO),
        ("c4_d0", "torch.chunk(x0, chunks=4, dim=0)", [f(8, 3)], MO),
        ("c2_r1_uneven", "torch.chunk(x0, 2)", [f(7)], MO),
        ("use_one", "torch.chunk(x0, 3, 2)[1]", [f(1, 3, 12, 2)]),
    ])


@family("torch.split")
def _split():
    return table("torch.split", [
        ("s2_d1", "torch.split(x0, 2, 1)", [f(1, 8, 4, 4)], MO),
        ("s5_dneg1_uneven", "torch.split(x0, 5, dim=-1)", [f(2, 4, 13)], MO),
        ("sizes", "torch.split(x0, [3, 5, 8], dim=1)", [f(2, 16, 3)], MO),
        ("sizes_d0", "torch.split(x0, (1, 2))", [f(3, 4)], MO),
        ("use_one", "torch.split(x0, 2, 2)[0]", [f(1, 3, 4, 5)]),
    ])


@family("torch.tensor_split")
def _tensor_split():
    return table("torch.tensor_split", [
        ("n3_d1", "torch.tensor_split(x0, 3, dim=1)", [f(1, 13, 4)], MO),
        ("indices", "torch.tensor_split(x0, [1, 4], dim=-1)", [f(2, 3, 8)], MO),
        ("n2_d0", "torch.tensor_split(x0, 2)", [f(5, 4)], MO),
        ("indices_tuple", "torch.tensor_split(x0, (2, 3, 6), 0)", [f(12)], MO),
        ("n4_more_than_size", "torch.tensor_split(x0, 4, dim=1)", [f(2, 3)], MO),
    ])


@family("torch.unbind")
def _unbind():
    return table("torch.unbind", [
        ("d0", "torch.unbind(x0)", [f(3, 8, 8)], MO),
        ("d1", "torch.unbind(x0, 1)", [f(2, 4, 5)], MO),
        ("dneg1", "torch.unbind(x0, dim=-1)", [f(2, 3)], MO),
        ("size1", "torch.unbind(x0, 0)", [f(1, 13)], MO),
        ("int", "torch.unbind(x0, 1)", [i(2, 3)], MO),
    ])


@family("torch.flatten")
def _flatten():
    return table("torch.flatten", [
        ("all", "torch.flatten(x0)", [f(1, 3, 8, 8)]),
        ("start1", "torch.flatten(x0, 1)", [f(2, 13, 3, 3)]),
        ("start1_end2", "torch.flatten(x0, start_dim=1, end_dim=2)", [f(2, 3, 4, 5)]),
        ("neg", "torch.flatten(x0, -2, -1)", [f(2, 4, 6)]),
        ("r1", "torch.flatten(x0)", [f(9)]),
        ("noncontig", "torch.flatten(x0.transpose(1, 2), 1)", [f(2, 4, 6)]),
    ])


@family("torch.reshape")
def _reshape():
    return table("torch.reshape", [
        ("r4_to_r3", "torch.reshape(x0, (1, 3, 64))", [f(1, 3, 8, 8)]),
        ("minus1", "torch.reshape(x0, (-1, 8))", [f(2, 4, 6)]),
        ("size_based", "torch.reshape(x0, (x0.size(0), -1))", [f(2, 13, 3, 3)]),
        ("noncontig", "torch.reshape(x0.transpose(1, 2), (2, -1))", [f(2, 4, 6)]),
        ("to_r1", "torch.reshape(x0, [-1])", [f(3, 4, 5)]),
        ("int", "torch.reshape(x0, (4, 3))", [i(2, 6)]),
    ])


@family("torch.permute")
def _permute():
    return table("torch.permute", [
        ("r4_nhwc", "torch.permute(x0, (0, 2, 3, 1))", [f(1, 3, 8, 8)]),
        ("r3", "torch.permute(x0, [0, 2, 1])", [f(2, 13, 5)]),
        ("r2", "torch.permute(x0, (1, 0))", [f(4, 12)]),
        ("negative_dims", "torch.permute(x0, (-1, -3, -2))", [f(3, 4, 5)]),
        ("r5", "torch.permute(x0, (0, 4, 1, 3, 2))", [f(1, 2, 3, 4, 5)]),
    ])


@family("torch.transpose")
def _transpose():
    return table("torch.transpose", [
        ("r4_12", "torch.transpose(x0, 1, 2)", [f(1, 3, 8, 8)]),
        ("r3_neg", "torch.transpose(x0, -1, -2)", [f(2, 13, 5)]),
        ("r2", "torch.transpose(x0, 0, 1)", [f(4, 12)]),
        ("r4_03", "torch.transpose(x0, 0, 3)", [f(2, 3, 4, 5)]),
        ("int", "torch.transpose(x0, 0, 1)", [i(3, 4)]),
    ])


@family("torch.movedim")
def _movedim():
    return table("torch.movedim", [
        ("c_last", "torch.movedim(x0, 1, -1)", [f(1, 3, 8, 8)]),
        ("last_first", "torch.movedim(x0, -1, 0)", [f(2, 13, 5)]),
        ("tuple", "torch.movedim(x0, (0, 1), (2, 0))", [f(2, 3, 4)]),
        ("noop", "torch.movedim(x0, 1, 1)", [f(4, 12)]),
        ("r5", "torch.movedim(x0, 2, 4)", [f(1, 2, 3, 4, 5)]),
    ])


@family("torch.t")
def _t():
    return table("torch.t", [
        ("r2", "torch.t(x0)", [f(4, 12)]),
        ("r2_c13", "torch.t(x0) * 2.0", [f(13, 3)]),
        ("r1", "torch.t(x0)", [f(7)]),
        ("int", "torch.t(x0)", [i(3, 5)]),
        ("weight_transpose", "torch.mm(x0, torch.t(self.w))", [f(2, 16)], {"params": {"w": (8, 16)}}),
    ])


@family("torch.squeeze")
def _squeeze():
    return table("torch.squeeze", [
        ("all", "torch.squeeze(x0)", [f(1, 3, 1, 8)]),
        ("d0", "torch.squeeze(x0, 0)", [f(1, 13, 5)]),
        ("dneg1", "torch.squeeze(x0, dim=-1)", [f(2, 4, 1)]),
        ("tuple", "torch.squeeze(x0, (0, 2))", [f(1, 3, 1, 4)]),
        ("noop", "torch.squeeze(x0, 1)", [f(2, 3, 4)]),
    ])


@family("torch.unsqueeze")
def _unsqueeze():
    return table("torch.unsqueeze", [
        ("d0", "torch.unsqueeze(x0, 0)", [f(3, 8, 8)]),
        ("d1", "torch.unsqueeze(x0, 1)", [f(2, 13)]),
        ("dneg1", "torch.unsqueeze(x0, -1)", [f(2, 4, 5)]),
        ("r1", "torch.unsqueeze(x0, dim=0)", [f(16)]),
        ("bool", "torch.unsqueeze(x0, 2)", [b(3, 4)]),
    ])


@family("torch.flip")
def _flip():
    return table("torch.flip", [
        ("d1", "torch.flip(x0, [1])", [f(1, 3, 8, 8)]),
        ("dneg1", "torch.flip(x0, dims=(-1,))", [f(2, 13)]),
        ("d23", "torch.flip(x0, (2, 3))", [f(2, 4, 5, 6)]),
        ("all", "torch.flip(x0, [0, 1])", [f(3, 4)]),
        ("int", "torch.flip(x0, [1])", [i(3, 4)]),
    ])


@family("torch.roll")
def _roll():
    return table("torch.roll", [
        ("s1_d1", "torch.roll(x0, 1, 1)", [f(1, 3, 8, 8)]),
        ("neg_shift", "torch.roll(x0, -2, dims=-1)", [f(2, 13)]),
        ("flat", "torch.roll(x0, 3)", [f(3, 4)]),
        ("multi", "torch.roll(x0, shifts=(1, -2), dims=(2, 3))", [f(1, 4, 5, 6)]),
        ("over_size", "torch.roll(x0, 7, 0)", [f(5, 2)]),
        ("int", "torch.roll(x0, 1, 0)", [i(4, 3)]),
    ])


@family("torch.narrow")
def _narrow():
    return table("torch.narrow", [
        ("d1", "torch.narrow(x0, 1, 1, 2)", [f(1, 8, 6, 6)]),
        ("dneg1", "torch.narrow(x0, -1, 3, 5)", [f(2, 4, 13)]),
        ("d0", "torch.narrow(x0, 0, 0, 1)", [f(6, 4)]),
        ("neg_start", "torch.narrow(x0, 1, -3, 2)", [f(2, 5)]),
        ("int", "torch.narrow(x0, 1, 1, 3)", [i(3, 5)]),
    ])


@family("torch.tile")
def _tile():
    return table("torch.tile", [
        ("r4_hw", "torch.tile(x0, (1, 1, 2, 3))", [f(1, 3, 4, 4)]),
        ("fewer_dims", "torch.tile(x0, (2,))", [f(3, 4)]),
        ("more_dims", "torch.tile(x0, (2, 1, 1))", [f(4, 5)]),
        ("r1", "torch.tile(x0, [3])", [f(13)]),
        ("int", "torch.tile(x0, (2, 2))", [i(3, 4)]),
    ])


@family("torch.repeat_interleave")
def _repeat_interleave():
    return table("torch.repeat_interleave", [
        ("r2_d1", "torch.repeat_interleave(x0, 2, dim=1)", [f(2, 13)]),
        ("flat", "torch.repeat_interleave(x0, 3)", [f(2, 3)]),
        ("d0", "torch.repeat_interleave(x0, 2, 0)", [f(1, 3, 4, 4)]),
        ("tensor_repeats", "torch.repeat_interleave(x0, self.r, dim=0)", [f(3, 4)],
         {"init": "self.register_buffer('r', torch.tensor([1, 2, 3]))"}),
        ("gqa_heads", "torch.repeat_interleave(x0, 2, dim=1)", [f(1, 2, 5, 8)]),
        ("int", "torch.repeat_interleave(x0, 2, dim=-1)", [i(3, 4)]),
    ])


@family("torch.as_strided")
def _as_strided():
    return table("torch.as_strided", [
        ("sub_block", "torch.as_strided(x0, (2, 2), (1, 2))", [f(3, 3)]),
        ("transpose_like", "torch.as_strided(x0, (4, 3), (1, 4))", [f(3, 4)]),
        ("offset", "torch.as_strided(x0, (2, 3), (3, 1), 2)", [f(12)]),
        ("overlapping_windows", "torch.as_strided(x0, (5, 4), (2, 1))", [f(16)]),
        ("r4", "torch.as_strided(x0, (1, 3, 2, 2), (48, 16, 4, 1))", [f(1, 3, 4, 4)]),
    ])


@family("torch.gather")
def _gather():
    return table("torch.gather", [
        ("d1", "torch.gather(x0, 1, x1)", [f(2, 13, 4), i(2, 5, 4, high=13)]),
        ("d0", "torch.gather(x0, 0, x1)", [f(6, 3), i(4, 3, high=6)]),
        ("dneg1", "torch.gather(x0, -1, x1)", [f(2, 3, 16), i(2, 3, 2, high=16)]),
        ("smaller_index", "torch.gather(x0, dim=1, index=x1)", [f(3, 8), i(2, 3, high=8)]),
        ("int_src", "torch.gather(x0, 1, x1)", [i(3, 5), i(3, 2, high=5)]),
    ])


@family("torch.index_select")
def _index_select():
    return table("torch.index_select", [
        ("d0", "torch.index_select(x0, 0, x1)", [f(6, 4), i(3, high=6)]),
        ("d1", "torch.index_select(x0, 1, x1)", [f(2, 13, 3), i(5, high=13)]),
        ("dneg1", "torch.index_select(x0, -1, x1)", [f(2, 3, 16), i(4, high=16)]),
        ("repeat_idx", "torch.index_select(x0, 0, x1)", [f(3, 2), i(7, high=3)]),
        ("int_src_i32_idx", "torch.index_select(x0, 1, x1)", [i(3, 5), i(2, high=5, dtype="i32")]),
        ("buffer_idx", "torch.index_select(x0, 1, self.idx)", [f(1, 8, 4)],
         {"init": "self.register_buffer('idx', torch.tensor([7, 0, 3]))"}),
    ])


@family("torch.masked_select")
def _masked_select():
    dyn = {"tags": {"dynamic"}}
    return table("torch.masked_select", [
        ("same_shape", "torch.masked_select(x0, x1)", [f(3, 8), b(3, 8)], dyn),
        ("bcast_mask", "torch.masked_select(x0, x1)", [f(2, 4, 5), b(5)], dyn),
        ("from_compare", "torch.masked_select(x0, x0 > 0)", [f(1, 3, 4, 4)], dyn),
        ("int", "torch.masked_select(x0, x1)", [i(4, 4), b(4, 4)], dyn),
        ("r1", "torch.masked_select(x0, x1)", [f(13), b(13)], dyn),
    ])


@family("torch.scatter_add")
def _scatter_add():
    return table("torch.scatter_add", [
        ("d0", "torch.scatter_add(x0, 0, x1, x2)", [f(5, 4), i(3, 4, high=5), f(3, 4)]),
        ("d1", "torch.scatter_add(x0, 1, x1, x2)", [f(2, 13), i(2, 6, high=13), f(2, 6)]),
        ("dneg1", "torch.scatter_add(x0, -1, x1, x2)", [f(2, 3, 8), i(2, 3, 4, high=8), f(2, 3, 4)]),
        ("src_larger", "torch.scatter_add(x0, 1, x1, x2)", [f(3, 5), i(3, 2, high=5), f(3, 6)]),
        ("int", "torch.scatter_add(x0, 0, x1, x2)", [i(4, 3), i(2, 3, high=4), i(2, 3)]),
    ])


@family("torch.slice_scatter")
def _slice_scatter():
    return table("torch.slice_scatter", [
        ("d0", "torch.slice_scatter(x0, x1, 0, 2, 4)", [f(6, 4), f(2, 4)]),
        ("d1_step2", "torch.slice_scatter(x0, x1, dim=1, start=0, end=8, step=2)", [f(2, 8), f(2, 4)]),
        ("dneg1", "torch.slice_scatter(x0, x1, -1, 1, 3)", [f(1, 3, 4, 5), f(1, 3, 4, 2)]),
        ("default_whole", "torch.slice_scatter(x0, x1)", [f(3, 4), f(3, 4)]),
        ("int", "torch.slice_scatter(x0, x1, 1, 1, 2)", [i(3, 5), i(3, 1)]),
    ])


@family("torch.clone")
def _clone():
    return table("torch.clone", [
        ("r4", "torch.clone(x0)", [f(1, 3, 8, 8)]),
        ("noncontig", "torch.clone(x0.t())", [f(4, 13)]),
        ("contiguous_format", "torch.clone(x0.transpose(1, 2), memory_format=torch.contiguous_format)", [f(2, 3, 4)]),
        ("int", "torch.clone(x0)", [i(3, 4)]),
        ("then_inplace", "y = torch.clone(x0)\ny.add_(1.0)\ny", [f(16)], {"tags": {"inplace"}}),
    ])


@family("torch.transpose", "torch.cat", "torch.stack", "torch.split", "torch.unbind", "torch.flatten", "torch.flip")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("torch.transpose", "r3_12_b1", "torch.transpose(x0, 1, 2)", [f(1, 5, 9)])
    yield case("torch.cat", "d2_r4_b1", "torch.cat((x0, x1), dim=2)", [f(1, 3, 4, 5), f(1, 3, 2, 5)])
    yield case("torch.cat", "dneg1_b1", "torch.cat((x0, x1), dim=-1)", [f(1, 3, 4), f(1, 3, 2)])
    yield case("torch.stack", "d1_r3_b1", "torch.stack((x0, x1), dim=1)", [f(1, 3, 4), f(1, 3, 4)])
    yield case("torch.split", "sizes_dneg1_b1", "torch.split(x0, [2, 3, 1], dim=-1)", [f(1, 4, 6)])
    yield case("torch.unbind", "d1_r4_b1", "torch.unbind(x0, dim=1)", [f(1, 3, 4, 5)])
    yield case("torch.flatten", "start2_b1", "torch.flatten(x0, 2)", [f(1, 8, 12, 12)])
    yield case("torch.flip", "d13_r4_b1", "torch.flip(x0, dims=(1, 3))", [f(1, 3, 4, 5)])
