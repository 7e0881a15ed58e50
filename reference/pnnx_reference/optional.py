"""The packages the converter uses only for some artefacts: torch and numpy are always needed;
onnx only to write `NAME.pnnx.onnx` or to read an `.onnx` model, torchvision only for a TorchScript
file that calls its operators. Each is imported where its
artefact is written, and a missing one is one line naming the extra that installs it, never an
ImportError traceback."""
from __future__ import annotations

import importlib

from .errors import MissingPackage

DISTRIBUTION = "pnnx-reference"
EXTRAS = {"onnx": "onnx", "onnxruntime": "onnx", "ncnn": "ncnn", "torchvision": "vision"}  # package -> the extra that installs it


def require(package: str, purpose: str) -> None:
    """Import `package` (one of EXTRAS), or raise MissingPackage saying that `purpose` needs it.
    Only the package's own absence is caught: a broken install still shows its own error."""
    try:
        importlib.import_module(package)
    except ModuleNotFoundError as err:
        if err.name is None or err.name.split(".")[0] != package:
            raise
        raise MissingPackage(package, f"{purpose} needs the {package} package: "
                             f"pip install '{DISTRIBUTION}[{EXTRAS[package]}]'") from None
