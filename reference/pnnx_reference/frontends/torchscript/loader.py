"""Read a `.pt` file and rebuild it as a Python module, with what the file records about the
inputs it was traced with."""
from __future__ import annotations

import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn

from ... import optional
from ...errors import ConversionError, UsageError
from . import archive
from .rebuilt import build_module
from .traced_inputs import stored_inputs

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
    if names_torchvision(path):
        register_torchvision_ops(path)
    archive.check(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch.jit.load's deprecation notice
            # never _restore_shapes=True: it re-runs the module on inputs stored without data
            script = torch.jit.load(str(path), map_location="cpu")
    except Exception as err:  # not a TorchScript archive, or a corrupt one
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{path}: not a loadable TorchScript file: {first}") from None
    count, shapes, types = _traced_inputs(script, path)
    module = rebuild(script)
    groups = _input_groups(script)
    if groups is not None and any(kind != "tensor" for kind, _ in groups):
        object.__setattr__(module, "input_groups", groups)  # forward takes them flattened, as upstream's inputs
    return TracedFile(module, count, shapes, types)


def rebuild(script: torch.jit.ScriptModule) -> nn.Module:
    if not isinstance(script, torch.jit.ScriptModule):
        raise ConversionError(f"expected a TorchScript module, not {type(script).__name__}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.jit's deprecation notices
        return build_module(script).eval()


def _traced_inputs(script, path: Path) -> tuple[int | None, list | None, list | None]:
    """How many tensors forward takes, and the shapes and dtypes of the example inputs newer
    torch.jit.trace saves (traced_inputs.pkl)."""
    groups = _input_groups(script)
    if not groups:
        return None, None, None
    count = sum(size for _, size in groups)
    stored = stored_inputs(path)
    if stored is None or len(stored) != count:
        return count, None, None
    return count, [shape for shape, _ in stored], [dtype for _, dtype in stored]


def _input_groups(script) -> list[tuple[str, int]] | None:
    """Per argument of forward, ("tensor", 1), or ("tuple" / "list", n) for a tuple or list of
    n tensors (a list's n read from the prim::ListUnpack that takes it apart): upstream feeds
    them flattened, one input per tensor. None when an argument is anything else."""
    try:
        arguments = list(script.forward.graph.inputs())[1:]
    except RuntimeError:  # no forward method
        return None
    groups = [_group(a) for a in arguments]
    return groups if groups and None not in groups else None


def _group(argument) -> tuple[str, int] | None:
    kind = argument.type()
    if isinstance(kind, torch._C.TensorType):
        return "tensor", 1
    if isinstance(kind, torch._C.TupleType) and kind.elements() and all(
            isinstance(e, torch._C.TensorType) for e in kind.elements()):
        return "tuple", len(kind.elements())
    if isinstance(kind, torch._C.ListType) and isinstance(kind.getElementType(), torch._C.TensorType):
        users = {u.user.kind() for u in argument.uses()}
        sizes = {u.user.outputsSize() for u in argument.uses()}
        if users == {"prim::ListUnpack"} and len(sizes) == 1:
            return "list", sizes.pop()
    return None


def _is_code(name: str) -> bool:
    return "/code/" in name and name.endswith(".py")


def names_torchvision(path: Path, is_code=_is_code) -> bool:
    """Whether the archive's code (TorchScript's by default) calls torchvision's operators."""
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if is_code(info.filename) and info.file_size < _CODE_LIMIT:
                    if b"ops.torchvision." in archive.read(info):
                        return True
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        return False  # torch.jit.load says what is wrong with the file
    return False


def register_torchvision_ops(path: Path) -> None:
    # importing torchvision registers torchvision::deform_conv2d, roi_align, nms, ...
    optional.require("torchvision", f"{path}: loading a model that calls torchvision operators")
