"""torch.*: the `quantize` family (emit/*/families/quantize.py): dequantize, quantize_per_tensor."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


@family("torch.quantize_per_tensor")
def _quantize():
    q = "torch.quantize_per_tensor(x0, {s}, {z}, torch.{t})"
    return table("torch.quantize_per_tensor", [
        ("quint8_int_repr", q.format(s=0.05, z=10, t="quint8") + ".int_repr()", [f(1, 3, 8, 8)]),
        ("qint8_dequant", q.format(s=0.02, z=0, t="qint8") + ".dequantize()", [f(2, 13)]),
        ("qint32", q.format(s=0.001, z=0, t="qint32") + ".int_repr()", [f(16)]),
        ("saturate", q.format(s=0.01, z=128, t="quint8") + ".int_repr()", [f(3, 4, low=-5, high=5)]),
        ("zero_point_neg", q.format(s=0.1, z=-20, t="qint8") + ".dequantize()", [f(4, 4)]),
    ])


@family("torch.dequantize")
def _dequantize():
    q = "torch.quantize_per_tensor(x0, {s}, {z}, torch.{t})"
    return table("torch.dequantize", [
        ("quint8", "torch.dequantize(" + q.format(s=0.05, z=10, t="quint8") + ")", [f(1, 3, 8, 8)]),
        ("qint8", "torch.dequantize(" + q.format(s=0.02, z=0, t="qint8") + ")", [f(2, 13)]),
        ("qint32", "torch.dequantize(" + q.format(s=0.001, z=0, t="qint32") + ")", [f(16)]),
        ("method", q.format(s=0.1, z=5, t="quint8") + ".dequantize() + x0", [f(3, 4)]),
        ("saturate", "torch.dequantize(" + q.format(s=0.01, z=128, t="quint8") + ")", [f(3, 4, low=-5, high=5)]),
    ])
