"""Let a runtime's tox environment see the shared environment's packages (torch, onnx, ...).

    python vendors/share_env.py SHARED_ENV

writes `pnnx-shared-env.pth` into the running interpreter's site-packages: one line, the
shared environment's site-packages, appended to sys.path after this environment's own. The
runtime and its dependencies were installed into this environment by tox (`deps`) before this
runs, so pip never sees, upgrades or removes anything of the shared one; the shared
environment's own .pth files (its editable install of the suite) are not processed: this
environment installs the suite itself.
"""
from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

NAME = "pnnx-shared-env.pth"


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


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        raise SystemExit("usage: python vendors/share_env.py SHARED_ENV")
    share(Path(argv[0]), Path(sysconfig.get_paths()["purelib"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
