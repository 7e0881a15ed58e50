"""The param ids each layer of the pinned ncnn reads, and of which kind (ncnn_layer_params.tsv,
facts from ncnn's layer sources): what `pnnx-validate` checks an ncnn.param's ids against.

ncnn's loader never refuses an id: one the layer does not read is dropped silently (a converter
that writes it meant something ncnn does not do), and a value of the wrong kind is dropped for
the default (`0=2.0` where an int is read) or misread. Kinds: an int id takes an integer; a
float id an integer or a float (ncnn converts); an int-array id integers only; a float-array
id integers or floats (an all-integer array is converted); a float-only-array id floats only (the
binding misreads an integer element of Yolov3DetectionOutput's mask); a string id a string. An
array mixing integers and floats fits no id: ncnn types it by its last element and reads the
elements of the other kind as raw bits (`2,2.0,3` as 1073741824 and 3)."""
from __future__ import annotations

import functools
from pathlib import Path

TABLE = Path(__file__).with_name("ncnn_layer_params.tsv")
KINDS = ("int", "float", "int-array", "float-array", "float-only-array", "string")
LOADER_IDS = {30: "int-array", 31: "int"}  # read by Net::load_param for every layer


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict[int, str]]:
    """layer type -> {param id: kind} for the covered layers."""
    layers: dict[str, dict[int, str]] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, ids = line.split("\t")
        pairs = [] if ids == "-" else [item.split("=") for item in ids.split()]
        layers[name] = {int(pid): kind for pid, kind in pairs}
    return layers


def read_ids(layer_type: str) -> dict[int, str] | None:
    """{id: kind} the layer reads (the loader's own ids included); None for a layer the table
    does not cover."""
    ids = table().get(layer_type)
    return None if ids is None else {**ids, **LOADER_IDS}


def kind_of(value) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        if all(isinstance(v, int) for v in value):
            return "int-array"
        return "float-array" if all(isinstance(v, float) for v in value) else "mixed-array"
    return "float" if isinstance(value, float) else "int"


_ACCEPTS = {"int": {"int"}, "float": {"int", "float"}, "int-array": {"int-array"},
            "float-array": {"int-array", "float-array"}, "float-only-array": {"float-array"}, "string": {"string"}}


def fits(value, kind: str) -> bool:
    """Whether ncnn reads `value` as written for an id of `kind`."""
    return kind_of(value) in _ACCEPTS[kind]
