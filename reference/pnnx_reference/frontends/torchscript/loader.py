"""Read a `.pt` file and rebuild it as a Python module, with what the file records about the
inputs it was traced with."""
from __future__ import annotations

import io
import pickle
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
            # not _restore_shapes=True: torch's shape propagation on load aborts the process on
            # some graphs (torch.chunk into uneven parts); the shapes are read below instead
            script = torch.jit.load(str(path), map_location="cpu")
    except Exception as err:  # not a TorchScript archive, or a corrupt one
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{path}: not a loadable TorchScript file: {first}") from None
    count, shapes, types = _traced_inputs(script, _recorded_inputs(path))
    return TracedFile(rebuild(script), count, shapes, types)


def rebuild(script: torch.jit.ScriptModule) -> nn.Module:
    if not isinstance(script, torch.jit.ScriptModule):
        raise ConversionError(f"expected a TorchScript module, not {type(script).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit's deprecation notices
        return build_module(script).eval()


def _traced_inputs(script, recorded: list | None) -> tuple[int | None, list | None, list | None]:
    """The forward's tensor argument count, and the shapes and dtypes of the example inputs
    newer torch.jit.trace records (`recorded`, from traced_inputs.pkl)."""
    try:
        arguments = list(script.forward.graph.inputs())[1:]
    except RuntimeError:  # no forward method
        return None, None, None
    types = [a.type() for a in arguments]
    if not all(isinstance(t, torch._C.TensorType) for t in types):
        return None, None, None
    if not types or recorded is None or len(recorded) != len(types):
        return len(types), None, None
    return len(types), [list(t.shape) for t in recorded], [dtype_suffix_of(t.dtype) for t in recorded]


class _ShapesOnly(pickle.Unpickler):
    """traced_inputs.pkl read for shapes and dtypes only: tensors on the meta device (no data
    read), and no other class than a tensor's (the file may be hostile)."""

    def persistent_load(self, pid):
        _, storage_type, _, _, numel = pid
        dtype = storage_type.dtype if hasattr(storage_type, "dtype") else storage_type
        size = numel * torch.empty(0, dtype=dtype).element_size()
        return torch.storage.TypedStorage(wrap_storage=torch.UntypedStorage(size, device="meta"), dtype=dtype,
                                          _internal=True)

    def find_class(self, module, name):
        if (module, name) in _TENSOR_CLASSES \
                or (module == "torch" and name.endswith("Storage")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name}")


_TENSOR_CLASSES = {("torch._utils", "_rebuild_tensor_v2"), ("collections", "OrderedDict"),
                   ("torch.jit._pickle", "restore_type_tag")}


def _recorded_inputs(path: Path) -> list | None:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.endswith("/traced_inputs.pkl")]
            if len(names) != 1 or archive.getinfo(names[0]).file_size > _CODE_LIMIT:
                return None
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch's TypedStorage deprecation notice
                recorded = _ShapesOnly(io.BytesIO(archive.read(names[0]))).load()
    except Exception:  # an older torch's file, or an unreadable record: no recorded shapes
        return None
    inputs = recorded.get("forward") if isinstance(recorded, dict) else None
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in inputs):
        return None
    return list(inputs)


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
