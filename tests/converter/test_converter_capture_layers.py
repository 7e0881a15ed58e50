"""The Python frontend's layers (issue 30, item 4): recorder.py at the bottom, as torch.fx's
Graph is below its Tracer; the modules that decide what to record build on it, and only
trace.py drives the TorchFunctionMode (tracer.py) on top of them."""
from __future__ import annotations

import ast
from pathlib import Path

import pnnx_reference

FOLDER = Path(pnnx_reference.__file__).parent / "frontends" / "python"
# what the recorder may build on: the value-dependence tables, params, traced sizes, the
# traced values' store
BELOW = {"valuedep", "params", "shapes", "literals", "spilled"}
RECORDING = ("leaves", "getters", "getitem", "setitem", "inplace", "customop", "valuecheck", "tracer")


def _imports(name: str) -> set[str]:
    """The modules of this folder that `name` imports (at any depth of its code)."""
    found = set()
    for node in ast.walk(ast.parse((FOLDER / f"{name}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
    return found


def _closure(name: str) -> set[str]:
    seen, todo = set(), [name]
    while todo:
        for dep in _imports(todo.pop()) - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


def test_the_recorder_builds_on_no_recording_module():
    assert _closure("recorder") <= BELOW


def test_every_recording_module_builds_on_the_recorder():
    assert {name: "recorder" in _imports(name) for name in RECORDING} == {name: True for name in RECORDING}


def test_only_trace_drives_the_mode():
    users = sorted(p.stem for p in FOLDER.glob("*.py") if "tracer" in _imports(p.stem))
    assert users == ["trace"]
