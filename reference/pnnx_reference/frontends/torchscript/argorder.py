"""Check a recovered standard module against its TorchScript original on the real inputs.
Tracing orders a submodule's inputs by first use, not by the Python signature
(`nn.RNNCell(x, h)` may be traced as forward(h, x)): we look for the argument order that
reproduces the original's result. None means no order does (constructor arguments were
misread): the caller then replays the original graph instead."""
from __future__ import annotations

import itertools

import torch

_SCRIPT = "_pnnx_script"


def remember(module, script) -> None:
    object.__setattr__(module, _SCRIPT, script)


# Modules whose state argument is a tuple that tracing passes as separate inputs: its position.
_PACKED_STATE = {torch.nn.LSTM: 1, torch.nn.LSTMCell: 1}


def _pack(module, args: tuple) -> tuple:
    at = _PACKED_STATE.get(type(module))
    if at is None or len(args) <= at + 1:
        return args
    return (*args[:at], tuple(args[at:]))


# Tracing passes a tensor given for several parameters once (`mha(x, x, x)` -> forward(x)).
_ARITY = {torch.nn.MultiheadAttention: 3}


def _with_repeats(module, args: tuple):
    arity = _ARITY.get(type(module), 0)
    if len(args) >= arity:
        return []
    return [c for c in itertools.product(args, repeat=arity)
            if all(any(a is b for b in c) for a in args)]


def script_of(module):
    return getattr(module, _SCRIPT, None)


def python_args(module, args: tuple) -> tuple | None:
    """The arguments in the order (and nesting) the module's Python forward takes them."""
    script = script_of(module)
    if script is None:
        return _pack(module, args)
    with torch._C.DisableTorchFunction(), torch.no_grad():  # unseen by the tracer
        expected = flat(script(*args))
        for packed in orders(module, args):
            try:
                got = flat(type(module).forward(module, *packed))  # no hooks: unrecorded
            except Exception:  # a wrong order usually fails on shapes
                continue
            if _same(got, expected):
                return packed
    return None


def orders(module, args: tuple):
    """The argument tuples the module's forward may have been called with: each order of
    `args` (and, for modules taking one tensor several times, repeats), packed."""
    candidates = itertools.chain(itertools.permutations(args) if len(args) <= 4 else [args],
                                 _with_repeats(module, args))
    for order in candidates:
        yield _pack(module, tuple(order))


def flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [value]


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))


def equal(x, y) -> bool:
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
    return not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor) and x == y
