"""Read a `.pt` file and rebuild it as a Python module."""
from __future__ import annotations

import warnings
from pathlib import Path

import torch
import torch.nn as nn

from ...errors import ConversionError, UsageError
from .rebuilt import build_module


def load(path) -> nn.Module:
    """The TorchScript module in `path`, rebuilt as an eval-mode `nn.Module`."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch.jit.load's deprecation notice
            script = torch.jit.load(str(path), map_location="cpu")
    except Exception as err:  # not a TorchScript archive, or a corrupt one
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{path}: not a loadable TorchScript file: {first}") from None
    return rebuild(script)


def rebuild(script: torch.jit.ScriptModule) -> nn.Module:
    if not isinstance(script, torch.jit.ScriptModule):
        raise ConversionError(f"expected a TorchScript module, not {type(script).__name__}")
    return build_module(script).eval()
