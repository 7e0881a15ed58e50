"""`pnnx-cases where OP`: every piece of one operator, as `file:line` from the repository root.

Groups, in this order:
  table        its row in `tables/*.tsv`
  cases        each case family registering it (the decorated function), with case counts
  frontends    for each door (`DOORS`), the places that write it: the rules of every frontend
               registry (a registry with `doors`) whose `produces` trait names it (aten rules
               without the trait: the same aten name; an `onnx.X` row: the ONNX rule keyed X;
               a row of `ONNX_SPELLINGS`: the ONNX rules writing its other name, "as F.x"),
               the standard-module recovery of `.pt` and `.pt2` and the Python API's capture,
               then quoted mentions in frontends/
  passes       quoted mentions in passes/ (fusions, folding)
  emitters     the rule each registry without doors (an emitter's) looks up for it
  tolerances   per-operator overrides and accumulation bounds of `tolerances.py`, and the
               cases of the row carrying a `ToleranceHint`
  waivers      `conformance/waivers.toml` entries matching a case of the row

Everything is found from the code's own tables and traits (no list of files to keep in step), so
a new registry or a moved rule shows up by itself. Nothing of the harness is imported and no test
fixture is read: the waivers file is read as data, where the source tree has one.
"""
from __future__ import annotations

import ast
import difflib
import fnmatch
import importlib
import inspect
import pkgutil
import re
import tomllib
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from pnnx_reference.errors import UsageError
from pnnx_reference.registry import REGISTRIES, Registry, where_defined

from . import registry, tables

ROOT = Path(__file__).resolve().parents[2]
GROUPS = ("table", "cases", "frontends", "passes", "emitters", "tolerances", "waivers")
# the doors into the converter (docs/DOORS.md), as frontend registries name them in `doors`
DOORS = ("python", ".pt", ".pt2", ".onnx")
# each door's own folder of frontends/ (docs/CONVENTIONS.md); `aten/` is shared through its registry's doors
DOOR_FOLDERS = {"python": "python", ".pt": "torchscript", ".pt2": "export", ".onnx": "onnx"}
FRONTENDS = ROOT / "reference" / "pnnx_reference" / "frontends"
WAIVERS = ROOT / "conformance" / "waivers.toml"
# (operator pattern, door) pairs no place writes, each with why (the ONNX door's measured by
# benchmarks/onnx_door_writes.py); `render` prints the reason where the door has no place
GAPS = Path(__file__).with_name("where_gaps.tsv")
# rows the ONNX door writes under another name of the same operator (torch.onnx keeps no module):
# row -> (that name, the ONNX rules writing it for the row). Measured by
# benchmarks/onnx_door_writes.py, which re-derives this table and the ONNX rows of the gaps list.
ONNX_SPELLINGS: dict[str, tuple[str, ...]] = {
    "nn.AdaptiveAvgPool1d": ("F.adaptive_avg_pool1d", "GlobalAveragePool"),
    "nn.AdaptiveAvgPool2d": ("F.adaptive_avg_pool2d", "GlobalAveragePool"),
    "nn.AdaptiveAvgPool3d": ("F.adaptive_avg_pool3d", "GlobalAveragePool"),
    "nn.AvgPool1d": ("F.avg_pool1d", "AveragePool"), "nn.AvgPool2d": ("F.avg_pool2d", "AveragePool"),
    "nn.AvgPool3d": ("F.avg_pool3d", "AveragePool"), "nn.CELU": ("F.celu", "Celu"), "nn.ELU": ("F.elu", "Elu"),
    "nn.Flatten": ("torch.flatten", "Flatten"), "nn.Fold": ("F.fold", "Col2Im"),
    "nn.Hardsigmoid": ("F.hardsigmoid", "HardSigmoid"), "nn.Hardswish": ("F.hardswish", "HardSwish"),
    "nn.LeakyReLU": ("F.leaky_relu", "LeakyRelu"), "nn.LogSigmoid": ("F.logsigmoid", "pnnx:LogSigmoid"),
    "nn.LogSoftmax": ("F.log_softmax", "LogSoftmax"), "nn.MaxPool1d": ("F.max_pool1d", "MaxPool"),
    "nn.MaxPool2d": ("F.max_pool2d", "MaxPool"), "nn.MaxPool3d": ("F.max_pool3d", "MaxPool"),
    "nn.PixelShuffle": ("F.pixel_shuffle", "DepthToSpace"), "nn.ReLU": ("F.relu", "Relu"),
    "nn.SELU": ("F.selu", "Selu"), "nn.Sigmoid": ("Tensor.sigmoid", "Sigmoid"), "F.sigmoid": ("Tensor.sigmoid", "Sigmoid"),
    "nn.Softmax": ("F.softmax", "Softmax"), "nn.Softplus": ("F.softplus", "Softplus"),
    "F.linear": ("nn.Linear", "Gemm", "MatMul"), "F.prelu": ("nn.PReLU", "PRelu"),
    "Tensor.flatten": ("torch.flatten", "Flatten"), "Tensor.split": ("torch.split", "Split"),
    "Tensor.mean": ("torch.mean", "ReduceMean"), "Tensor.sum": ("torch.sum", "ReduceSum"),
    "Tensor.softmax": ("F.softmax", "Softmax"), "Tensor.clamp": ("torch.clamp", "Clip"),
    "Tensor.matmul": ("torch.matmul", "MatMul"), "Tensor.argmax": ("torch.argmax", "ArgMax"),
    "Tensor.cumsum": ("torch.cumsum", "CumSum"), "torch.transpose": ("Tensor.transpose", "Transpose"),
    "torch.relu": ("F.relu", "Relu"), "torch.softmax": ("F.softmax", "Softmax"),
    "torch.log_softmax": ("F.log_softmax", "LogSoftmax"), "torch.permute": ("Tensor.permute", "Transpose"),
    "torch.reshape": ("Tensor.reshape", "Reshape"),
}
ONNX_ROW = "onnx."   # table rows of ONNX operators: `onnx.Conv` is the ONNX rule keyed `Conv`
# aten spells the submodules' functions with a prefix: torch.fft.rfft is aten::fft_rfft
_ATEN_PREFIXES = (("torch.fft.", "fft_"), ("torch.linalg.", "linalg_"), ("torch.special.", "special_"),
                  ("torch.", ""), ("Tensor.", ""), ("F.", ""))


@dataclass(frozen=True)
class Piece:
    group: str
    where: str      # "path/from/root.py:LINE"
    what: str
    doors: tuple[str, ...] = ()   # a frontend piece: the doors through which it writes the operator


def rel(path: Path | str) -> str:
    path = Path(path).resolve()
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


# --- what is known ------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _load_rules() -> None:
    """Importing the frontends and every emitter module fills the registries."""
    for door in ("aten", "torchscript", "export", "onnx", "python"):
        importlib.import_module(f"pnnx_reference.frontends.{door}")
    emit = importlib.import_module("pnnx_reference.emit")
    for info in pkgutil.walk_packages(emit.__path__, emit.__name__ + "."):
        importlib.import_module(info.name)


def known_ops() -> set[str]:
    """Table rows plus every operator an emitter registry names exactly."""
    _load_rules()
    ops = {r.op for r in tables.all_rows()}
    for reg in _emitter_registries():
        ops.update(reg)
    return ops


def _emitter_registries() -> list[Registry]:
    """Registries of emitter rules: a frontend's table names the doors it serves."""
    _load_rules()
    return [reg for _, reg in sorted(REGISTRIES.items()) if not reg.doors]


def _frontend_registries() -> list[Registry]:
    _load_rules()
    return [reg for _, reg in sorted(REGISTRIES.items()) if reg.doors]


def check_op(op: str) -> None:
    if op in known_ops():
        return
    close = difflib.get_close_matches(op, sorted(known_ops()), n=5, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    raise UsageError(f"unknown operator {op!r}: not a table row nor a rule of any emitter{hint}")


def pieces(op: str) -> list[Piece]:
    check_op(op)
    found = [*_table(op), *_cases(op), *_frontends(op), *_passes(op), *_emitters(op),
             *_tolerances(op), *_waivers(op)]
    out, seen = [], set()
    for piece in found:     # one line per place: a rule's own line beats a mention of it
        if (piece.group, piece.where) not in seen:
            seen.add((piece.group, piece.where))
            out.append(piece)
    return out


def doors_of(found: list[Piece]) -> dict[str, list[Piece]]:
    """door -> the places that write the operator through it."""
    return {door: [p for p in found if door in p.doors] for door in DOORS}


# --- table and cases ----------------------------------------------------------------------------
def _table(op: str):
    for table in tables.TABLES:
        path = Path(tables.__file__).with_name("tables") / f"{table}.tsv"
        for number, line in enumerate(_lines(path), 1):
            if line.split("\t", 1)[0] == op:
                row = tables.row(op)
                marks = f"upstream {'supported' if row.upstream_supported else 'not supported'}, " \
                        f"ncnn {row.upstream_ncnn}, listed in {row.listed_in}"
                yield Piece("table", f"{rel(path)}:{number}", f"table {table} ({marks})")


@lru_cache(maxsize=None)
def _yielded(fn) -> tuple:
    return tuple(fn())


@lru_cache(maxsize=None)
def _lines(path: Path) -> tuple[str, ...]:
    return tuple(path.read_text().splitlines())


def _cases(op: str):
    for fn in registry.families(op):
        cases = [c for c in _yielded(fn) if c.op == op]
        smoke = sum(c.tier == "smoke" for c in cases)
        yield Piece("cases", where_defined(fn), f"{fn.__name__}(): {_n(len(cases), 'case')}, {smoke} smoke")


# --- frontends and passes -----------------------------------------------------------------------
def aten_name(op: str) -> str | None:
    """The aten operator a Python-API call is named after (None for modules)."""
    for prefix, aten_prefix in _ATEN_PREFIXES:
        if op.startswith(prefix):
            return aten_prefix + op[len(prefix):]
    return None


def _frontends(op: str):
    yield from _python_capture(op)
    yield from _aten_rules(op)
    if op.startswith("nn."):
        yield from _stdmodules(op)
        yield from _export_modules(op)
    for reg in _frontend_registries():
        if reg.name != "aten":
            yield from _produced_by(reg, op)
            if op in ONNX_SPELLINGS and ".onnx" in reg.doors:
                spelling, *keys = ONNX_SPELLINGS[op]
                yield from _produced_by(reg, spelling, f" as {spelling}", keys)
    yield from _mentions(op, "frontends", FRONTENDS, skip=FRONTENDS / "aten")  # its rules come first


def _produced_by(reg: Registry, op: str, spelled: str = "", keys=None):
    """Rules of a frontend registry whose `produces` names `op` (an ONNX row: its own rule);
    `spelled`: the note of a row written under another name, by the rules `keys` only."""
    onnx_key = op[len(ONNX_ROW):] if op.startswith(ONNX_ROW) and ".onnx" in reg.doors else None
    for rule in reg.rules():
        if keys is not None and rule.key not in keys:
            continue
        if op in rule.traits.get("produces", ()) or rule.key == onnx_key:
            what = "converts it" if rule.key == onnx_key else f"writes it{spelled}"
            yield Piece("frontends", rule.where, f"{reg.name} rule {rule.key} {what}", reg.doors)


def _python_capture(op: str):
    """The Python API records a standard module whole, a function call by its API path, and a
    registered operator as the call that makes it (the .pt and .pt2 doors run their nodes through
    that recording)."""
    from pnnx_reference.frontends.python import customop, leaves, modules, naming, torchvision_ops, tracer

    if op in modules.TORCHVISION_LEAVES.values():
        yield Piece("frontends", _method_where(leaves.Leaves, "leave"),
                    "Python API: a torchvision module is captured whole (leaf)", ("python",))
    if op in torchvision_ops.PRODUCES:
        yield Piece("frontends", where_defined(customop.record_as_api_call),
                    "Python API: the registered operator is recorded as this call", ("python", ".pt", ".pt2"))

    if op.startswith("nn."):
        cls = getattr(importlib.import_module("torch.nn"), op[len("nn."):], None)
        if inspect.isclass(cls) and modules.is_leaf_class(cls):
            yield Piece("frontends", _method_where(leaves.Leaves, "leave"),
                        "Python API: a standard module is captured whole (leaf)", ("python",))
        return
    fn = _api_object(op)
    if fn is not None and (op.startswith("Tensor.") or naming.api_path(fn) == op):
        yield Piece("frontends", _method_where(tracer.Tracer, "__torch_function__"),
                    "Python API: the call is recorded under its API path", ("python",))


def _method_where(cls, name: str) -> str:
    """`file:line` of a method, looking through a decorator that did not keep its name."""
    fn = getattr(cls, name)
    if fn.__name__ != name:
        inner = [c.cell_contents for c in fn.__closure__ or () if getattr(c.cell_contents, "__name__", "") == name]
        fn = inner[0] if inner else fn
    return where_defined(fn)


def _api_object(op: str):
    """The function `F.x` / `torch.x` / `torch.fft.x` / `Tensor.x` names, or None."""
    namespaces = {"F": "torch.nn.functional", "torch": "torch", "Tensor": "torch"}
    root, _, rest = op.partition(".")
    if root not in namespaces or not rest:
        return None
    obj = importlib.import_module(namespaces[root])
    if root == "Tensor":  # `x.fill_(v)` is recorded as Tensor.fill, the tracer rebinding x
        obj = obj.Tensor
        rest = rest if hasattr(obj, rest) else rest + "_"
    for part in rest.split("."):
        obj = getattr(obj, part, None)
    return obj if callable(obj) and not inspect.isclass(obj) else None


def _aten_rules(op: str):
    """Rules whose `produces` names `op`; rules without the trait match by the aten name."""
    _load_rules()
    by_fn: dict = {}
    for rule in REGISTRIES["aten"].rules():
        by_fn.setdefault(rule.fn, []).append(rule)
    name, matched = aten_name(op), False
    for rules in by_fn.values():
        keys = [r.key for r in rules]
        produces = rules[0].traits.get("produces")
        if produces is not None:
            hit = op in produces
        else:  # the rule for `relu` also runs `relu_`
            hit = name is not None and name.rstrip("_") in {k.rstrip("_") for k in keys}
        if hit:
            matched = True
            shown = ", ".join(keys[:3]) + (f" and {len(keys) - 3} more" if len(keys) > 3 else "")
            yield Piece("frontends", rules[0].where, f"aten rule {shown}", REGISTRIES["aten"].doors)
    if not matched and name is not None:
        from pnnx_reference.frontends.aten import _generic

        yield Piece("frontends", where_defined(_generic),
                    f"aten::{name} has no rule of its own: the generic mapping to the same-named callable",
                    REGISTRIES["aten"].doors)


def _stdmodules(op: str):
    from pnnx_reference.frontends.torchscript import stdmodules

    yield Piece("frontends", where_defined(stdmodules.recover),
                "TorchScript: a standard torch.nn module is rebuilt whole from the .pt", (".pt",))
    cls = getattr(importlib.import_module("torch.nn"), op[len("nn."):], None)
    if not inspect.isclass(cls):
        return
    names = {c.__name__ for c in cls.__mro__ if c.__module__.startswith("torch.nn.modules")
             and c.__name__ != "Module"}
    path = Path(stdmodules.__file__)
    text = _lines(path)
    lines = sorted({number for name in names for number in _attribute_lines(path).get(name, ())})
    for number in lines:     # code naming the class or a base (nn.modules.conv._ConvNd)
        yield Piece("frontends", f"{rel(path)}:{number}", f"TorchScript recovery: {text[number - 1].strip()[:90]}",
                    (".pt",))


def _export_modules(op: str):
    from pnnx_reference.frontends.export import modules as export_modules
    from pnnx_reference.frontends.python import modules

    cls = getattr(importlib.import_module("torch.nn"), op[len("nn."):], None)
    if inspect.isclass(cls) and modules.is_leaf_class(cls):
        yield Piece("frontends", where_defined(export_modules.plan_modules),
                    "torch.export: a standard module is rebuilt whole from nn_module_stack", (".pt2",))


@lru_cache(maxsize=None)
def _attribute_lines(path: Path) -> dict[str, tuple[int, ...]]:
    """attribute name -> the lines of `path` that read it (`nn.modules.conv._ConvNd`: _ConvNd, conv, ...)"""
    found: dict[str, set[int]] = {}
    for node in ast.walk(ast.parse("\n".join(_lines(path)))):
        if isinstance(node, ast.Attribute):
            found.setdefault(node.attr, set()).add(node.lineno)
    return {name: tuple(sorted(numbers)) for name, numbers in found.items()}


@lru_cache(maxsize=None)
def _modules_under(folder: Path) -> tuple[tuple[Path, str], ...]:
    """The .py files under `folder`, sorted, each with its text."""
    return tuple((path, "\n".join(_lines(path))) for path in sorted(folder.rglob("*.py")))


def _mentions(op: str, group: str, folder: Path, skip: Path | None = None):
    """Lines quoting the operator's name ("nn.Conv2d") in the modules under `folder`; one
    under a door's own frontend folder counts for that door."""
    quoted = re.compile(r"""["']%s["']""" % re.escape(op))
    for path, text in _modules_under(folder):
        if (skip is not None and path.is_relative_to(skip)) or op not in text:
            continue
        doors = tuple(door for door, sub in DOOR_FOLDERS.items() if path.is_relative_to(FRONTENDS / sub))
        for number, line in enumerate(_lines(path), 1):
            if quoted.search(line):
                yield Piece(group, f"{rel(path)}:{number}", f"{path.stem}: {line.strip()[:90]}", doors)


def _passes(op: str):
    yield from _mentions(op, "passes", ROOT / "reference" / "pnnx_reference" / "passes")


# --- emitters -----------------------------------------------------------------------------------
def _emitters(op: str):
    _load_rules()
    for reg in _emitter_registries():
        rule = reg.lookup(op)
        if rule is not None:
            how = f" (every {rule.key}* operator)" if rule.prefix else ""
            yield _rule_piece(reg.name, rule.fn, op, how)


def _rule_piece(registry_name: str, fn, op: str, how: str = "") -> Piece:
    """A lambda registered in a loop or helper is shown at the line naming `op`."""
    where = where_defined(fn)
    if fn.__name__ == "<lambda>":
        path = Path(inspect.getsourcefile(fn))
        quoted = re.compile(r"""["']%s["']""" % re.escape(op))
        for number, line in enumerate(_lines(path), 1):
            if quoted.search(line):
                return Piece("emitters", f"{rel(path)}:{number}", f"{registry_name}: {line.strip()[:90]}")
    return Piece("emitters", where, f"{registry_name}: {fn.__name__}{how}")


# --- what is expected to differ -----------------------------------------------------------------
def _literal_line(path: Path, variable: str, literal: str) -> int:
    """The line of the first string `literal` inside the assignment to `variable`."""
    tree = ast.parse(path.read_text())
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            lines = [n.lineno for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value == literal]
            if lines:
                return min(lines)
            return node.lineno
    return 1


def _tolerances(op: str):
    from pnnx_reference import tolerances  # the table itself (pnnx_conformance.tolerances re-exports it)

    path = Path(tolerances.__file__)
    for (pattern, backend, precision), tol in tolerances.OP_OVERRIDES.items():
        if fnmatch.fnmatchcase(op, pattern):
            line = _literal_line(path, "OP_OVERRIDES", pattern)
            yield Piece("tolerances", f"{rel(path)}:{line}",
                        f"override {pattern} on {backend} {precision}: atol={tol.atol:g} rtol={tol.rtol:g} "
                        f"({tol.reason})")
    for pattern, terms in tolerances.ACCUMULATING.items():
        if fnmatch.fnmatchcase(op, pattern):
            line = _literal_line(path, "ACCUMULATING", pattern)
            yield Piece("tolerances", f"{rel(path)}:{line}",
                        f"accumulating {pattern}: bound grows with the terms summed ({terms.__name__})")
    for fn in registry.families(op):
        hints: dict = {}
        for case in _yielded(fn):
            if case.op == op and case.tolerance is not None:
                hints.setdefault(case.tolerance, []).append(case.id)
        for hint, ids in hints.items():
            yield Piece("tolerances", where_defined(fn),
                        f"{_n(len(ids), 'case')} carry atol={hint.atol:g} rtol={hint.rtol:g} ({hint.reason})")


def _waivers(op: str, path: Path = WAIVERS):
    if not path.is_file():
        return
    text = path.read_text()
    headers = [n for n, line in enumerate(text.splitlines(), 1) if line.strip() == "[[waiver]]"]
    ids = [c.id for c in registry.select(op=op)]
    for number, entry in zip(headers, tomllib.loads(text).get("waiver", [])):
        pattern = str(entry.get("case", ""))
        if any(fnmatch.fnmatchcase(i, pattern) for i in ids):
            scope = "/".join(str(entry.get(k, "*")) for k in ("converter", "backend", "check", "precision"))
            yield Piece("waivers", f"{rel(path)}:{number}", f"{pattern} [{scope}]: {entry.get('reason', '')}")


# --- output -------------------------------------------------------------------------------------
def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render(op: str, found: list[Piece]) -> str:
    width = max((len(p.where) for p in found), default=0)
    lines = [op]
    for group in GROUPS:
        lines.append(f"  {group}")
        mine = [p for p in found if p.group == group]
        lines += [f"    {p.where:<{width}}  {_doors_label(p)}{p.what}" for p in mine] or ["    (none)"]
        if group == "frontends":
            lines += [f"    (no place writes it through the {door} door: {gap_reason(op, door) or 'no reason listed'})"
                      for door, places in doors_of(found).items() if not places]
    return "\n".join(lines)


def gaps() -> list[tuple[str, str, str]]:
    """GAPS' rows: (operator pattern, door, reason)."""
    lines = [ln for ln in GAPS.read_text().splitlines() if ln and not ln.startswith("#")]
    return [tuple(ln.split("\t", 2)) for ln in lines]


def gap_reason(op: str, door: str) -> str:
    """Why no place writes `op` through `door` ("" when GAPS lists no such pair)."""
    return next((why for pattern, gap_door, why in gaps()
                 if gap_door == door and fnmatch.fnmatchcase(op, pattern)), "")


def _doors_label(piece: Piece) -> str:
    return f"[{' '.join(piece.doors)}] " if piece.doors else ""


def as_json(op: str, found: list[Piece]) -> dict:
    return {"op": op, "pieces": [asdict(p) for p in found],
            "gaps": {door: gap_reason(op, door) for door, places in doors_of(found).items() if not places}}
