"""The two distributions (issue 31): `pnnx-reference` (reference/pyproject.toml, the converter)
and `pnnx-conformance` (pyproject.toml, the suite, which the vendor plug-ins require), their declared
dependencies against the exact pins of requirements/, the `--version` of every command, one line
naming the extra when an optional package is missing, and the built converter wheel converting
resnet18 in a fresh venv."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import pnnx_conformance
import pnnx_reference

ROOT = Path(__file__).resolve().parents[2]
CONVERTER = ROOT / "reference" / "pyproject.toml"
SUITE = ROOT / "pyproject.toml"
SMALL_MODEL = textwrap.dedent("""
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)

        def forward(self, x):
            return self.conv(x).relu()
""")
SIX = ("m.pnnx.param", "m.pnnx.bin", "m_pnnx.py", "m.ncnn.param", "m.ncnn.bin", "m_ncnn.py")


def project(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))["project"]


def requirements(path: Path) -> list[Requirement]:
    table = project(path)
    extras = table.get("optional-dependencies", {})
    return [Requirement(r) for r in table["dependencies"] + [r for rs in extras.values() for r in rs]]


def pins() -> dict[str, str]:
    """requirements/*.txt: name -> the exact version the project's environments install."""
    found = {}
    for name in ("runtime.txt", "test.txt"):
        for line in (ROOT / "requirements" / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if "==" in line:
                req = Requirement(line)
                found[req.name.lower()] = next(iter(req.specifier)).version
    return found


@pytest.mark.parametrize("pyproject", [CONVERTER, SUITE], ids=["converter", "suite"])
def test_every_declared_range_holds_the_version_the_project_pins(pyproject):
    pinned = pins()
    for req in requirements(pyproject):
        if req.name.startswith("pnnx-"):
            continue
        assert req.name.lower() in pinned, f"{req} is declared but requirements/ pins no version of it"
        assert req.specifier.contains(pinned[req.name.lower()], prereleases=True), \
            f"{req}: the pinned {pinned[req.name.lower()]} lies outside the declared range"


def test_everything_the_runtime_pins_is_declared_by_a_distribution():
    declared = {r.name.lower() for p in (CONVERTER, SUITE) for r in requirements(p)}
    runtime = {n for n in pins() if f"{n}==" in (ROOT / "requirements" / "runtime.txt").read_text().lower()}
    assert runtime <= declared, f"pinned for the project but declared nowhere: {sorted(runtime - declared)}"


def test_the_converter_needs_only_torch_and_numpy():
    assert sorted(Requirement(r).name for r in project(CONVERTER)["dependencies"]) == ["numpy", "torch"]


def test_the_suite_requires_the_converter_of_its_own_version():
    assert pnnx_conformance.__version__ == pnnx_reference.__version__
    [converter] = [Requirement(r) for r in project(SUITE)["dependencies"] if r.startswith("pnnx-reference")]
    assert str(converter.specifier) == f"=={pnnx_reference.__version__}" and converter.extras == {"all"}


VENDOR_PLUGINS = sorted((ROOT / "vendors").glob("*/pyproject.toml"))


@pytest.mark.parametrize("pyproject", VENDOR_PLUGINS, ids=[p.parent.name for p in VENDOR_PLUGINS])
def test_every_vendor_plugin_requires_the_suite_of_its_own_version(pyproject):
    """A plug-in implements the suite's backend contract of this release (installed without the
    suite's dependencies by vendors/share_env.py: tests/runtimes/test_runtime_plugins.py)."""
    assert len(VENDOR_PLUGINS) >= 3  # openvino, mnn, tvm
    [suite] = [r for r in map(Requirement, project(pyproject)["dependencies"]) if r.name == "pnnx-conformance"]
    assert str(suite.specifier) == f"=={pnnx_conformance.__version__}" and not suite.extras


def test_versions_name_the_upstream_releases_the_project_pins():
    pinned = pins()
    assert pnnx_reference.TARGETS == {"pnnx": pinned["pnnx"], "ncnn": pinned["ncnn"].rsplit(".", 1)[-1]}


@pytest.mark.parametrize("module, command", [
    ("pnnx_reference", "pnnxref"), ("pnnx_reference.validate", "pnnx-validate"),
    ("pnnx_op_cases.cli", "pnnx-cases"), ("pnnx_conformance.cli", "pnnx-conformance")])
def test_every_command_prints_its_version_in_one_line(module, command):
    proc = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": "40"})
    assert proc.returncode == 0, proc.stderr
    [line] = proc.stdout.splitlines()
    assert line.startswith(f"{command} {pnnx_reference.__version__} ")
    assert f"pnnx {pnnx_reference.TARGETS['pnnx']}" in line and f"ncnn {pnnx_reference.TARGETS['ncnn']}" in line


# --- a missing optional package -------------------------------------------------------------
BLOCKED_RUN = textwrap.dedent("""
    import sys

    class Absent:  # as if these packages were not installed
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    BLOCKED = set(sys.argv[1].split(","))
    sys.meta_path.insert(0, Absent())
    from pnnx_reference.cli import main
    code = main(sys.argv[2:])
    loaded = sorted({m.split(".")[0] for m in sys.modules} & {"onnx", "onnxruntime", "ncnn", "sympy"})
    print("loaded:", ",".join(loaded))
    sys.exit(code)
""")


def run_without(packages: str, *argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKED_RUN, packages, *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_without_onnx_the_other_six_artefacts_are_written_and_one_line_names_the_extra(tmp_path):
    (tmp_path / "m.py").write_text(SMALL_MODEL)
    proc = run_without("onnx", "m.py", "inputshape=[1,3,8,8]", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "warning: onnx: writing m.pnnx.onnx needs the onnx package: pip install 'pnnx-reference[onnx]'" \
        in proc.stderr.splitlines()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "m.py") == sorted(SIX)
    assert "selfcheck: passed" in proc.stderr


def test_a_python_model_conversion_loads_no_onnxruntime_ncnn_or_sympy(tmp_path):
    (tmp_path / "m.py").write_text(SMALL_MODEL)
    proc = run_without("", "m.py", "inputshape=[1,3,8,8]", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "loaded: onnx" in proc.stdout.splitlines()  # onnx only: it writes m.pnnx.onnx


def test_the_onnx_door_without_onnx_is_one_error_line(tmp_path):
    (tmp_path / "model.onnx").write_bytes(b"\x08\x07")
    proc = run_without("onnx", "model.onnx", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: reading model.onnx needs the onnx package: pip install 'pnnx-reference[onnx]'"]


def test_python_dash_m_pnnx_reference_is_pnnxref(tmp_path):
    (tmp_path / "m.py").write_text(SMALL_MODEL)
    proc = subprocess.run([sys.executable, "-m", "pnnx_reference", "m.py", "inputshape=[1,3,8,8]", "selfcheck=0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert all((tmp_path / name).is_file() for name in (*SIX, "m.pnnx.onnx"))


def test_a_torchscript_file_calling_torchvision_without_torchvision_is_one_error_line(tmp_path):
    torch = pytest.importorskip("torch")
    ops = pytest.importorskip("torchvision.ops")

    class Boxes(torch.nn.Module):
        def forward(self, boxes, scores):
            return ops.nms(boxes, scores, 0.5)

    torch.jit.script(Boxes()).save(str(tmp_path / "nms.pt"))
    proc = run_without("torchvision", "nms.pt", "inputshape=[2,4],[2]", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == ["error: nms.pt: loading a model that calls torchvision "
                                        "operators needs the torchvision package: pip install 'pnnx-reference[vision]'"]
