"""Read a `.pt` file and rebuild it as a Python module, with what the file records about the
inputs it was traced with."""
from __future__ import annotations

import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn

from ...errors import ConversionError, UsageError
from ...ir import dtype_suffix_of
from .rebuilt import build_module

_CODE_LIMIT = 64 << 20  # bytes of TorchScript code read when looking for torchvision's ops


@dataclass
class TracedFile:
    """A loaded `.pt`: the rebuilt module, how many tensors its forward takes (None when an
    argument is not a tensor), and the shapes and dtype suffixes of the example inputs
    torch.jit.trace recorded in the file (None when it recorded none)."""
    module: nn.Module
    input_count: int | None
    input_shapes: list[list[int]] | None
    input_types: list[str] | None


def load(path) -> nn.Module:
    """The TorchScript module in `path`, rebuilt as an eval-mode `nn.Module`."""
    return read(path).module


def read(path) -> TracedFile:
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if _names_torchvision(path):
        _register_torchvision_ops(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch.jit.load's deprecation notice
            script = torch.jit.load(str(path), map_location="cpu", _restore_shapes=True)
    except Exception as err:  # not a TorchScript archive, or a corrupt one
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{path}: not a loadable TorchScript file: {first}") from None
    count, shapes, types = _traced_inputs(script)
    return TracedFile(rebuild(script), count, shapes, types)


def rebuild(script: torch.jit.ScriptModule) -> nn.Module:
    if not isinstance(script, torch.jit.ScriptModule):
        raise ConversionError(f"expected a TorchScript module, not {type(script).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit's deprecation notices
        return build_module(script).eval()


def _traced_inputs(script) -> tuple[int | None, list | None, list | None]:
    """Newer torch.jit.trace saves its example inputs' shapes (traced_inputs.pkl), which
    `_restore_shapes=True` puts on the forward graph's inputs."""
    try:
        arguments = list(script.forward.graph.inputs())[1:]
    except RuntimeError:  # no forward method
        return None, None, None
    types = [a.type() for a in arguments]
    if not all(isinstance(t, torch._C.TensorType) for t in types):
        return None, None, None
    shapes = [t.sizes() for t in types]
    dtypes = [t.dtype() for t in types]
    if not types or any(s is None for s in shapes) or any(d is None for d in dtypes):
        return len(types), None, None
    return len(types), [list(s) for s in shapes], [dtype_suffix_of(d) for d in dtypes]


def _names_torchvision(path: Path) -> bool:
    """Whether the archive's TorchScript code calls torchvision's operators."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if "/code/" in info.filename and info.filename.endswith(".py") and info.file_size < _CODE_LIMIT:
                    if b"ops.torchvision." in archive.read(info):
                        return True
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        return False  # torch.jit.load says what is wrong with the file
    return False


def _register_torchvision_ops(path: Path) -> None:
    try:
        import torchvision  # noqa: F401  (registers torchvision::deform_conv2d, roi_align, nms, ...)
    except ImportError:
        raise ConversionError(f"{path}: the model calls torchvision operators; install torchvision") from None
