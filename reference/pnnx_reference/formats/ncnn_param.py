"""ncnn.param text: layers with numeric-id params, as upstream pnnx's `save_ncnn` writes it.

Line format `%-24s %-24s %d %d` then blob names then `id=value` params in std::map
string order of the id (`0 1 11 2 ...`). Arrays are written `-23300-id=n,v1,...`,
strings bare when they are identifiers and quoted otherwise.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Union

from ..errors import FormatError
from .textfile import CountedLineReader, is_digits, read_text_lines, split_text_lines
from .floatfmt import float_to_string, parse_float32
from .pnnx_values import INT32_MAX, INT32_MIN, clip, parse_int32

MAGIC = "7767517"
ARRAY_KEY_BASE = -23300
MAX_PARAM_ID = 31            # ncnn's ParamDict holds 32 slots
MAX_PARAM_BYTES = 256 * 1024 * 1024
MAX_LINE_CHARS = 16 * 1024 * 1024
MAX_STRING_CHARS = 255       # ncnn reads quoted strings into a 256-byte buffer

NcnnValue = Union[int, float, str, list]
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*"?)+')  # a quoted string may hold spaces


@dataclass
class NcnnLayer:
    type: str
    name: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    params: dict[int, NcnnValue] = field(default_factory=dict)
    line: int | None = None      # where it was read from, for messages


@dataclass
class NcnnModel:
    layers: list[NcnnLayer] = field(default_factory=list)

    def blob_names(self) -> list[str]:
        """Unique blob names in first-appearance order."""
        seen: dict[str, None] = {}
        for layer in self.layers:
            for name in layer.inputs + layer.outputs:
                seen.setdefault(name, None)
        return list(seen)


# --- writing -------------------------------------------------------------------------
def _encode_scalar(value) -> str:
    if isinstance(value, bool):
        raise ValueError("ncnn.param has no bool values")
    if isinstance(value, int):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"integer {value} does not fit in int32")
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # ncnn's loader reads inf and nan as strings and refuses -inf
            raise ValueError(f"float {value} cannot be written to ncnn.param (it has no infinity or NaN)")
        return float_to_string(value)
    raise ValueError(f"cannot write an ncnn param of type {type(value).__name__}")


def _encode_string(value: str) -> str:
    if _IDENTIFIER.fullmatch(value):
        return value
    if '"' in value or any(c in value for c in "\n\r") or len(value) > MAX_STRING_CHARS:
        raise ValueError(f"string {value!r} cannot be written to ncnn.param")
    return f'"{value}"'


def _encode_param(pid: int, value) -> str:
    if isinstance(value, (list, tuple)):
        kind = float if any(isinstance(v, float) for v in value) else int
        items = [str(len(value))] + [_encode_scalar(kind(v)) for v in value]
        return f"{ARRAY_KEY_BASE - pid}={','.join(items)}"
    if isinstance(value, str):
        return f"{pid}={_encode_string(value)}"
    return f"{pid}={_encode_scalar(value)}"


def dump_layer(layer: NcnnLayer) -> str:
    for what, token in [("type", layer.type), ("name", layer.name)] + [("blob", b) for b in layer.inputs + layer.outputs]:
        if not token or any(c.isspace() for c in token):
            raise ValueError(f"layer {what} {token!r} is empty or contains whitespace")
    for pid in layer.params:
        if not 0 <= pid <= MAX_PARAM_ID:
            raise ValueError(f"param id {pid} of {layer.name} is outside 0..{MAX_PARAM_ID}")
    head = "%-24s %-24s %d %d" % (layer.type, layer.name, len(layer.inputs), len(layer.outputs))
    params = [_encode_param(pid, layer.params[pid]) for pid in sorted(layer.params, key=str)]
    return " ".join([head] + layer.inputs + layer.outputs + params)


def dumps(model: NcnnModel) -> str:
    lines = [MAGIC, f"{len(model.layers)} {len(model.blob_names())}"]
    lines += [dump_layer(layer) for layer in model.layers]
    return "\n".join(lines) + "\n"


# --- reading -------------------------------------------------------------------------
def _parse_number(text: str) -> int | float:
    if re.fullmatch(r"-?\d+", text):
        return parse_int32(text)
    try:
        value = parse_float32(text)
    except ValueError:
        raise ValueError(f"not a number: {clip(text)!r}") from None
    if value in (float("inf"), float("-inf")) and "inf" not in text.lower():
        raise ValueError(f"float {clip(text)} does not fit in float32")
    if not math.isfinite(value):  # ncnn's loader: "invalid numeric value"
        raise ValueError(f"{clip(text)!r} is no number ncnn reads: ncnn.param has no infinity or NaN")
    return value


def _parse_array(text: str) -> list:
    items = text.split(",")
    count = _parse_number(items[0])
    if not isinstance(count, int) or count != len(items) - 1:
        raise ValueError(f"array declares {items[0]} elements but has {len(items) - 1}")
    # kept as written: ncnn types an array by its last element and misreads the elements of the
    # other kind (formats/ncnn_layer_params.py), so a mixed array stays mixed for pnnx-validate
    return [_parse_number(v) for v in items[1:]]


def _parse_value(text: str) -> NcnnValue:
    if text.startswith('"'):
        if len(text) < 2 or not text.endswith('"') or '"' in text[1:-1]:
            raise ValueError(f"unterminated string {clip(text)!r}")
        if len(text) - 2 > MAX_STRING_CHARS:
            raise ValueError(f"string longer than {MAX_STRING_CHARS} characters")
        return text[1:-1]
    if text in ("inf", "nan"):  # ncnn's loader takes these for strings: a float param would not get them
        raise ValueError(f"{text!r} is no number ncnn reads (its loader takes it for a string): ncnn.param has "
                         "no infinity or NaN")
    if _IDENTIFIER.fullmatch(text):
        return text
    if "," in text:  # modern ncnn's `id=v1,v2` array form
        return [_parse_number(v) for v in text.split(",")]
    return _parse_number(text)


class _Reader(CountedLineReader):
    magic, nouns = MAGIC, ("layer", "blob")
    max_line_chars = MAX_LINE_CHARS

    def __init__(self, path: str, collect: list[FormatError] | None = None) -> None:
        super().__init__(path, collect)
        self.model = NcnnModel()

    def body(self, line: str) -> None:
        self.model.layers.append(self.layer(line))

    def found_counts(self) -> tuple[int, int]:
        return len(self.model.layers), len(self.model.blob_names())

    def result(self) -> NcnnModel:
        return self.model

    def layer(self, line: str) -> NcnnLayer:
        tokens = _TOKEN.findall(line)
        if len(tokens) < 4:
            self.fail(f"expected '<type> <name> <inputs> <outputs>', got {len(tokens)} fields")
        counts = []
        for text, what in ((tokens[2], "input"), (tokens[3], "output")):
            if not is_digits(text) or len(text) > 9:
                self.fail(f"bad {what} count {text[:40]!r}")
            counts.append(int(text))
        nin, nout = counts
        if len(tokens) < 4 + nin + nout:
            self.fail(f"layer {tokens[1]} declares {nin} inputs and {nout} outputs "
                      f"but lists {len(tokens) - 4} names")
        blobs = tokens[4:4 + nin + nout]
        layer = NcnnLayer(tokens[0], tokens[1], blobs[:nin], blobs[nin:], {}, self.lineno)
        for token in tokens[4 + nin + nout:]:
            try:
                self.param(layer, token)
            except FormatError as err:  # later params are still checked when collecting
                self.report(err)
        return layer

    def param(self, layer: NcnnLayer, token: str) -> None:
        key, sep, value = token.partition("=")
        if not sep or not re.fullmatch(r"-?\d{1,6}", key):
            self.fail(f"expected <id>=<value>, got {token[:60]!r}")
        pid = int(key)
        is_array = pid <= ARRAY_KEY_BASE
        if is_array:
            pid = ARRAY_KEY_BASE - pid
        if not 0 <= pid <= MAX_PARAM_ID:
            self.fail(f"param id {key} is outside 0..{MAX_PARAM_ID}")
        if pid in layer.params:
            self.fail(f"duplicate param id {pid}")
        try:
            layer.params[pid] = _parse_array(value) if is_array else _parse_value(value)
        except ValueError as err:
            self.fail(f"param {key}: {err}")


def loads(text: str, path="<string>") -> NcnnModel:
    return _Reader.read(split_text_lines(text, path, MAX_PARAM_BYTES), path)


def load(path) -> NcnnModel:
    """Read an ncnn.param file, refusing oversized files before reading them."""
    return _Reader.read(read_text_lines(Path(path), MAX_PARAM_BYTES, MAX_LINE_CHARS), path)
