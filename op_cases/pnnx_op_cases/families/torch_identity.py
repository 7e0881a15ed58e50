"""torch.*: the `identity` family (emit/*/families/identity.py): clone."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


@family("torch.clone")
def _clone():
    return table("torch.clone", [
        ("r4", "torch.clone(x0)", [f(1, 3, 8, 8)]),
        ("noncontig", "torch.clone(x0.t())", [f(4, 13)]),
        ("contiguous_format", "torch.clone(x0.transpose(1, 2), memory_format=torch.contiguous_format)", [f(2, 3, 4)]),
        ("int", "torch.clone(x0)", [i(3, 4)]),
        ("then_inplace", "y = torch.clone(x0)\ny.add_(1.0)\ny", [f(16)], {"tags": {"inplace"}}),
    ])
