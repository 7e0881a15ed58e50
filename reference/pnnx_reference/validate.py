"""`pnnx-validate FILE.pnnx.param|FILE.ncnn.param ...`: report every problem found.

pnnx.param: grammar, the two counts, each operand produced once and consumed after it
is produced, pnnx.Input / pnnx.Output shapes, each pnnx.Expression's `expr` (grammar,
function names and arities, nesting depth, `@i` below its input count), each `@attr`
backed by a pnnx.bin entry of the right size, no stray entries, a store-only zip with
correct CRCs.
ncnn.param: grammar, the two counts, each layer type one the pinned ncnn creates
(formats/ncnn_layers.py), each param id one the layer reads and its value of the kind it reads
(formats/ncnn_layer_params.py: a value of the wrong kind is an error, since ncnn drops or misreads it;
an id the layer does not read is a warning, an error with --strict, since ncnn ignores it but
a converter that writes it meant something), blob production/consumption order, one consumer per blob (ncnn needs
Split layers), Input layers, and ncnn.bin sizes for known layers.
Prints `FILE: ok` on stdout for each clean file (warnings alone leave it clean). Exit status:
0 clean, 1 problems found (warnings too with --strict), 2 usage error.
"""
from __future__ import annotations

import argparse
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import expression, version_line
from .errors import ExpressionError, FormatError, one_line
from .formats import ncnn_bin, ncnn_layer_params, ncnn_layers, ncnn_param, pnnx_bin, pnnx_param
from .formats.textfile import read_text_lines
from .ir import Graph
from .version_action import VersionAction


@dataclass(frozen=True)
class Problem:
    path: str
    line: int | None
    message: str
    warning: bool = False  # a likely mistake the loader tolerates: an error only with --strict

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return one_line(f"{where}: {'warning: ' if self.warning else ''}{self.message}")  # names quoted from a hostile file stay on one line

    @classmethod
    def of(cls, err: FormatError) -> "Problem":
        return cls(err.path, err.line, err.message)


# --- pnnx ----------------------------------------------------------------------------
def _read_all(reader, path: Path, max_bytes: int, max_line: int, problems: list[Problem]):
    errors: list[FormatError] = []
    reader.collect = errors
    try:
        for line in read_text_lines(path, max_bytes, max_line):
            reader.feed(line)
        result = reader.finish()
    except FormatError as err:  # unreadable, too large, bad UTF-8: nothing more to check
        errors.append(err)
        result = None
    problems.extend(Problem.of(e) for e in errors)
    return result


def _io_ops(graph: Graph, lines: dict[str, int], path: str) -> list[Problem]:
    problems = []
    for op in graph.ops:
        if op.type == "pnnx.Input" and (op.inputs or len(op.outputs) != 1):
            problems.append(Problem(path, lines.get(op.name), f"pnnx.Input {op.name} must have 0 inputs "
                                    f"and 1 output, has {len(op.inputs)} and {len(op.outputs)}"))
        if op.type == "pnnx.Output" and (op.outputs or not op.inputs):
            problems.append(Problem(path, lines.get(op.name), f"pnnx.Output {op.name} must have inputs "
                                    f"and 0 outputs, has {len(op.inputs)} and {len(op.outputs)}"))
    for kind in ("pnnx.Input", "pnnx.Output"):
        if not any(op.type == kind for op in graph.ops):
            problems.append(Problem(path, None, f"graph has no {kind} operator"))
    return problems


def _expressions(graph: Graph, lines: dict[str, int], path: str) -> list[Problem]:
    problems = []
    for op in graph.ops:
        if op.type != "pnnx.Expression":
            continue
        where = lines.get(op.name)
        text = op.params.get("expr")
        if not isinstance(text, str) or not text:
            problems.append(Problem(path, where, f"pnnx.Expression {op.name} has no expr"))
            continue
        try:
            used = expression.input_indices(expression.parse(text))
        except ExpressionError as err:
            problems.append(Problem(path, where, f"pnnx.Expression {op.name}: {err}"))
            continue
        if used and used[-1] >= len(op.inputs):
            problems.append(Problem(path, where, f"pnnx.Expression {op.name}: expr uses @{used[-1]} but "
                                    f"the operator has {len(op.inputs)} input(s)"))
    return problems


def _crc_ok(f, entry: pnnx_bin.BinEntry) -> bool:
    f.seek(entry.offset)
    crc, left = 0, entry.size
    while left:
        chunk = f.read(min(left, 1 << 20))
        crc, left = zlib.crc32(chunk, crc), left - len(chunk)
    return crc == entry.crc


def _check_bin(graph: Graph, lines: dict[str, int], param: Path, bin_path: Path) -> list[Problem]:
    wanted = {f"{op.name}.{key}": (op, key, attr) for op in graph.ops for key, attr in op.attrs.items()}
    if not bin_path.exists():
        return [Problem(str(bin_path), None, "missing pnnx.bin")] if wanted else []
    try:
        entries = pnnx_bin.scan_bin(bin_path)
        with open(bin_path, "rb") as f:
            bad_crc = [e.name for e in entries if not _crc_ok(f, e)]
    except FormatError as err:
        return [Problem.of(err)]
    found = {e.name: e for e in entries}
    problems = [Problem(str(bin_path), None, f"entry {name}: CRC-32 mismatch (corrupt data)") for name in bad_crc]
    for name, (op, key, attr) in wanted.items():
        line = lines.get(op.name)
        if name not in found:
            problems.append(Problem(str(param), line, f"@{key} of {op.name}: no entry {name} in pnnx.bin"))
        elif found[name].size != attr.nbytes_expected:
            shape = ",".join(map(str, attr.shape))
            problems.append(Problem(str(param), line, f"@{key} of {op.name}: pnnx.bin entry {name} has "
                                    f"{found[name].size} bytes, ({shape}){attr.dtype} needs {attr.nbytes_expected}"))
    problems += [Problem(str(bin_path), None, f"stray entry {name} (no such attribute)")
                 for name in found if name not in wanted]
    return problems


def validate_pnnx(param: Path, bin_path: Path | None = None) -> list[Problem]:
    problems: list[Problem] = []
    reader = pnnx_param._Reader(str(param))
    graph = _read_all(reader, param, pnnx_param.MAX_PARAM_BYTES, pnnx_param.MAX_LINE_CHARS, problems)
    if graph is None:
        return problems
    problems += _io_ops(graph, reader.op_names, str(param))
    problems += _expressions(graph, reader.op_names, str(param))
    problems += _check_bin(graph, reader.op_names, param, bin_path or pnnx_param.default_bin_path(param))
    return problems


# --- ncnn ----------------------------------------------------------------------------
def _blob_flow(model: ncnn_param.NcnnModel, path: str) -> list[Problem]:
    problems: list[Problem] = []
    produced: dict[str, int | None] = {}
    consumers: dict[str, list[ncnn_param.NcnnLayer]] = {}
    for layer in model.layers:
        for blob in layer.inputs:
            if blob not in produced:
                problems.append(Problem(path, layer.line, f"blob {blob} is used before it is produced"))
            consumers.setdefault(blob, []).append(layer)
        for blob in layer.outputs:
            if blob in produced:
                problems.append(Problem(path, layer.line, f"blob {blob} is produced twice "
                                        f"(first on line {produced[blob]})"))
            produced.setdefault(blob, layer.line)
        if layer.type == "Input" and (layer.inputs or len(layer.outputs) != 1):
            problems.append(Problem(path, layer.line, f"Input {layer.name} must have 0 inputs and "
                                    f"1 output, has {len(layer.inputs)} and {len(layer.outputs)}"))
    for blob, users in consumers.items():
        if len(users) > 1:
            problems.append(Problem(path, users[1].line, f"blob {blob} is consumed by {len(users)} layers "
                                    f"({', '.join(u.name for u in users)}); ncnn needs a Split"))
    return problems


def _layer_types(model: ncnn_param.NcnnModel, path: str) -> list[Problem]:
    return [Problem(path, layer.line, f"layer {layer.name}: ncnn has no layer type {layer.type!r} "
                    "(its loader refuses the file)")
            for layer in model.layers if not ncnn_layers.exists(layer.type)]


def _param_ids(model: ncnn_param.NcnnModel, path: str) -> list[Problem]:
    problems = []
    for layer in model.layers:
        reads = ncnn_layer_params.read_ids(layer.type)
        if reads is None:  # a layer the table does not cover
            continue
        for pid, value in sorted(layer.params.items()):
            where = f"layer {layer.name}: param {pid}"
            if pid not in reads:
                problems.append(Problem(path, layer.line, f"{where}: ncnn's {layer.type} reads no param {pid} "
                                        "(its loader ignores it)", warning=True))
            elif not ncnn_layer_params.fits(value, reads[pid]):
                problems.append(Problem(path, layer.line, f"{where}: ncnn's {layer.type} reads it as {reads[pid]}, "
                                        f"the file gives {ncnn_layer_params.kind_of(value)} {value!r:.60} "
                                        "(its loader would drop or misread it)"))
    return problems


def _check_ncnn_bin(model: ncnn_param.NcnnModel, param: Path) -> list[Problem]:
    bin_path = param.with_name(param.name[: -len(".param")] + ".bin")
    if not bin_path.exists():
        needs = any(l.type not in ncnn_bin.WEIGHTLESS for l in model.layers)
        return [Problem(str(bin_path), None, "missing ncnn.bin")] if needs else []
    try:
        result = ncnn_bin.read_and_walk(bin_path, model.layers)
    except FormatError as err:
        return [Problem.of(err)]
    return [Problem(str(bin_path), None, message) for _, message in result.problems]


def validate_ncnn(param: Path) -> list[Problem]:
    problems: list[Problem] = []
    reader = ncnn_param._Reader(str(param))
    model = _read_all(reader, param, ncnn_param.MAX_PARAM_BYTES, ncnn_param.MAX_LINE_CHARS, problems)
    if model is None:
        return problems
    problems += _layer_types(model, str(param))
    problems += _param_ids(model, str(param))
    problems += _blob_flow(model, str(param))
    if not any(not p.warning for p in problems):
        problems += _check_ncnn_bin(model, param)
    return problems


# --- entry points --------------------------------------------------------------------
VALIDATORS = {".pnnx.param": validate_pnnx, ".ncnn.param": validate_ncnn}


def validator_for(path) -> Callable[[Path], list[Problem]]:
    for suffix, check in VALIDATORS.items():
        if str(path).endswith(suffix):
            return check
    raise ValueError(f"{path}: expected a file ending in .pnnx.param or .ncnn.param")


def validate(path) -> list[Problem]:
    """Every problem in one model file (and its .bin). Raises ValueError for other suffixes."""
    return validator_for(path)(Path(path))


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, as every other refusal (argparse prints two)
        self.exit(2, f"error: {message} (usage: pnnx-validate FILE.pnnx.param|FILE.ncnn.param ...)\n")


def main(argv=None) -> int:
    parser = _Parser(prog="pnnx-validate", description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE", help="*.pnnx.param or *.ncnn.param")
    parser.add_argument("--strict", action="store_true", help="fail on warnings too (an ncnn param id its "
                        "layer does not read)")
    parser.add_argument("--version", action=VersionAction, version=version_line("pnnx-validate"))
    args = parser.parse_args(argv)
    try:
        checks = [(Path(f), validator_for(f)) for f in args.files]
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    problems = []
    for path, check in checks:
        found = check(path)
        for problem in found:
            print(problem, file=sys.stderr)
        found = [p for p in found if args.strict or not p.warning]
        if not found:
            print(f"{path}: ok")  # said, so that silence never stands for success
        problems += found
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
