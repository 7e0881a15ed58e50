"""Modules that wrap a plain function, so that a test can capture `lambda x: ...` directly."""
from __future__ import annotations

import torch.nn as nn


class Fn(nn.Module):
    """forward(*xs) = fn(*xs)."""

    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


class FnOf(nn.Module):
    """forward(*xs) = fn(self, *xs), with named constant tensors registered as buffers."""

    def __init__(self, fn, **constants) -> None:
        super().__init__()
        self.fn = fn
        for name, value in constants.items():
            self.register_buffer(name, value)

    def forward(self, *xs):
        return self.fn(self, *xs)
