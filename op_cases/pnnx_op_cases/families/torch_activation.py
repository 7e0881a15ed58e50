"""torch.*: the `activation` family (emit/*/families/activation.py): clamp, log_softmax, softmax."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("torch.clamp")
def _clamp():
    return table("torch.clamp", [
        ("min_max", "torch.clamp(x0, -0.5, 0.5)", [f(1, 3, 8, 8)]),
        ("min_only", "torch.clamp(x0, min=0.0)", [f(2, 13)]),
        ("max_only", "torch.clamp(x0, max=0.25)", [f(16)]),
        ("tensor_bounds", "torch.clamp(x0, x1, x2)", [f(3, 4), f(3, 4, low=-1, high=0), f(4, low=0, high=1)]),
        ("int", "torch.clamp(x0, 2, 7)", [i(3, 5)]),
        ("noncontig", "torch.clamp(x0.t(), min=-0.1, max=0.3)", [f(4, 6)]),
    ])


def _softmax(op: str, fn: str):
    return table(op, [
        ("d1", f"{fn}(x0, 1)", [f(1, 13, 8, 8, low=-4, high=4)]),
        ("dneg1", f"{fn}(x0, dim=-1)", [f(2, 4, 16, low=-4, high=4)]),
        ("d0_r1", f"{fn}(x0, 0)", [f(20, low=-4, high=4)]),
        ("noncontig", f"{fn}(x0.transpose(1, 2), -1)", [f(2, 5, 8, low=-4, high=4)]),
        ("dtype", f"{fn}(x0, -1, dtype=torch.float64)", [f(3, 10)]),
    ])


family("torch.softmax")(lambda: _softmax("torch.softmax", "torch.softmax"))


family("torch.log_softmax")(lambda: _softmax("torch.log_softmax", "torch.log_softmax"))
