"""The ONNX backend test suite as a pytest module, unmodified: `onnx.backend.test.BackendTest`
generates its unittest cases against the backend named by $PNNX_ONNX_BACKEND (see
`backends.BACKENDS`), restricted to the tests matching $PNNX_ONNX_BACKEND_INCLUDE (a regular
expression) when set. Run by `python -m pnnx_conformance.onnx_backend`, never collected by the
project's unit tests (its name does not start with test_)."""
from __future__ import annotations

import os
import warnings

import onnx.backend.test

from pnnx_conformance.onnx_backend.backends import backend_named

warnings.filterwarnings("ignore", category=RuntimeWarning)  # the node cases' own numpy overflows

_suite = onnx.backend.test.BackendTest(backend_named(os.environ.get("PNNX_ONNX_BACKEND", "pnnx-python")), __name__)
if os.environ.get("PNNX_ONNX_BACKEND_INCLUDE"):
    _suite.include(os.environ["PNNX_ONNX_BACKEND_INCLUDE"])
globals().update(_suite.test_cases)
