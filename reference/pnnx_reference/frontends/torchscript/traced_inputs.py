"""The example inputs torch.jit.trace records in a `.pt` (`traced_inputs.pkl`): their shapes and
dtypes, read from the pickle alone.

torch.jit.load(_restore_shapes=True) would re-run the module on those inputs, but the archive
keeps their metadata with empty storages: the re-run reads memory that is not there (a traced
torch.chunk aborts the process with "munmap_chunk(): invalid pointer"). The pickle is read here
by an unpickler that knows only the few names such a file holds and builds no tensor."""
from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict
from pathlib import Path

_LIMIT = 1 << 20  # bytes: the metadata of a few example inputs

# legacy typed storages and dtypes, as the pickle names them -> pnnx dtype suffix
_STORAGES = {"FloatStorage": "f32", "DoubleStorage": "f64", "HalfStorage": "f16", "BFloat16Storage": "bf16",
             "LongStorage": "i64", "IntStorage": "i32", "ShortStorage": "i16", "CharStorage": "i8",
             "ByteStorage": "u8", "BoolStorage": "bool", "ComplexFloatStorage": "c64",
             "ComplexDoubleStorage": "c128"}
_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64",
           "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "bool",
           "complex64": "c64", "complex128": "c128"}


class _Tensor:
    def __init__(self, dtype: str | None, shape: tuple) -> None:
        self.dtype, self.shape = dtype, [int(d) for d in shape]


def _rebuild_tensor(storage, offset, size, stride, *rest):
    return _Tensor(storage, size)


def _type_tag(value, _tag):
    return value


class _Reader(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in (("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor")):
            return _rebuild_tensor
        if (module, name) == ("torch.jit._pickle", "restore_type_tag"):
            return _type_tag
        if (module, name) == ("torch.jit._pickle", "build_tensorlist"):
            return list  # a list argument's tensors
        if (module, name) == ("collections", "OrderedDict"):
            return OrderedDict
        if module == "torch" and (name in _STORAGES or name in _DTYPES):
            return _STORAGES.get(name) or _DTYPES[name]
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a traced_inputs record")

    def persistent_load(self, pid):
        # ('storage', storage type or dtype, key, location, numel): only the element type matters
        return pid[1] if isinstance(pid, tuple) and len(pid) > 1 and isinstance(pid[1], str) else None


def stored_inputs(path: Path) -> list[tuple[list[int], str]] | None:
    """(shape, dtype suffix) of each example input of `forward`, or None when the file records
    none (an older torch, a scripted module) or records something else than tensors."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [i for i in archive.infolist() if i.filename.endswith("/traced_inputs.pkl")]
            if len(names) != 1 or names[0].file_size > _LIMIT:
                return None
            data = archive.read(names[0])
        record = _Reader(io.BytesIO(data)).load()
    except (zipfile.BadZipFile, OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError,
            AttributeError, IndexError):
        return None
    inputs = record.get("forward") if isinstance(record, dict) else None
    if isinstance(inputs, (list, tuple)):  # a tuple or list argument counts as its tensors
        inputs = [x for item in inputs for x in (item if isinstance(item, (list, tuple)) else (item,))]
    if not isinstance(inputs, list) or not all(isinstance(x, _Tensor) and x.dtype for x in inputs):
        return None
    return [(x.shape, x.dtype) for x in inputs]
