"""The generated `_pnnx.py`: import it and run its `Model()`."""
from __future__ import annotations

import importlib.util
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from .torch_eager import TorchModuleBackend


@contextmanager
def cwd(path: Path):
    # upstream's generated code opens its pnnx.bin by a relative name
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def load_generated_model(py_path: Path):
    """Import a generated `_pnnx.py` under a unique module name and build its Model()."""
    py_path = Path(py_path)
    name = f"pnnx_generated_{abs(hash(str(py_path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, py_path)
    module = importlib.util.module_from_spec(spec)
    with cwd(py_path.parent):
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            model = module.Model()
        finally:
            sys.modules.pop(name, None)
    model.eval()
    return model


class PnnxPythonBackend(TorchModuleBackend):
    name = "pnnx-python"
    consumes = ("pnnx.py", "pnnx.bin")
    precisions = {"fp32": None}
    runtime = "torch"

    def prepare(self, artefacts, precision):
        self.model = load_generated_model(artefacts.paths["pnnx.py"])
