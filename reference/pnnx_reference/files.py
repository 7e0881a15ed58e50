"""Writing a set of artefacts as one step: each is written under a private staging folder
beside its target, and all of them are moved into place only once every one is complete.
A failure anywhere leaves no new file behind (and no folder this run created)."""
from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .errors import ConversionError

STAGING_PREFIX = ".pnnxref-"


@contextlib.contextmanager
def no_bytecode():
    """Import a user's or a generated .py without leaving __pycache__ beside it."""
    before = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = before


def onnx_data_path(path) -> Path:
    """The external data file of the ONNX model at `path`: `NAME.pnnx.onnx.data` beside it
    (here, not in emit/onnx: the converter names it without importing onnx)."""
    path = Path(path)
    return path.with_name(path.name + ".data")


def new_file_mode() -> int:
    """The mode `open()` gives a new file under the current umask (mkstemp gives 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _cannot_write(path, err: OSError) -> ConversionError:
    return ConversionError(f"{path}: cannot write: {err.strerror or err}")


class Staging:
    """`path(final)` -> where to write `final` for now; `commit()` moves every staged file
    that exists to its final path; leaving the `with` block by an exception removes
    everything staged. Staged files keep their final names, one staging folder per target
    folder, so files that refer to each other by relative path agree once moved."""

    def __init__(self) -> None:
        self._folders: dict[Path, Path] = {}    # target folder -> its staging folder
        self._targets: dict[Path, Path] = {}    # final path -> staged path
        self._created: list[Path] = []          # target folders this run made, outermost first
        self._stale: list[Path] = []            # files an earlier run wrote that this run does not replace

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, kind, err, tb) -> None:
        self.abort()

    def folder_of(self, final) -> Path:
        """The staging folder of `final`'s target folder (made on first use)."""
        folder = Path(os.path.abspath(final)).parent
        if folder not in self._folders:
            self._make_folder(folder)
            try:
                self._folders[folder] = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=folder))
            except OSError as err:
                raise _cannot_write(folder, err) from None
        return self._folders[folder]

    def _make_folder(self, folder: Path) -> None:
        missing = []
        for parent in (folder, *folder.parents):
            if parent.exists():
                break
            missing.append(parent)
        for parent in reversed(missing):
            try:
                parent.mkdir()
            except FileExistsError:
                continue
            except OSError as err:
                raise _cannot_write(parent, err) from None
            self._created.append(parent)

    def path(self, final) -> Path:
        final = Path(os.path.abspath(final))
        if final.is_dir():
            raise ConversionError(f"{final}: cannot write: is a folder")
        if final.exists() and not os.access(final, os.W_OK):
            raise ConversionError(f"{final}: cannot write: Permission denied")
        staged = self.folder_of(final) / final.name
        self._targets[final] = staged
        return staged

    def remove_at_commit(self, final) -> None:
        """`final` (a file an earlier run wrote) goes at commit, when this run writes no new one."""
        self._stale.append(Path(final))

    def final_of(self, staged) -> Path | None:
        """The final path of a staged file (for error messages naming what the user asked for)."""
        for final, path in self._targets.items():
            if path == Path(staged):
                return final
        return None

    def commit(self) -> list[Path]:
        """Move every staged file that was written into place; returns the final paths."""
        moved = []
        for final, staged in self._targets.items():
            if staged.exists():
                try:
                    os.replace(staged, final)
                except OSError as err:
                    raise _cannot_write(final, err) from None
                moved.append(final)
        for stale in self._stale:
            try:
                stale.unlink()
            except FileNotFoundError:
                pass
            except OSError as err:
                raise ConversionError(f"{stale}: cannot remove the stale file of an earlier run: "
                                      f"{err.strerror or err}") from None
        self._remove_staging()
        self._created.clear()
        return moved

    def abort(self) -> None:
        self._remove_staging()
        for folder in reversed(self._created):
            try:
                folder.rmdir()
            except OSError:
                pass  # something else wrote there meanwhile: it stays
        self._created.clear()

    def _remove_staging(self) -> None:
        for staging in self._folders.values():
            shutil.rmtree(staging, ignore_errors=True)
        self._folders.clear()
