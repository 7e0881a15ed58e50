"""Tracing orders a submodule's forward inputs by first use, not by the Python signature
(`nn.RNNCell(x, h)` may be traced as forward(h, x)). For a recovered standard module with
several tensor inputs we find the order that reproduces the TorchScript submodule's result."""
from __future__ import annotations

import itertools

import torch

_SCRIPT = "_pnnx_script"


def remember(module, script) -> None:
    object.__setattr__(module, _SCRIPT, script)


def python_order(module, args: tuple) -> tuple:
    script = getattr(module, _SCRIPT, None)
    if script is None or sum(isinstance(a, torch.Tensor) for a in args) < 2 or len(args) > 4:
        return args
    with torch._C.DisableTorchFunction(), torch.no_grad():  # unseen by the tracer
        expected = _flat(script(*args))
        for order in itertools.permutations(args):
            try:
                got = _flat(type(module).forward(module, *order))  # no hooks: not recorded
            except Exception:  # a wrong order usually fails on shapes
                continue
            if _same(got, expected):
                return tuple(order)
    return args


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    return [value]


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))


def _equal(x, y) -> bool:
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
    return not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor) and x == y
