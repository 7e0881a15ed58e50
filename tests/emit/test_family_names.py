"""The same file name for the same operator in every table keyed by operator (docs/CONVENTIONS.md,
"Emitters"): the emitters' families (tests/emit/test_emit_layout.py checks ncnn against ONNX) name
model-stat's counting rules, the aten rules, the ONNX door's rule files and op_cases' family
modules (`<prefix>_<family>`), and none of them is a drawer."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from pnnx_op_cases.registry import _families_with_ops, _import_families
from pnnx_reference.emit.ncnn import lower as _ncnn  # noqa: F401  (registers every ncnn lowering)
from pnnx_reference.emit.ncnn.registry import LOWERINGS as NCNN
from pnnx_reference.emit.onnx import lower as _onnx  # noqa: F401  (registers every ONNX lowering)
from pnnx_reference.emit.onnx.registry import COMPLEX_LOWERINGS as ONNX_COMPLEX
from pnnx_reference.emit.onnx.registry import LOWERINGS as ONNX
from pnnx_reference.frontends.aten import RULES as ATEN
from pnnx_reference.frontends.onnx.rules import RULES as ONNX_DOOR
from pnnx_reference.stat import families as _stat  # noqa: F401  (registers every counting rule)
from pnnx_reference.stat.registry import COUNTS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "pnnx_reference"
EMITTER_FAMILIES = {p.stem for emitter in ("ncnn", "onnx") for p in (PACKAGE / "emit" / emitter / "families").glob("*.py")
                    if p.stem != "__init__"}
DOOR_RULES = PACKAGE / "frontends" / "onnx" / "rules"
DOOR_ONLY = {"control", "loss"}           # ONNX operators with no PyTorch operator family of their own
DOOR_HELPERS = {"__init__", "registry", "operands"}
CASE_FAMILIES = ROOT / "op_cases" / "pnnx_op_cases" / "families"
CROSS_CUTTING = {"batch_axes", "dynamic_shapes"}   # variants of other families' operators
CASE_HELPERS = {"__init__", "F_Tensor_torch_kit"}
PREFIXES = ("F", "Tensor", "nn", "torch", "onnx", "torchvision")
DRAWER_WORDS = ("misc", "extra", "composite", "other", "util", "helper", "common", "general", "stuff")


def _file(rule) -> str:
    return Path(rule.fn.__code__.co_filename).stem


def _emitter_families(op: str) -> set[str]:
    return {_file(registry.lookup(op)) for registry in (NCNN, ONNX, ONNX_COMPLEX) if registry.lookup(op)}


def _door_family(op: str) -> str | None:
    rule = ONNX_DOOR.lookup(op[len("onnx."):])
    return _file(rule) if rule else None


def test_every_counting_rule_lives_in_its_operators_family():
    apart = sorted(f"{rule.key}: {rule.where}" for rule in COUNTS.rules()
                   if _emitter_families(rule.key) and _file(rule) not in _emitter_families(rule.key))
    assert not apart


def test_every_aten_rule_lives_in_the_family_of_what_it_writes():
    produced = [(rule, op) for rule in ATEN.rules() for op in rule.traits.get("produces") or ()]
    assert len(produced) > 50
    apart = sorted(f"{rule.key} -> {op}: {rule.where}" for rule, op in produced
                   if _emitter_families(op) and _file(rule) not in _emitter_families(op))
    assert not apart


def test_the_onnx_door_rule_files_are_named_as_the_emitters_families():
    names = {p.stem for p in DOOR_RULES.glob("*.py")}
    assert {"conv", "rnn", "fft", "resize"} <= names
    assert names - DOOR_HELPERS - DOOR_ONLY <= EMITTER_FAMILIES


def _case_modules() -> dict[str, list[tuple[str, set[str]]]]:
    """op_cases family module -> (function, the rows it registers) per family function."""
    _import_families()
    found: dict[str, list[tuple[str, set[str]]]] = {}
    for fn, ops in _families_with_ops().items():
        found.setdefault(fn.__module__.rsplit(".", 1)[-1], []).append((fn.__qualname__, ops))
    return found


def _family_of(ops: set[str]) -> str | None:
    """The family most of `ops` are lowered (or, for onnx.* rows, read) in; ties: the first by name."""
    counts = Counter(f for op in sorted(ops)
                     for f in ([_door_family(op)] if op.startswith("onnx.") else sorted(_emitter_families(op))[:1]) if f)
    if not counts:
        return None
    best = max(counts.values())
    return min(f for f, n in counts.items() if n == best)


def test_op_case_modules_are_named_prefix_family():
    modules = set(_case_modules()) - CROSS_CUTTING
    assert len(modules) > 50
    door_families = {p.stem for p in DOOR_RULES.glob("*.py")} - DOOR_HELPERS
    badly_named = sorted(m for m in modules if m.split("_", 1)[0] not in PREFIXES
                         or m.split("_", 1)[1] not in EMITTER_FAMILIES | door_families)
    assert not badly_named


def test_each_case_family_lives_with_its_operators_family():
    """A family function is in `<prefix>_<family>` for the family most of its rows lower in
    (rows no emitter lowers by name, lazy modules for instance, stay where their module says)."""
    misplaced = sorted(f"{module}.{name} ({sorted(ops)[:3]}...): {module.split('_', 1)[0]}_{family}"
                       for module, functions in _case_modules().items() if module not in CROSS_CUTTING
                       for name, ops in functions
                       if (family := _family_of(ops)) is not None and module != f"{module.split('_', 1)[0]}_{family}")
    assert not misplaced


def _relative_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.module or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
            for alias in node.names}


@pytest.mark.parametrize("folder, shared", [(DOOR_RULES, DOOR_HELPERS), (PACKAGE / "stat" / "families", {"__init__"}),
                                            (PACKAGE / "frontends" / "aten" / "families", {"__init__"})],
                         ids=lambda v: v.parent.name + "/" + v.name if isinstance(v, Path) else "")
def test_no_rule_family_imports_another(folder, shared):
    """What several families share lives in a helper module (the ONNX door's operands.py)."""
    families = {p.stem for p in folder.glob("*.py")} - shared
    assert families
    assert not {p.stem: _relative_imports(p) & families for p in folder.glob("*.py")
                if p.stem in families and _relative_imports(p) & families}


@pytest.mark.parametrize("folder", [DOOR_RULES, CASE_FAMILIES, PACKAGE / "stat" / "families",
                                    PACKAGE / "frontends" / "aten" / "families"], ids=lambda p: p.parent.name + "/" + p.name)
def test_no_drawer_modules(folder):
    names = [p.stem for p in folder.glob("*.py") if p.stem not in CASE_HELPERS]
    assert names
    assert not [n for n in names if any(word in n.lower() for word in DRAWER_WORDS)]


def test_the_family_of_a_case_function_is_its_majority():
    assert _family_of({"torch.matmul", "torch.mm", "torch.det"}) == "matmul"
    assert _family_of({"onnx.LSTM"}) == "rnn"
    assert _family_of({"nn.LazyLinear"}) is None
