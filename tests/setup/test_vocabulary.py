"""One word per concept and one error class per meaning, as docs/CONVENTIONS.md's "Errors" and
"Vocabulary" sections write them down (issue 30 item 3): every error class of pnnx_reference is
defined in errors.py and is one of the glossary's, the words it replaced appear as no identifier,
the converter's code says "door" (a route is the harness's), and each harness outcome is named for
the status it records."""
from __future__ import annotations

import ast
import builtins
import re
from pathlib import Path

import pytest

from pnnx_conformance import errors as outcomes
from pnnx_conformance.results import STATUSES
from pnnx_reference import errors

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference" / "pnnx_reference"
CODE = ["reference", "conformance", "op_cases", "model_zoo", "tests", "benchmarks"]
CONVENTIONS = (ROOT / "docs" / "CONVENTIONS.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return CONVENTIONS.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table(title: str) -> list[list[str]]:
    rows = [line.split(" | ") for line in _section(title).splitlines() if line.startswith("| ")]
    return [[cell.strip(" |") for cell in row] for row in rows[1:]]  # past the heading


def _error_rows() -> dict[str, str]:
    """class name -> the names it replaces, from the Errors table."""
    return {row[0].strip("`"): row[-1] for row in _table("Errors")}


def _internal_signals() -> set[str]:
    text = _section("Errors").split("Internal signals", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"`(\w+)`", text))


def _replaced_words() -> set[str]:
    """The old class names the glossary retires (unqualified: a qualified one is the same class)."""
    return {name for cell in _error_rows().values() for name in re.findall(r"`([A-Za-z_]\w*)`", cell)}


def _python_files(*folders: str):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def _identifiers(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, ast.alias):
            yield node.asname or node.name.rsplit(".", 1)[-1]
        elif isinstance(node, ast.arg):
            yield node.arg


def _is_exception_base(base: ast.expr, ours: set[str]) -> bool:
    name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
    builtin = getattr(builtins, name, None)
    return name in ours or (isinstance(builtin, type) and issubclass(builtin, BaseException))


def _error_classes_of(path: Path, ours: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(_is_exception_base(base, ours) for base in node.bases)]


def _defined_in_errors() -> set[str]:
    return {name for name, value in vars(errors).items()
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == errors.__name__}


@pytest.mark.parametrize("package, module", [("reference", errors), ("conformance", outcomes)])
def test_every_error_class_of_a_package_is_defined_in_its_errors_py(package, module):
    ours = {name for name, value in vars(module).items() if isinstance(value, type) and issubclass(value, BaseException)}
    elsewhere = {f"{path.relative_to(ROOT)}: {name}" for path in _python_files(package)
                 if path != Path(module.__file__) for name in _error_classes_of(path, ours)}
    assert elsewhere == set()


def test_the_error_classes_are_the_glossarys_each_saying_when_it_is_raised():
    assert _defined_in_errors() == set(_error_rows()) | _internal_signals()
    undocumented = [name for name in _defined_in_errors() if not (getattr(errors, name).__doc__ or "").strip()]
    assert undocumented == []


def test_the_glossary_retires_the_old_names():
    assert {"CodegenError", "UnsupportedOperators", "UnknownOperatorType", "NeedsConstant"} <= _replaced_words()


def test_no_retired_name_is_an_identifier():
    retired = _replaced_words()
    found = sorted(f"{path.relative_to(ROOT)}: {name}" for path in _python_files(*CODE)
                   for name in set(_identifiers(ast.parse(path.read_text(encoding="utf-8")))) & retired)
    assert found == []


def test_the_checks_see_a_class_defined_outside_errors_py(tmp_path):
    """The checks above can fail: a module of its own error class, and a retired name."""
    module = tmp_path / "m.py"
    module.write_text("from pnnx_reference.errors import PnnxError\n\nclass CodegenError(PnnxError):\n    pass\n\n"
                      "class Signal(ValueError):\n    pass\n\nclass Plain:\n    pass\n")
    assert _error_classes_of(module, _defined_in_errors()) == ["CodegenError", "Signal"]
    assert "CodegenError" in set(_identifiers(ast.parse(module.read_text()))) & _replaced_words()


def _indirect_uses(tree: ast.AST, ours: set[str]):
    """Error classes taken through another module than errors.py (`from .params import NotAParam`,
    `optional.MissingPackage`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not (node.module or "").endswith("errors"):
            yield from (alias.name for alias in node.names if alias.name in ours)
        elif isinstance(node, ast.Attribute) and node.attr in ours and not (
                isinstance(node.value, ast.Name) and node.value.id == "errors"):
            yield node.attr


def test_error_classes_are_taken_from_errors_py():
    ours = _defined_in_errors()
    found = sorted(f"{path.relative_to(ROOT)}: {name}" for path in _python_files(*CODE)
                   for name in _indirect_uses(ast.parse(path.read_text(encoding="utf-8")), ours))
    assert found == []
    assert list(_indirect_uses(ast.parse("from .params import NotAParam\noptional.MissingPackage\n"
                                         "errors.MissingPackage\nfrom ..errors import NotAParam\n"), ours)) \
        == ["NotAParam", "MissingPackage"]


def test_the_converter_says_door_not_route():
    """A route is the harness's (a converter through one door); pnnx_reference knows doors."""
    found = sorted(f"{path.relative_to(ROOT)}: {name}" for path in _python_files("reference")
                   for name in set(_identifiers(ast.parse(path.read_text(encoding="utf-8"))))
                   if "route" in name.lower())
    assert found == []


def _status_word(status: str) -> str:
    """`fail-convert` -> ConvertFailed, `not-supported` -> NotSupported."""
    if status.startswith("fail-"):
        return status[len("fail-"):].title() + "Failed"
    return "".join(part.title() for part in status.split("-"))


@pytest.mark.parametrize("outcome", [cls for cls in vars(outcomes).values() if isinstance(cls, type)
                                     and issubclass(cls, outcomes.CheckOutcome) and cls is not outcomes.CheckOutcome],
                         ids=lambda cls: cls.__name__)
def test_each_harness_outcome_is_named_for_its_status(outcome):
    assert outcome.status in STATUSES
    assert outcome.__name__ == _status_word(outcome.status)
