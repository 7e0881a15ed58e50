"""The complex-number convention between the harness, the artefacts and a backend.

The harness hands a backend complex inputs as numpy complex arrays and wants complex outputs
back as numpy complex arrays (it compares them as (real, imaginary) pairs). The artefacts
carry a complex tensor as a real one with a trailing axis of 2, (real, imaginary):

- pnnx.onnx: the model's metadata names the complex graph inputs and outputs by 0-based
  position, comma-separated, under COMPLEX_INPUTS and COMPLEX_OUTPUTS (`onnx_positions`);
  feed `as_pairs(x)` for those inputs and return `as_complex(y)` for those outputs;
- ncnn.param: complex outputs are real blobs with a trailing axis of 2, named by pnnx.param's
  type annotations (`ncnn_backend.complex_outputs`);
- pnnx.py: torch complex tensors, nothing to convert.
"""
from __future__ import annotations

import numpy as np

COMPLEX_INPUTS = "pnnx.complex_inputs"     # the ONNX emitter's metadata keys (emit/onnx/export.py)
COMPLEX_OUTPUTS = "pnnx.complex_outputs"


def positions(value: str | None) -> set[int]:
    """The positions a metadata value names ("0,2" -> {0, 2})."""
    return {int(p) for p in value.split(",") if p} if value else set()


def onnx_positions(metadata: dict) -> tuple[set[int], set[int]]:
    """(complex input positions, complex output positions) from a pnnx.onnx model's metadata
    (onnxruntime: `session.get_modelmeta().custom_metadata_map`; onnx: `{p.key: p.value for p
    in model.metadata_props}`)."""
    return positions(metadata.get(COMPLEX_INPUTS)), positions(metadata.get(COMPLEX_OUTPUTS))


def as_pairs(x: np.ndarray) -> np.ndarray:
    """A complex array as reals with a trailing (real, imaginary) axis."""
    return np.stack([x.real, x.imag], axis=-1)


def as_complex(x: np.ndarray) -> np.ndarray:
    """Reals with a trailing (real, imaginary) axis as a complex array (complex128 from float64)."""
    if x.shape[-1:] != (2,):
        raise ValueError(f"a complex output needs a trailing (real, imaginary) axis of 2, this one has shape {x.shape}")
    kind = np.complex128 if x.dtype == np.float64 else np.complex64
    return (x[..., 0] + 1j * x[..., 1]).astype(kind)
