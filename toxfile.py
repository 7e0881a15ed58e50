"""tox's inline plugin (tox loads the toxfile.py beside tox.ini): the runner `shared-virtualenv`.

tox.ini's environments (unit, conformance, fuzz) share one virtualenv, `{toxworkdir}/env`:
torch alone is several GB and their dependencies are the same. tox 4 records in the folder's
`.tox-info.json` which environment built it (`{"name": ..., "type": ...}`) and rebuilds the
folder whenever another environment runs in it, so `./run.sh tests` after `./run.sh conformance`
reinstalled everything. This runner is tox's virtualenv runner with one difference: a folder
that a virtualenv runner of another environment built counts as this environment's own. The
interpreter and the dependencies are still compared as usual (`Python`, `PythonRun` in the
same file), so a changed requirements file still reinstalls, and `--recreate` still rebuilds.
"""
from __future__ import annotations

from contextlib import contextmanager

from tox.plugin import impl
from tox.tox_env.api import ToxEnv
from tox.tox_env.info import Info
from tox.tox_env.python.virtual_env.runner import VirtualEnvRunner

SHARED_RUNNER = "shared-virtualenv"
VIRTUALENV_TYPES = {VirtualEnvRunner.__name__}  # filled in below with the shared runner's


class SharedInfo(Info):
    """`.tox-info.json` of a shared folder: the record of which environment built it matches
    any environment of a virtualenv runner."""

    @contextmanager
    def compare(self, value, section, sub_section=None):
        old = self._content.get(section)
        if section == ToxEnv.__name__ and sub_section is None and isinstance(old, dict) \
                and old.get("type") in VIRTUALENV_TYPES and value.get("type") in VIRTUALENV_TYPES:
            yield True, old
            return
        with super().compare(value, section, sub_section) as outcome:
            yield outcome


class SharedVirtualEnvRunner(VirtualEnvRunner):
    @staticmethod
    def id() -> str:
        return SHARED_RUNNER

    @property
    def cache(self) -> Info:
        return SharedInfo(self.env_dir)


VIRTUALENV_TYPES.add(SharedVirtualEnvRunner.__name__)


@impl
def tox_register_tox_env(register) -> None:
    register.add_run_env(SharedVirtualEnvRunner)
