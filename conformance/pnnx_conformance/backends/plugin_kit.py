"""Pieces every plug-in of a third-party runtime running `pnnx.onnx` needs (vendors/*): the
runtime's import with a one-line install hint, the complex-number convention of pnnx.onnx
read from the file (complex_io), and a runtime's exception turned into one whose first line
is the runtime's own line naming the cause (the harness records the stage it happened in)."""
from __future__ import annotations

import importlib
import re

import numpy as np

from .complex_io import as_complex, as_pairs, onnx_positions


def require(module: str, pip_spec: str):
    """The runtime's module, or ImportError in one line saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"runtime {module} not installed: pip install {pip_spec}") from None


def complex_positions(onnx_path) -> tuple[set[int], set[int]]:
    """The graph inputs and outputs pnnx.onnx carries as complex tensors, from its metadata."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    return onnx_positions({p.key: p.value for p in model.metadata_props})


def real_inputs(inputs, complex_inputs: set[int]) -> list[np.ndarray]:
    """The case's inputs as the runtime takes them: complex ones as (real, imaginary) pairs,
    every array C-contiguous with its shape (0-d stays 0-d)."""
    return [np.array(as_pairs(x) if i in complex_inputs else x, order="C") for i, x in enumerate(inputs)]


def case_outputs(outputs, complex_outputs: set[int]) -> list[np.ndarray]:
    return [as_complex(o) if i in complex_outputs else o for i, o in enumerate(outputs)]


def cause_line(text: str, noise: tuple[str, ...] = ()) -> str:
    """The line of a runtime's (often multi-line, C++) message that names the cause: the
    first non-empty line that matches none of the runtime's `noise` patterns (its source
    locations and wrappers), else the first line."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    for line in lines:
        if not any(re.search(p, line) for p in noise):
            return line[:300]
    return lines[0][:300] if lines else ""


def runtime_error(exc: BaseException, noise: tuple[str, ...] = ()) -> RuntimeError:
    """`exc` as a RuntimeError whose first line is its cause, after the runtime's own exception
    type where that says more than RuntimeError ("KeyError: 'num_heads'"); the runtime's whole
    message follows on the next lines (the record's detail keeps it)."""
    cause = cause_line(str(exc), noise) or type(exc).__name__
    if type(exc) is not RuntimeError:
        cause = f"{type(exc).__name__}: {cause}"
    return RuntimeError(f"{cause}\n{type(exc).__name__}: {exc}")
