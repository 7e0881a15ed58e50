"""The ncnn-side model the lowering builds: layers with blob names, int-keyed params and weights."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Weight:
    """One weight blob in ncnn.bin. `tagged` weights carry the fp16/fp32 flag word; the
    others are read by ncnn as raw fp32 (biases, BatchNorm, LayerNorm, PReLU, MemoryData)."""

    data: np.ndarray
    tagged: bool


@dataclass(eq=False)
class Layer:
    type: str
    name: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    params: dict[int, object] = field(default_factory=dict)
    weights: list[Weight] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"Layer({self.type} {self.name} {self.inputs} -> {self.outputs} {self.params})"
