"""A Python file that is not on the import path (a benchmark script, a generated `_pnnx.py`)
loaded as a module, for tests of its functions."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def import_file(path, name: str = "generated_model"):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark(script: str):
    """benchmarks/<script>.py, freshly executed (not registered in sys.modules)."""
    return import_file(BENCHMARKS / f"{script}.py", f"{script}_under_test")
