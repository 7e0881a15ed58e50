"""`./run.sh tests`, `./run.sh conformance` and `tox -e fuzz` share `.tox/env` without tox
rebuilding it at each switch (issue 15): tox.ini's environments run in one folder through the
runner of toxfile.py. Checked with the real tox and the real toxfile.py on a miniature project
(no dependencies to install, so seconds instead of the minutes torch takes)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_tox() -> str | None:
    local = ROOT / ".venv" / "bin" / "tox"   # where run.sh installs it
    return str(local) if local.is_file() else shutil.which("tox")


pytestmark = pytest.mark.skipif(find_tox() is None, reason="no tox: run.sh installs it in .venv")

MINI_TOX_INI = """
[tox]
skipsdist = true
[testenv]
env_dir = {toxworkdir}/shared
runner = RUNNER
skip_install = true
deps = {env:PROBE_DEPS:}
commands = python -c "print('ran')"
[testenv:a]
[testenv:b]
"""


def tox(project: Path, *args: str, workdir: Path | None = None, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOX_") and k != "VIRTUAL_ENV"}
    proc = subprocess.run([find_tox(), *args, "--workdir", str(workdir or project / "work")], cwd=project,
                          env={**clean, **env}, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def mini_project(tmp_path: Path, runner: str) -> Path:
    project = tmp_path / runner
    project.mkdir()
    (project / "tox.ini").write_text(MINI_TOX_INI.replace("RUNNER", runner))
    shutil.copy(ROOT / "toxfile.py", project / "toxfile.py")
    return project


def test_every_environment_of_tox_ini_runs_in_the_shared_folder_through_the_shared_runner(tmp_path):
    out = tox(ROOT, "config", "-e", "unit,conformance,fuzz", "-k", "env_dir", "runner", workdir=tmp_path)
    values = [line.split(" = ", 1)[1] for line in out.splitlines() if " = " in line]
    assert values == [str(tmp_path / "env"), "shared-virtualenv"] * 3


def test_switching_environments_keeps_the_shared_folder(tmp_path):
    project = mini_project(tmp_path, "shared-virtualenv")
    tox(project, "-e", "a", "--notest")
    marker = project / "work" / "shared" / "marker"
    marker.write_text("built once")
    for env in ("b", "a", "b"):
        out = tox(project, "-e", env)
        assert "recreate" not in out and "ran" in out
    assert marker.is_file()
    # the dependencies are still compared: a new one is installed, a removed one rebuilds
    out = tox(project, "-e", "a", "--notest", PROBE_DEPS="pip")
    assert "install_deps" in out and "recreate" not in out and marker.is_file()
    out = tox(project, "-e", "b", "--notest")
    assert "recreate env because" in out and not marker.is_file()


def test_without_the_shared_runner_tox_rebuilds_at_each_switch(tmp_path):
    """The control: tox's own runner (what tox.ini used before) recreates the folder."""
    project = mini_project(tmp_path, "virtualenv")
    tox(project, "-e", "a", "--notest")
    out = tox(project, "-e", "b", "--notest")
    assert "recreate env because env type changed from {'name': 'a'" in out
