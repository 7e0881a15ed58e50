"""Documented counts and options are the code's (issue 33 item 14): README's case counts, the
case cap `run --help` and HARNESS.md state, the tables `--table` names, the packages and
frontends ARCHITECTURE.md and CONVENTIONS.md describe, and no machine-specific path in the docs.
Every expected value is computed from the code."""
import re
from pathlib import Path

import pytest

import pnnx_reference
from pnnx_conformance.cli import parser
from pnnx_conformance.tiers import MAX_CASES
from pnnx_op_cases.registry import all_cases, select
from pnnx_op_cases.tables import TABLES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(pnnx_reference.__file__).parent
DOCS = {name: ROOT / name for name in ("README.md", "docs/ARCHITECTURE.md", "docs/CONVENTIONS.md",
                                       "conformance/pnnx_conformance/HARNESS.md")}


def _text(name: str) -> str:
    return DOCS[name].read_text(encoding="utf-8")


def _run_help() -> str:
    sub = next(a for a in parser()._actions if a.dest == "command")
    return " ".join(sub.choices["run"].format_help().split())


def test_readme_case_counts_are_the_registrys():
    found = re.search(r"smoke tier \(([\d,]+) cases, with batch variants; full tier ([\d,]+)\)", _text("README.md"))
    assert found, "README.md no longer states the smoke and full case counts"
    assert found.groups() == (f"{len(select(tier='smoke')):,}", f"{len(all_cases()):,}")


def test_the_case_cap_is_the_one_the_code_applies():
    cap = MAX_CASES["smoke"]
    assert f"default: {cap} for an unfiltered smoke run" in _run_help()
    stated = re.findall(r"(\d+)-case", _text("conformance/pnnx_conformance/HARNESS.md"))
    assert stated and set(stated) == {str(cap)}


def test_run_help_names_every_table():
    assert " | ".join(TABLES + ("models",)) in _run_help()


def _packages(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if (p / "__init__.py").is_file())


def test_architecture_names_every_package_of_the_converter():
    text = _text("docs/ARCHITECTURE.md")
    assert [p for p in _packages(PACKAGE) if f"`{p}/" not in text] == []
    assert [p for p in _packages(PACKAGE / "frontends") if f"frontends/{p}" not in text] == []


def test_conventions_names_every_frontend():
    layout = next(line for line in _text("docs/CONVENTIONS.md").split("\n  - ") if line.startswith("`frontends/`"))
    assert [p for p in _packages(PACKAGE / "frontends") if f"`{p}/`" not in layout] == []


@pytest.mark.parametrize("name", sorted(DOCS))
def test_no_machine_specific_path(name):
    assert re.findall(r"(?<![\w.])/(?:work|home|root)/[/\w.-]*", _text(name)) == []
