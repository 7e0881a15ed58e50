"""A broken import of the project's own code is a failure, not a skip (issue 33 item 15):
no test module importorskips a `pnnx_*` package."""
import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _importorskips(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "importorskip" \
                and node.args and isinstance(node.args[0], ast.Constant):
            yield node.lineno, node.args[0].value


def test_no_test_importorskips_the_projects_own_packages():
    found = [f"{path.relative_to(TESTS)}:{line}: importorskip({name!r})"
             for path in sorted(TESTS.rglob("*.py"))
             for line, name in _importorskips(ast.parse(path.read_text(encoding="utf-8")))
             if str(name).split(".")[0].startswith("pnnx_")]
    assert found == []
