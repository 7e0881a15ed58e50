"""Models that write into a slice of a tensor (`y[:, a:b] = x`, `.copy_`, an in-place op on a
slice): the capture records them as `Tensor.slice_copy`. Shared by the ncnn and ONNX tests."""
from __future__ import annotations

import torch
import torch.nn as nn


class Write(nn.Module):
    """Runs `body(y, *rest)` on a copy y of the first input and returns y."""

    def __init__(self, body) -> None:
        super().__init__()
        self.body = body

    def forward(self, *xs):
        y = xs[0] * 1.0
        self.body(y, *xs[1:])
        return y


def setitem_channels(y, x):
    y[:, 2:5] = x


def copy_into_slice(y, x):
    y[:, :, 1:4].copy_(x)


def mul_into_slice(y):
    y[:, 1:3].mul_(-2.0)


def fill_into_slice(y):
    y[:, 1:3].fill_(-1.0)


def setitem_two_dims(y, x):
    y[:, 1:3, 2:5] = x


def setitem_select(y, x):
    y[:, 1] = x


def setitem_negative_start(y, x):
    y[..., -3:] = x


def setitem_scalar(y):
    y[..., -2:] = 0.5


def setitem_broadcast(y, x):
    y[:, 1:3] = x


def setitem_step2(y, x):
    y[:, 1::2, 2:6] = x


def random_inputs(shapes) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.rand(*s) * 2 - 1 for s in shapes]
