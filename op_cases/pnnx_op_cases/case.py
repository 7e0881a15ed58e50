"""One conformance case: a tiny PyTorch model (as Python source) plus deterministic inputs.

A case's `source` is a complete Python module that defines `class Model(nn.Module)`; the
model is built by executing exactly that text, so printing a case shows what runs.

Determinism:
  * weights: `torch.manual_seed(case.weight_seed)` right before `Model()` is built;
  * inputs: `torch.manual_seed(0)` once, then one `torch.rand` / `torch.randint` per input
    in order (the convention of upstream pnnx's generated `test_inference()`), scaled into
    the input's [low, high) range.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from typing import Any

# Tags with a meaning the harness acts on. A tag that makes a check skip must come with a
# reason in `Case.reasons[tag]`.
TIER_SMOKE = "smoke"            # in the smoke tier (every case is in the full tier)
TAG_RANDOM = "random"           # output is random: parity is checked on statistics or skipped
TAG_TRAINING_ONLY = "training-only"  # behaves as identity (or differently) in eval mode
TAG_NO_TRACE = "no-trace"       # torch.jit.trace cannot capture it (reason required)
TAG_OURS = "ours"               # row added by this project, not listed upstream
TAG_ONNX = "onnx"               # an ONNX model (onnx.helper graph, onnxruntime oracle), not a PyTorch one

# Tags that change how a case is checked: each needs `Case.reasons[tag]`.
REASON_TAGS = frozenset({TAG_RANDOM, TAG_TRAINING_ONLY, TAG_NO_TRACE})

KNOWN_TAGS = {TIER_SMOKE, TAG_RANDOM, TAG_TRAINING_ONLY, TAG_NO_TRACE, TAG_OURS, TAG_ONNX,
              "multi-input", "multi-output", "integer", "bool", "noncontiguous",
              "dynamic", "unbatched", "batched", "complex", "inplace"}


@dataclass(frozen=True)
class InputSpec:
    """One model input. Floats are `torch.rand(shape) * (high - low) + low`; integer and
    bool dtypes use `torch.randint(low, high, shape)` (bool: randint(0, 2) then .bool())."""

    shape: tuple[int, ...]
    dtype: str = "f32"          # pnnx dtype suffix: f32, f64, f16, i32, i64, u8, bool, ...
    low: float = 0.0
    high: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))


@dataclass(frozen=True)
class ToleranceHint:
    """Looser bound than the backend default, only where the math needs one."""

    atol: float
    rtol: float
    reason: str


@dataclass(frozen=True)
class Case:
    id: str                         # stable and readable: "nn.Conv2d/k3_s2_p1_g2_nobias"
    op: str                         # the table row: "nn.Conv2d", "F.relu", "Tensor.view", "torch.cat"
    source: str                     # Python module text defining `class Model(nn.Module)`
    inputs: tuple[InputSpec, ...]
    tags: frozenset[str] = frozenset()
    reasons: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    tolerance: ToleranceHint | None = None
    # a second shape of every input (`inputshape2`): converted at both, checked at both
    inputs2: tuple[InputSpec, ...] = ()

    @property
    def table(self) -> str:
        return self.op.split(".", 1)[0] if not self.op.startswith("torch.") else "torch"

    @property
    def variant(self) -> str:
        return self.id.split("/", 1)[1] if "/" in self.id else ""

    @property
    def safe_name(self) -> str:
        """A file-name-safe form of the id: "nn.Conv2d/k3_s2" -> "nn.Conv2d__k3_s2"."""
        return re.sub(r"[^A-Za-z0-9_.-]", "_", self.id.replace("/", "__"))

    @property
    def weight_seed(self) -> int:
        return zlib.crc32(self.id.encode()) & 0x7FFFFFFF

    @property
    def tier(self) -> str:
        return "smoke" if TIER_SMOKE in self.tags else "full"

    # --- building ---------------------------------------------------------------------
    def model_class(self) -> type:
        namespace: dict[str, Any] = {"__name__": f"pnnx_case_{self.weight_seed}"}
        exec(compile(self.source, f"<case {self.id}>", "exec"), namespace)
        return namespace["Model"]

    def make_model(self):
        """A fresh model in eval mode with seeded weights."""
        import torch

        cls = self.model_class()
        torch.manual_seed(self.weight_seed)
        model = cls()
        model.eval()
        return model

    def make_inputs(self, seed: int = 0) -> list:
        return _make_tensors(self.inputs, seed)

    def make_inputs2(self, seed: int = 0) -> list | None:
        """The inputs at the second shape, drawn as `make_inputs` draws them; None without one."""
        return _make_tensors(self.inputs2, seed) if self.inputs2 else None

    def run_eager(self, seed: int = 0):
        """The oracle: outputs of the torch eager model, always as a tuple of tensors."""
        import torch

        model = self.make_model()
        with torch.no_grad():
            out = model(*self.make_inputs(seed))
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _make_tensors(specs, seed: int) -> list:
    import torch

    from .dtypes import torch_dtype

    torch.manual_seed(seed)
    tensors = []
    for spec in specs:
        dt = torch_dtype(spec.dtype)
        if spec.dtype == "bool":
            t = torch.randint(0, 2, spec.shape).bool()
        elif dt.is_floating_point or dt.is_complex:
            t = (torch.rand(spec.shape, dtype=torch.float) * (spec.high - spec.low) + spec.low).to(dt)
        else:
            t = torch.randint(int(spec.low), int(spec.high), spec.shape, dtype=dt)
        tensors.append(t)
    return tensors
