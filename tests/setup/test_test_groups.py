"""`./run.sh tests` (tox.ini's unit environment) runs the tests on every core with pytest-xdist's
`--dist loadgroup` (issue 32): the tests of a module that share one costly module fixture (a
whole-network conversion, an upstream conversion, a harness run) carry one `xdist_group` mark,
so one worker runs them all and the fixture is made once per session, not once per worker."""
from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# module -> its costly fixture (module-scoped, or session-scoped and made once under a lock)
SHARED = {
    "tests/model_zoo/test_zoo_convert.py": "converted",
    "tests/harness/test_harness_shards.py": "single_and_sharded",
    "tests/harness/test_harness_one_run.py": "alone",
    "tests/frontends/onnx/test_onnx_harness.py": "results",
    "tests/emit/python/test_pycodegen_upstream.py": "upstream",
    "tests/formats/test_formats_upstream.py": "upstream",
    "tests/op_cases/test_op_cases_where.py": "answers",
    "tests/setup/test_wheel.py": "wheel",
    "tests/harness/test_harness_forkserver.py": "reference_onnx",
}


def test_the_unit_run_distributes_by_group():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    assert "--dist loadgroup" in tox["testenv:unit"]["commands"]


@pytest.mark.parametrize("path, fixture", SHARED.items(), ids=list(SHARED))
def test_every_test_sharing_a_costly_fixture_is_in_one_group(path, fixture):
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    groups = {}  # name bound to an xdist_group mark -> the group
    module_marked = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and "xdist_group" in ast.unparse(node.value):
            for target in node.targets:
                groups[ast.unparse(target)] = ast.unparse(node.value)
            module_marked |= any(ast.unparse(t) == "pytestmark" for t in node.targets)
    users = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
             and fixture in [a.arg for a in n.args.args]]
    assert users, f"no test of {path} uses {fixture}"
    for test in users:
        marked = module_marked or any(ast.unparse(d) in groups or "xdist_group" in ast.unparse(d)
                                      for d in test.decorator_list)
        assert marked, f"{path}::{test.name} uses {fixture} but is in no xdist_group"
