"""The tests are laid out as the source is (docs/CONVENTIONS.md, "Layout"): each folder of tests/
is one of the source's packages or folders, or one of the few cross-cutting areas named here,
so an emitter's or a door's tests are found by the same path as its code."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
REFERENCE = ROOT / "reference" / "pnnx_reference"

# a tests/ folder -> the source folder it mirrors
MIRRORS = {
    "emit": REFERENCE / "emit", "emit/ncnn": REFERENCE / "emit" / "ncnn",
    "emit/onnx": REFERENCE / "emit" / "onnx", "emit/python": REFERENCE / "emit" / "python",
    "frontends": REFERENCE / "frontends", "frontends/torchscript": REFERENCE / "frontends" / "torchscript",
    "frontends/export": REFERENCE / "frontends" / "export", "frontends/onnx": REFERENCE / "frontends" / "onnx",
    "formats": REFERENCE / "formats", "stat": REFERENCE / "stat",
    "op_cases": ROOT / "op_cases" / "pnnx_op_cases", "model_zoo": ROOT / "model_zoo" / "pnnx_model_zoo",
    "runtimes": ROOT / "conformance" / "pnnx_conformance" / "runtimes",
}
# folders that test a whole product or a concern across packages, and why they are not a mirror
AREAS = {
    "converter": "the converter as a user calls it: api.py, the pnnxref CLI, the Python door's capture, the passes",
    "harness": "the conformance harness as a whole (runner, workers, plug-ins, shards)",
    "reports": "the harness's report/ and certify.py: matrices, certificates, committed reports",
    "setup": "set-up, packaging, docs that must match the code, and the house rules (lint, layers, vocabulary)",
    "fuzz": "property tests of every reader across formats (tox -e fuzz runs them longer)",
    "scale": "memory bounds of the whole converter on big models",
    "common": "models and wrappers several areas share (on pytest's path), not tests",
}


DATA = {"fixtures", "regressions"}  # folders of data files beside a test, not tests


def _folders() -> set[str]:
    found = set()
    for path in TESTS.rglob("*"):
        parts = path.relative_to(TESTS).parts
        if path.is_dir() and not DATA.intersection(parts) and "__pycache__" not in parts:
            found.add(path.relative_to(TESTS).as_posix())
    return found


def test_every_tests_folder_mirrors_a_source_folder_or_is_a_named_area():
    assert sorted(_folders() - set(MIRRORS) - set(AREAS)) == []


def test_every_mirror_names_a_source_folder_that_exists():
    assert [name for name, source in MIRRORS.items() if not source.is_dir()] == []
    assert [name for name in [*MIRRORS, *AREAS] if not (TESTS / name).is_dir()] == []


def test_each_emitter_and_door_has_its_tests_folder():
    emitters = {p.name for p in (REFERENCE / "emit").iterdir() if p.is_dir() and p.name != "__pycache__"}
    doors = {p.name for p in (REFERENCE / "frontends").iterdir() if (p / "__init__.py").is_file()}
    assert emitters <= {n.split("/")[1] for n in MIRRORS if n.startswith("emit/")}
    # the Python door's capture is tested with the converter (tests/converter/), aten is the shared rule table
    assert doors - {"python", "aten"} <= {n.split("/")[1] for n in MIRRORS if n.startswith("frontends/")}
