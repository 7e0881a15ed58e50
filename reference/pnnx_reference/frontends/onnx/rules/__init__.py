"""The ONNX rule table: one small rule per op type, `fn(ctx) -> output or [outputs]`, calling
the PyTorch Python API the way a person would write the op (see `../node.py` for `ctx`). A
rule lives in the module named as the emitters' family of the operator it writes (`Conv` in
conv.py, `LSTM` in rnn.py, `DFT` in fft.py); `operands.py` holds what several share.
Opset differences are handled inside each rule (`ctx.opset`). Keys are ONNX op types of the
default domain (`Conv`), `domain:Op` for other domains, and `pnnx:Name` for node patterns
that `../fusions.py` merges into one operator.

Traits: `foldable=False` for ops that must never be evaluated at conversion time even when
every input is a constant (random number generators); `produces=(...)` the PyTorch operators
the rule writes (`pnnx-cases where nn.Conv2d` finds the Conv rule by it)."""
from __future__ import annotations

from . import (activation, attention, control, conv, creation, elementwise, fft, fold, identity, indexing,  # noqa: F401
               linear, logic, loss, norm, pad, pool, quantize, reduce, resize, rnn, shape)
from .registry import RULES  # noqa: F401
