"""Set up a runtime's tox environment: its plug-in, the suite and the converter, and a view of the
shared environment's packages (torch, onnx, ...).

    python vendors/share_env.py SHARED_ENV [PLUGIN]

With PLUGIN (a folder of vendors/), first installs into the running interpreter's environment the
plug-in's runtime (its dependencies less `pnnx-conformance`, under requirements/runtime.txt), then
the converter (reference/), the suite (the repository) and the plug-in, editable and without
dependencies (skipped where already installed editable from there): the plug-in requires the suite
of its version, which is on no index, and the suite's own dependencies are the shared
environment's, so pip must resolve neither. Then writes `pnnx-shared-env.pth` into the
site-packages: one line, the shared environment's site-packages, appended to sys.path after this
environment's own. pip runs while that line is absent (a rerun removes it first), so it never sees,
upgrades or removes anything of the shared environment; the shared environment's own .pth files
(its editable install of the suite) are not processed: this environment installs the suite itself.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

NAME = "pnnx-shared-env.pth"
SUITE = "pnnx-conformance"
REPO = Path(__file__).resolve().parents[1]
CONSTRAINTS = REPO / "requirements" / "runtime.txt"
EDITABLE = (REPO / "reference", REPO)  # the converter and the suite, installed before the plug-in


def site_packages(env: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / version / "site-packages"


def share(shared_env: Path, own_site: Path) -> Path:
    """Write the .pth into `own_site` that appends the shared environment's site-packages."""
    shared = site_packages(Path(shared_env).resolve())
    if not (shared / "torch").is_dir():
        raise SystemExit(f"{shared}: no torch there; build the shared environment first (./run.sh setup) "
                         f"or point PNNX_SHARED_ENV at one")
    if Path(own_site).resolve() == shared:
        raise SystemExit(f"{shared}: this is the shared environment itself; run it from a runtime's tox environment")
    pth = Path(own_site) / NAME
    pth.write_text(f"{shared}\n")
    return pth


def runtime_requirements(plugin: Path) -> list[str]:
    """The plug-in's dependencies less the suite it plugs into."""
    declared = tomllib.loads((plugin / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return [r for r in declared if _name(r) != SUITE]


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"\s*[A-Za-z0-9._-]+", requirement)[0].strip()).lower()


def installed_editable(folder: Path, own_site: Path) -> bool:
    """Whether `own_site` holds a distribution installed editable from `folder`."""
    url = Path(folder).resolve().as_uri()
    for direct_url in Path(own_site).glob("*.dist-info/direct_url.json"):
        record = json.loads(direct_url.read_text(encoding="utf-8"))
        if record.get("url") == url and record.get("dir_info", {}).get("editable"):
            return True
    return False


def install_commands(plugin: Path, own_site: Path) -> list[list[str]]:
    """The pip commands that install the plug-in's runtime, then the converter, the suite and the
    plug-in (editable, --no-deps) where not yet installed."""
    pip = [sys.executable, "-m", "pip", "install", "--no-compile"]
    commands = [pip + ["-c", str(CONSTRAINTS), *runtime_requirements(plugin)]]
    missing = [folder for folder in (*EDITABLE, Path(plugin)) if not installed_editable(folder, own_site)]
    if missing:
        commands.append(pip + ["--no-deps"] + [arg for folder in missing for arg in ("-e", str(folder))])
    return commands


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        raise SystemExit("usage: python vendors/share_env.py SHARED_ENV [PLUGIN]")
    own_site = Path(sysconfig.get_paths()["purelib"])
    if len(argv) == 2:
        (own_site / NAME).unlink(missing_ok=True)  # pip must not see the shared environment
        for command in install_commands(Path(argv[1]), own_site):
            subprocess.run(command, check=True)
    share(Path(argv[0]), own_site)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
