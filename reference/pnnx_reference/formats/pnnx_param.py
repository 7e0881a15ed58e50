"""pnnx.param text: `dumps`/`loads` (text only) and `save`/`load` (with pnnx.bin).

The writer (pnnx_param_writer.py) reproduces upstream HEAD
byte for byte. The reader is strict: every problem raises FormatError with the
file, the line and one clear message.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError, ValueTextError
from ..ir import DTYPES, NULL_DTYPE, UNKNOWN_DIM, Attribute, Graph, Operand, Operator
from . import pnnx_bin
from .pnnx_param_writer import MAGIC, dumps
from .textfile import CountedLineReader, is_digits, read_text_lines, split_text_lines
from .pnnx_values import INT32_MAX, clip, decode_value

MAX_PARAM_BYTES = 256 * 1024 * 1024  # real files are a few MB; bounds memory on hostile input
MAX_LINE_CHARS = 16 * 1024 * 1024
_VALID_DTYPES = frozenset(DTYPES) | {NULL_DTYPE}


# --- writing (the text itself: pnnx_param_writer.py) ---------------------------------
def bin_entries(graph: Graph):
    """(entry name, bytes) for every attribute, in upstream's order."""
    for op in graph.ops:
        for key, attr in sorted(op.attrs.items()):
            if len(attr.data) != attr.nbytes_expected:
                raise ValueError(f"{op.name}.{key}: {len(attr.data)} bytes of data, "
                                 f"shape {attr.shape} {attr.dtype} needs {attr.nbytes_expected}")
            yield f"{op.name}.{key}", attr.data


def _atomic_write(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def save(graph: Graph, param_path, bin_path) -> None:
    """Write pnnx.param and pnnx.bin; each appears complete or not at all."""
    text = dumps(graph)
    entries = list(bin_entries(graph))
    _atomic_write(Path(bin_path), lambda p: pnnx_bin.write_bin(p, entries))
    _atomic_write(Path(param_path), lambda p: p.write_bytes(text.encode("utf-8")))


# --- reading -------------------------------------------------------------------------
@dataclass
class _Annotation:
    shape: list[int]
    dtype: str | None
    line: int


class _Reader(CountedLineReader):
    """Builds a Graph line by line, remembering where each operand was annotated."""

    magic, nouns = MAGIC, ("operator", "operand")
    max_line_chars = MAX_LINE_CHARS

    def __init__(self, path: str, collect: list[FormatError] | None = None) -> None:
        super().__init__(path, collect)
        self.graph = Graph()
        self.operands: dict[str, Operand] = {}
        self.produced_at: dict[str, int] = {}
        self.op_names: dict[str, int] = {}
        self.annotations: dict[str, _Annotation] = {}

    def found_counts(self) -> tuple[int, int]:
        return len(self.graph.ops), len(self.graph.operands)

    def result(self) -> Graph:
        return self.graph

    # operator lines
    def body(self, line: str) -> None:
        tokens = line.split()
        if not tokens:
            self.fail("empty line")
        if len(tokens) < 4:
            self.fail(f"expected '<type> <name> <inputs> <outputs>', got {len(tokens)} fields")
        op_type, name = tokens[0], tokens[1]
        nin, nout = self._count(tokens[2], "input"), self._count(tokens[3], "output")
        if len(tokens) < 4 + nin + nout:
            self.fail(f"operator {name} declares {nin} inputs and {nout} outputs "
                      f"but lists {len(tokens) - 4} names")
        self._check_op_name(name)
        op = self.graph.new_operator(op_type, name)
        names = tokens[4:4 + nin + nout]
        self.graph.connect(op, inputs=[self._consume(n) for n in names[:nin]])
        self.graph.connect(op, outputs=[self._produce(n) for n in names[nin:]])
        for token in tokens[4 + nin + nout:]:
            try:
                self._item(op, token)
            except FormatError as err:  # later items are still checked when collecting
                self.report(err)

    def _count(self, text: str, what: str) -> int:
        if not is_digits(text) or len(text) > 9:
            self.fail(f"bad {what} count {text[:40]!r}")
        return int(text)

    def _check_op_name(self, name: str) -> None:
        if name in self.op_names:  # pnnx.bin entries are keyed by operator name
            self.report(FormatError(self.path, f"duplicate operator name {name} "
                                               f"(first on line {self.op_names[name]})", self.lineno))
            return
        self.op_names[name] = self.lineno

    def _consume(self, name: str) -> Operand:
        if name not in self.operands:
            self.report(FormatError(self.path, f"operand {name} is used before it is produced", self.lineno))
            return Operand(name)  # collecting: a stand-in outside the graph, so the line goes on
        return self.operands[name]

    def _produce(self, name: str) -> Operand:
        if name in self.operands:
            self.report(FormatError(self.path, f"operand {name} is produced twice "
                                               f"(first on line {self.produced_at[name]})", self.lineno))
            return self.graph.new_operand(name)  # collecting: counted, but the first one keeps the name
        operand = self.graph.new_operand(name)
        self.operands[name] = operand
        self.produced_at[name] = self.lineno
        return operand

    def _item(self, op: Operator, token: str) -> None:
        key, sep, value = token.partition("=")
        if not sep:
            self.fail(f"expected key=value, got {token[:60]!r}")
        handler = _ITEM_HANDLERS.get(key[:1], _Reader._param)
        handler(self, op, key, value)

    def _param(self, op: Operator, key: str, value: str) -> None:
        if not key:
            self.fail(f"parameter with empty key: ={value[:40]}")
        if key in op.params:
            self.fail(f"duplicate parameter {key}")
        if op.type == "pnnx.Expression" and key == "expr":
            # the expression grammar is its own: `[size(@0,0),-1]` is no parameter list and
            # `2.000000e-01` stays the text the expression parser reads
            op.params[key] = value
            return
        try:
            op.params[key] = decode_value(value)
        except ValueTextError as err:
            self.fail(f"parameter {key}: {err}")

    def _attr(self, op: Operator, key: str, value: str) -> None:
        key = key[1:]
        if not key:
            self.fail("attribute with empty name")
        if key in op.attrs:
            self.fail(f"duplicate attribute @{key}")
        shape, dtype = self._shape(value, f"attribute @{key}", allow_unknown=False)
        op.attrs[key] = Attribute(tuple(shape), dtype or NULL_DTYPE)

    def _input_key(self, op: Operator, key: str, value: str) -> None:
        argname = key[1:]
        slots = [i for i, o in enumerate(op.inputs) if o.name == value]
        if not argname or not slots:
            self.fail(f"${argname}={value}: {value} is not an input of {op.name}")
        if not op.inputnames:
            op.inputnames = [""] * len(op.inputs)
        free = [i for i in slots if not op.inputnames[i]]
        if not free:
            self.fail(f"${argname}={value}: input {value} is already named")
        op.inputnames[free[0]] = argname

    def _shape_annotation(self, op: Operator, key: str, value: str) -> None:
        name = key[1:]
        if not any(o.name == name for o in op.inputs + op.outputs):
            self.fail(f"#{name}: {name} is not an operand of {op.name}")
        shape, dtype = self._shape(value, f"#{name}", allow_unknown=True)
        if not shape:
            self.fail(f"#{name}: empty shape (upstream never writes one)")
        previous = self.annotations.get(name)
        if name not in self.produced_at:
            return  # a stand-in for an unknown operand, already reported
        if previous is None:
            if self.produced_at[name] != self.lineno:
                self.fail(f"#{name}: operand {name} is annotated here but not where it "
                          f"is produced (line {self.produced_at[name]})")
            self.annotations[name] = _Annotation(shape, dtype, self.lineno)
            operand = self.operands[name]
            operand.shape, operand.dtype = shape, dtype
        elif (previous.shape, previous.dtype) != (shape, dtype):
            self.fail(f"#{name}: annotation {value} differs from the one on line {previous.line}")

    def _shape(self, text: str, what: str, allow_unknown: bool) -> tuple[list[int], str | None]:
        if not text.startswith("(") or ")" not in text:
            self.fail(f"{what}: expected (d0,d1,...)dtype, got {text[:60]!r}")
        dims_text, _, dtype = text[1:].partition(")")
        if dtype not in _VALID_DTYPES:
            self.fail(f"{what}: unknown dtype {dtype[:20]!r}")
        dims = [self._dim(d, what, allow_unknown) for d in dims_text.split(",")] if dims_text else []
        return dims, (None if dtype == NULL_DTYPE else dtype)

    def _dim(self, text: str, what: str, allow_unknown: bool) -> int:
        if text == "?" and allow_unknown:
            return UNKNOWN_DIM
        if not is_digits(text) or len(text) > 10 or int(text) > INT32_MAX:
            self.fail(f"{what}: bad dimension {clip(text)!r}")
        return int(text)


_ITEM_HANDLERS = {"@": _Reader._attr, "$": _Reader._input_key, "#": _Reader._shape_annotation}


def loads(text: str, path="<string>") -> Graph:
    """Parse pnnx.param text. Attributes get shape and dtype but no data."""
    return _Reader.read(split_text_lines(text, path, MAX_PARAM_BYTES), path)


def load_text(param_path) -> Graph:
    """Read a pnnx.param file (streaming, bounded memory); attributes get no data."""
    path = Path(param_path)
    return _Reader.read(read_text_lines(path, MAX_PARAM_BYTES, MAX_LINE_CHARS), path)


def default_bin_path(param_path) -> Path:
    path = Path(param_path)
    if path.name.endswith(".param"):
        return path.with_name(path.name[: -len(".param")] + ".bin")
    return path.with_name(path.name + ".bin")


def load(param_path, bin_path=None) -> Graph:
    """Read pnnx.param and its pnnx.bin; every attribute gets its data."""
    graph = load_text(param_path)
    bin_path = Path(bin_path) if bin_path is not None else default_bin_path(param_path)
    if not bin_path.exists() and all(a.nbytes_expected == 0 for op in graph.ops for a in op.attrs.values()):
        return graph  # nothing to read: a weightless graph needs no pnnx.bin
    entries = pnnx_bin.read_bin(bin_path)
    for op in graph.ops:
        for key, attr in op.attrs.items():
            _fill_attribute(bin_path, f"{op.name}.{key}", attr, entries)
    return graph


def _fill_attribute(bin_path: Path, entry: str, attr: Attribute, entries: dict[str, bytes]) -> None:
    if entry not in entries:
        if attr.nbytes_expected == 0:
            return
        raise FormatError(bin_path, f"missing entry {entry}")
    data = entries[entry]
    if len(data) != attr.nbytes_expected:
        raise FormatError(bin_path, f"entry {entry} has {len(data)} bytes, "
                                    f"{attr.shape} {attr.dtype} needs {attr.nbytes_expected}")
    attr.data = data
