"""Writing a lowered ONNX model to disk one weight at a time.

The lowering keeps every large weight out of the ModelProto (builder.Payload): the proto in
memory is a skeleton. One file: the bytes `ModelProto.SerializeToString()` would give for
the full model, written piece by piece (protobuf writes fields in field-number order, so the
skeleton's fields before and after the initializers frame the weights, each framed as the
`raw_data` field of its TensorProto). Past protobuf's 2 GiB limit (or `external_over`), the
weights go to one external data file beside the model (ONNX's external data: `location`,
`offset`, `length` entries, offsets aligned to 4096 bytes so that a runtime can map them),
and the `.onnx` file is the skeleton with those references."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import TensorProto

from ...files import new_file_mode
from ...files import onnx_data_path as data_path
from ...formats.background_write import open_weights
from .builder import Payload

PROTOBUF_LIMIT = 2**31 - 1  # bytes of one serialized message: a larger .onnx cannot be read
DATA_ALIGNMENT = 4096
_GRAPH, _INITIALIZER, _RAW_DATA = 7, 5, 9  # ModelProto.graph, GraphProto.initializer, TensorProto.raw_data


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _frame(number: int, length: int) -> bytes:
    """The key and length of length-delimited field `number` (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(length)


def _around(message, number: int) -> tuple[bytes, bytes]:
    """`message` serialized without field `number`: (the fields numbered below it, above it)."""
    below, above = type(message)(), type(message)()
    below.CopyFrom(message)
    above.CopyFrom(message)
    for field in message.DESCRIPTOR.fields:
        if field.number >= number:
            below.ClearField(field.name)
        if field.number <= number:
            above.ClearField(field.name)
    return below.SerializeToString(), above.SerializeToString()


def _tensor_head(tensor: TensorProto, payload: Payload) -> bytes:
    """A payload's TensorProto up to and including its raw_data key and length."""
    head = tensor.SerializeToString()
    if any(field.number > _RAW_DATA for field, _ in tensor.ListFields()):
        raise ValueError(f"initializer {tensor.name} has fields after raw_data")  # the builder never sets them
    body = len(head) + len(_frame(_RAW_DATA, payload.nbytes)) + payload.nbytes
    return _frame(_INITIALIZER, body) + head + _frame(_RAW_DATA, payload.nbytes)


def single_file_pieces(model: onnx.ModelProto, payloads: dict[str, Payload]) -> list:
    """The one-file serialization of `model` with its payloads, as bytes and Payload pieces."""
    graph = model.graph
    initializers: list = []
    for tensor in graph.initializer:
        payload = payloads.get(tensor.name)
        if payload is None:
            data = tensor.SerializeToString()
            initializers.append(_frame(_INITIALIZER, len(data)) + data)
        else:
            initializers += [_tensor_head(tensor, payload), payload]
    graph_below, graph_above = _around(graph, _INITIALIZER)
    graph_size = len(graph_below) + len(graph_above) + sum(_size(p) for p in initializers)
    model_below, model_above = _around(model, _GRAPH)
    return [model_below + _frame(_GRAPH, graph_size) + graph_below, *initializers, graph_above + model_above]


def _size(piece) -> int:
    return piece.nbytes if isinstance(piece, Payload) else len(piece)


def size_of(pieces: list) -> int:
    return sum(_size(p) for p in pieces)


@dataclass
class Written:
    model: Path
    data: Path | None = None      # the external data file, when there is one


def write(model: onnx.ModelProto, payloads: dict[str, Payload], path, external_over: int = PROTOBUF_LIMIT) -> Written:
    """Write the model (atomically: temporary names, then renamed) as one file when it fits
    in `external_over` bytes, else with its payloads in `data_path(path)`."""
    path = Path(os.path.abspath(path))
    pieces = single_file_pieces(model, payloads)
    if size_of(pieces) <= external_over:
        with _Replacing([path]) as (tmp,):
            _write_pieces(tmp, pieces)
        return Written(path)
    skeleton, layout = _external(model, payloads, data_path(path).name)
    with _Replacing([data_path(path), path]) as (tmp_data, tmp_model):
        _write_data(tmp_data, layout)
        with open(tmp_model, "wb") as f:
            f.write(skeleton.SerializeToString())
    return Written(path, data_path(path))


@contextlib.contextmanager
def placeholder(model: onnx.ModelProto, payloads: dict[str, Payload]):
    """The path of the model saved with external data in a private temporary folder, the data
    file a sparse file of the right size holding zeros: what the path-based checker needs to
    check the whole model without anyone holding, converting or writing its weights."""
    folder = tempfile.mkdtemp(prefix="pnnxref-check-")
    try:
        skeleton, layout = _external(model, payloads, "weights.data")
        with open(os.path.join(folder, "weights.data"), "wb") as f:
            f.truncate(max((offset + payload.nbytes for offset, payload in layout), default=0))
        path = os.path.join(folder, "model.onnx")
        with open(path, "wb") as f:
            f.write(skeleton.SerializeToString())
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _external(model: onnx.ModelProto, payloads: dict[str, Payload], location: str):
    """The skeleton with each payload's initializer referring to its place in the data file,
    and that file's layout: (offset, payload) per payload, in initializer order."""
    skeleton = onnx.ModelProto()
    skeleton.CopyFrom(model)
    layout, end = [], 0
    for tensor in skeleton.graph.initializer:
        payload = payloads.get(tensor.name)
        if payload is None:
            continue
        offset = -(-end // DATA_ALIGNMENT) * DATA_ALIGNMENT
        for key, value in (("location", location), ("offset", offset), ("length", payload.nbytes)):
            entry = tensor.external_data.add()
            entry.key, entry.value = key, str(value)
        tensor.data_location = TensorProto.EXTERNAL
        layout.append((offset, payload))
        end = offset + payload.nbytes
    return skeleton, layout


def _write_pieces(path: Path, pieces: list) -> None:
    with open_weights(path, "r+b") as f:  # _Replacing's empty file
        for piece in pieces:
            for chunk in (piece.chunks() if isinstance(piece, Payload) else (piece,)):
                f.write(chunk)


def _write_data(path: Path, layout: list) -> None:
    with open_weights(path, "r+b") as f:  # _Replacing's empty file
        for offset, payload in layout:
            f.write(b"\0" * (offset - f.tell()))
            for chunk in payload.chunks():
                f.write(chunk)


class _Replacing:
    """Temporary files beside `targets`, renamed onto them (in order) when the block ends
    without an error, removed when it raises."""

    def __init__(self, targets: list[Path]) -> None:
        self.targets = targets
        self.temps: list[Path] = []

    def __enter__(self) -> list[Path]:
        try:
            for target in self.targets:
                fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=target.suffix, dir=target.parent)
                os.close(fd)
                self.temps.append(Path(tmp))
        except BaseException:
            self._remove()
            raise
        return self.temps

    def __exit__(self, kind, err, tb) -> None:
        if kind is not None:
            self._remove()
            return
        try:
            for tmp, target in zip(self.temps, self.targets):
                os.chmod(tmp, new_file_mode())  # mkstemp makes it private; give it normal rights
                os.replace(tmp, target)
        finally:
            self._remove()

    def _remove(self) -> None:
        for tmp in self.temps:
            if tmp.exists():
                tmp.unlink()
