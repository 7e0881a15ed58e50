"""The converter wheel as a user installs it (issue 31): built from reference/, installed by pip
into a fresh venv, it converts resnet18 to the seven artefacts with nothing of this checkout.

Installing torch afresh (4 GB with its CUDA libraries) would take minutes per run, so the proof
is in two parts:
1. pip resolves the wheel's declared dependencies (extra `onnx`) from this machine's wheel store
   alone (`--dry-run`, no network): what a fresh `pip install` would do;
2. the fresh venv sees exactly the dependency closure of the wheel's own metadata (the tested
   distributions of this environment, linked into one folder on its path: nothing undeclared),
   pip installs the wheel there (`--no-index`: every declared requirement must already be met),
   and the venv's own `pnnxref` converts. A dependency the metadata forgets is missing there."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
SEVEN = ("resnet18.pnnx.param", "resnet18.pnnx.bin", "resnet18_pnnx.py", "resnet18.pnnx.onnx",
         "resnet18.ncnn.param", "resnet18.ncnn.bin", "resnet18_ncnn.py")

# the three tests read one wheel, built once in one worker (tox.ini's --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]


def pip(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], capture_output=True,
                          text=True, timeout=600, **kwargs)


def build_wheel(out: Path) -> Path:
    pytest.importorskip("setuptools", reason="the wheel is built offline with this environment's setuptools")
    source = out / "source"
    shutil.copytree(ROOT / "reference", source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    proc = pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out / "wheels"), str(source))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    [wheel] = (out / "wheels").glob("pnnx_reference-*.whl")
    return wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def declared(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(name).decode("utf-8")
    return [Requirement(line.split(":", 1)[1].strip()) for line in text.splitlines() if line.startswith("Requires-Dist:")]


def wanted(reqs, extras: set[str]) -> list[Requirement]:
    """The requirements that apply on this machine with these extras (markers evaluated)."""
    env = default_environment()
    out = []
    for req in reqs:
        if req.marker is None or any(req.marker.evaluate({**env, "extra": e}) for e in extras or {""}):
            out.append(req)
    return out


def closure(reqs: list[Requirement]) -> list[metadata.Distribution]:
    """The installed distributions that `reqs` pull in, recursively, each checked against the
    range that asked for it."""
    found, todo = {}, list(reqs)
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name == "pnnx-reference":  # the wheel's own extras (`all = pnnx-reference[...]`)
            continue
        dist = metadata.distribution(req.name)
        assert req.specifier.contains(dist.version, prereleases=True), f"{req} excludes the tested {dist.version}"
        if name in found:
            continue
        found[name] = dist
        todo += wanted([Requirement(r) for r in dist.requires or []], set(req.extras))
    return list(found.values())


def link(dists, folder: Path) -> None:
    """Each distribution's top-level files, linked into `folder` (a site-packages of its own)."""
    folder.mkdir(exist_ok=True)
    for dist in dists:
        assert dist.files is not None, f"{dist.metadata['Name']}: no RECORD"
        for top in {f.parts[0] for f in dist.files if f.parts[0] != ".."}:
            target = Path(dist.locate_file(top))
            if target.exists() and not (folder / top).exists():
                (folder / top).symlink_to(target)


def local_sources() -> list[str]:
    """pip's configured indexes and find-links that lie on this machine (file:// or a folder), as
    arguments for a pip run with `--isolated` (no network source is left)."""
    proc = pip("config", "list")
    indexes, links = [], []
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("=")
        if not key.endswith(("index-url", "find-links")):
            continue
        local = [v for v in value.strip("'\"").split() if v.startswith("file://") or Path(v).exists()]
        (links if key.endswith("find-links") else indexes).extend(local)
    args = [a for v in dict.fromkeys(links) for a in ("--find-links", v)]
    indexes = list(dict.fromkeys(indexes))
    if not indexes:
        return ["--no-index", *args]
    return ["--index-url", indexes[0], *[a for v in indexes[1:] for a in ("--extra-index-url", v)], *args]


def venv(folder: Path) -> Path:
    proc = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return folder / "bin" / "python"


def site_packages(python: Path) -> Path:
    return Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def test_the_wheels_declared_dependencies_resolve_from_the_local_store_alone(tmp_path, wheel):
    python = venv(tmp_path / "venv")
    torch = f"torch=={metadata.version('torch')}"
    store = local_sources()
    probe = pip("--isolated", "--python", str(python), "install", "--dry-run", *store, torch, env=clean_env())
    if probe.returncode != 0:
        pytest.skip(f"this machine's wheel store cannot install {torch} with its dependencies "
                    f"(nothing is downloaded in tests): {probe.stderr.strip().splitlines()[-1][:200]}")
    proc = pip("--isolated", "--python", str(python), "install", "--dry-run", *store,
               "--find-links", str(wheel.parent), "pnnx-reference[onnx]", env=clean_env())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    [would] = [line for line in proc.stdout.splitlines() if line.startswith("Would install")]
    names = {canonicalize_name(w.rsplit("-", 1)[0]) for w in would.split()[2:]}
    assert {"pnnx-reference", "torch", "numpy", "onnx", "onnxruntime"} <= names


def test_the_installed_wheel_alone_converts_resnet18_to_the_seven_artefacts(tmp_path, wheel):
    torch = pytest.importorskip("torch")
    torchvision = pytest.importorskip("torchvision")
    python = venv(tmp_path / "venv")
    deps = tmp_path / "deps"
    link(closure(wanted(declared(wheel), set())), deps)
    (site_packages(python) / "declared_dependencies.pth").write_text(f"{deps}\n")
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env()

    # torch and numpy only: six artefacts, and one line naming the extra for the seventh
    proc = pip("--python", str(python), "install", "--no-index", "--find-links", str(wheel.parent),
               "pnnx-reference", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (work / "m.py").write_text("import torch.nn as nn\n\n\ndef model():\n    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())\n")
    proc = subprocess.run([str(python.parent / "pnnxref"), "m.py", "inputshape=[1,3,8,8]"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "warning: onnx: writing m.pnnx.onnx needs the onnx package: pip install 'pnnx-reference[onnx]'" \
        in proc.stderr.splitlines()
    assert not (work / "m.pnnx.onnx").exists() and (work / "m.ncnn.param").is_file()

    # with the onnx extra: all seven, from the installed wheel's own files
    link(closure(wanted(declared(wheel), {"onnx"})), deps)
    proc = pip("--python", str(python), "install", "--no-index", "--find-links", str(wheel.parent),
               "pnnx-reference[onnx]", env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import pnnx_reference; print(pnnx_reference.__file__)"], cwd=work,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(site_packages(python)), where
    model = torchvision.models.resnet18(weights=None).eval()
    torch.jit.trace(model, torch.rand(1, 3, 224, 224)).save(str(work / "resnet18.pt"))
    proc = subprocess.run([str(python.parent / "pnnxref"), "resnet18.pt", "inputshape=[1,3,224,224]"], cwd=work,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert all((work / name).is_file() for name in SEVEN), sorted(p.name for p in work.iterdir())
    assert "selfcheck: passed" in proc.stderr
    version = subprocess.run([str(python.parent / "pnnxref"), "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.startswith("pnnxref 0.") and "ncnn" in version.stdout


def test_the_wheel_holds_every_data_file_the_package_reads(tmp_path, wheel):
    """pnnx-validate reads formats/ncnn_layers.tsv and ncnn_layer_params.tsv at run time."""
    source = Path(__file__).resolve().parents[2] / "reference"
    data = {str(p.relative_to(source)) for p in (source / "pnnx_reference").rglob("*.tsv")}
    with zipfile.ZipFile(wheel) as archive:
        assert data and data <= set(archive.namelist())
