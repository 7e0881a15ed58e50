"""What a `.pt` zip archive holds, read before torch.jit.load sees it: a `torch.save` file
(a state dict or a pickled module) is not TorchScript, and a tensor record shorter than its
tensor would load as uninitialised memory (torch.jit.load does not compare the sizes).

The pickles are scanned op by op (pickletools), never unpickled: nothing they name is imported."""
from __future__ import annotations

import pickletools
import zipfile
from pathlib import Path

import numpy as np

from ...errors import ConversionError
from ...ir import DTYPES
from .traced_inputs import _DTYPES, _STORAGES

_PICKLE_LIMIT = 256 << 20  # bytes of a data.pkl / constants.pkl scanned for tensor records
_STRINGS = {"BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINUNICODE8", "SHORT_BINSTRING", "BINSTRING"}
_INTS = {"BININT", "BININT1", "BININT2", "LONG1", "INT", "LONG"}
_PUTS = {"BINPUT", "LONG_BINPUT", "PUT"}
_GETS = {"BINGET", "LONG_BINGET", "GET"}


def check(path: Path) -> None:
    """Raises a ConversionError naming the file when it is a torch.save checkpoint or a tensor
    record is cut short; anything else (not a zip at all) is left to torch.jit.load."""
    try:
        with zipfile.ZipFile(path) as archive:
            entries = {info.filename: info for info in archive.infolist()}
            _refuse_checkpoint(path, entries)
            for name in entries:
                if name.endswith(("/data.pkl", "/constants.pkl")) and entries[name].file_size <= _PICKLE_LIMIT:
                    _check_records(path, archive, entries, name)
    except (zipfile.BadZipFile, OSError):
        return


def _refuse_checkpoint(path: Path, entries: dict) -> None:
    has_code = any("/code/" in name for name in entries)
    if not has_code and any(name.endswith("/data.pkl") for name in entries) \
            and not any(name.endswith("/constants.pkl") for name in entries):
        raise ConversionError(f"{path}: a torch.save file (a state dict or a pickled module), not TorchScript: "
                              "load it into its model class and give that model (MODEL = a .py file or "
                              "package.module:factory), or save the model with torch.jit.trace(model, x).save(...)")


def _check_records(path: Path, archive: zipfile.ZipFile, entries: dict, pickle_name: str) -> None:
    folder = pickle_name[: -len(".pkl")]
    for key, suffix, numel in storages(archive.read(pickle_name)):
        needed = numel * np.dtype(DTYPES[suffix].numpy).itemsize
        record = entries.get(f"{folder}/{key}")
        if record is None:
            raise ConversionError(f"{path}: the tensor record {folder}/{key} is missing: the file is damaged")
        if record.file_size < needed:
            raise ConversionError(f"{path}: the tensor record {folder}/{key} holds {record.file_size} bytes where "
                                  f"its tensor needs {needed}: the file is damaged (truncated)")


def storages(data: bytes) -> list[tuple[str, str, int]]:
    """(record key, dtype suffix, element count) of every persistent storage id
    ('storage', type, key, location, numel) in a pickle, following its memo."""
    values, memo = [], {}
    try:
        for op, arg, _ in pickletools.genops(data):
            name = op.name
            if name in _STRINGS or name in _INTS:
                values.append(arg)
            elif name == "GLOBAL":
                values.append(str(arg).replace(" ", "."))
            elif name == "STACK_GLOBAL" and len(values) >= 2:
                values.append(f"{values[-2]}.{values[-1]}")
            elif name in _PUTS and values:
                memo[arg] = values[-1]
            elif name == "MEMOIZE" and values:
                memo[len(memo)] = values[-1]
            elif name in _GETS:
                values.append(memo.get(arg))
    except (ValueError, EOFError):
        pass  # a pickle torch.jit.load will refuse on its own
    found = []
    for i, value in enumerate(values[:-4]):
        kind, key, _, numel = values[i + 1: i + 5]
        if value == "storage" and isinstance(kind, str) and isinstance(key, str) and isinstance(numel, int):
            suffix = _suffix(kind)
            if suffix is not None:
                found.append((key, suffix, numel))
    return found


def _suffix(kind: str) -> str | None:
    module, _, name = kind.rpartition(".")
    if module != "torch":
        return None
    return _STORAGES.get(name) or _DTYPES.get(name)
