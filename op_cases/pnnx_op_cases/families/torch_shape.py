"""torch.*: the `shape` family (emit/*/families/shape.py): flatten, movedim, permute, reshape,
squeeze, t, transpose, unsqueeze."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, f, i, table


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
