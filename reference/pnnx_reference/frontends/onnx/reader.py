"""Read an ONNX model: a file (with its external data from the file's folder) or a ModelProto.
Every problem is one `ConversionError` line naming the file."""
from __future__ import annotations

from pathlib import Path

import onnx

from ...errors import ConversionError, UsageError

# The default-domain opsets this frontend is certified on (the onnx op cases cover each);
# older ones are read where the rules know their forms, and newer ones up to NEWEST_OPSET,
# whose changes after 23 are new element types plus attributes the rules check for
# (Attention's windows, SpaceToDepth's mode, Cast's round_mode).
CERTIFIED_OPSETS = range(11, 24)
OLDEST_OPSET = 6  # legacy broadcasting (broadcast=1, axis) is read; opsets 1-5 had other attribute forms
NEWEST_OPSET = 28
DEFAULT_DOMAINS = ("", "ai.onnx")


def read_model(model, *, what: str | None = None) -> tuple[onnx.ModelProto, str]:
    """(ModelProto with external data loaded and local functions inlined, a name for messages)."""
    if isinstance(model, onnx.ModelProto):
        proto, what = model, what or "<ModelProto>"
    else:
        path = Path(model)
        what = what or str(path)
        proto = _load_file(path)
    proto = _upgraded(proto, what)
    _check_opset(proto, what)
    if proto.functions:  # model-local functions (the dynamo exporter writes some): inline them
        try:
            from onnx.inliner import inline_local_functions

            proto = inline_local_functions(proto)
        except Exception as err:
            raise ConversionError(f"{what}: cannot inline the model's local functions: {_first(err)}") from None
    return proto, what


def _load_file(path: Path) -> onnx.ModelProto:
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as err:  # not a protobuf, or a truncated one
        raise ConversionError(f"{path}: not a readable ONNX model: {_first(err)}") from None
    if not proto.graph.node and not proto.graph.output:
        raise ConversionError(f"{path}: not a readable ONNX model: the graph is empty")
    _load_external_data(proto, path)
    return proto


def _load_external_data(proto: onnx.ModelProto, path: Path) -> None:
    """Weights stored beside the model (`location` relative to the model's folder). A missing
    or short data file is refused before anything is converted."""
    from onnx.external_data_helper import _get_all_tensors, uses_external_data

    folder = path.resolve().parent
    for tensor in _get_all_tensors(proto):
        if not uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        target = (folder / location).resolve()
        if not location or Path(location).is_absolute() or folder not in target.parents:
            raise ConversionError(f"{path}: tensor {tensor.name!r} names external data outside the "
                                  f"model's folder ({location!r})")
        if not target.is_file():
            raise ConversionError(f"{path}: external data file {location!r} of tensor {tensor.name!r} "
                                  f"is missing (expected {target})")
        size = target.stat().st_size
        offset, length = int(info.get("offset", 0) or 0), int(info.get("length", 0) or 0)
        if offset + length > size:
            raise ConversionError(f"{path}: external data file {location!r} is too short for tensor "
                                  f"{tensor.name!r} ({size} bytes, needs {offset + length})")
    try:
        onnx.load_external_data_for_model(proto, str(folder))
    except Exception as err:
        raise ConversionError(f"{path}: cannot read external data: {_first(err)}") from None


def default_opset(proto: onnx.ModelProto) -> int:
    for entry in proto.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return 0


def _upgraded(proto: onnx.ModelProto, what: str) -> onnx.ModelProto:
    """A model older than OLDEST_OPSET, upgraded by onnx's own version converter (which knows
    the older attribute forms); the model as it is when there is nothing to upgrade."""
    if not 0 < default_opset(proto) < OLDEST_OPSET:
        return proto
    from onnx import version_converter

    try:
        return version_converter.convert_version(proto, OLDEST_OPSET)
    except Exception as err:  # noqa: BLE001 - the converter raises several kinds
        raise ConversionError(f"{what}: opset {default_opset(proto)} is older than {OLDEST_OPSET} and onnx's "
                              f"version converter cannot upgrade it: {_first(err)}") from None


def _check_opset(proto: onnx.ModelProto, what: str) -> None:
    version = default_opset(proto)
    if version == 0:
        raise ConversionError(f"{what}: the model imports no default-domain (ai.onnx) opset")
    if version < OLDEST_OPSET:
        raise ConversionError(f"{what}: opset {version} is older than {OLDEST_OPSET}; "
                              f"upgrade it with onnx.version_converter first")
    if version > NEWEST_OPSET:
        raise ConversionError(f"{what}: opset {version} is newer than the newest this frontend "
                              f"knows ({NEWEST_OPSET})")


def _first(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def freeze_inputs(proto: onnx.ModelProto, values: dict, what: str) -> onnx.ModelProto:
    """A copy of `proto` with the named graph inputs turned into initializers of `values`."""
    import numpy as np

    names = {v.name for v in proto.graph.input}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConversionError(f"{what}: constant_inputs names no graph input: {', '.join(unknown)}")
    frozen = onnx.ModelProto()
    frozen.CopyFrom(proto)
    kept = [v for v in frozen.graph.input if v.name not in values]
    del frozen.graph.input[:]
    frozen.graph.input.extend(kept)
    for name, value in values.items():
        array = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        frozen.graph.initializer.append(onnx.numpy_helper.from_array(array, name))
    return frozen
