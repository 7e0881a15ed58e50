"""`export_program(model, inputs)`: torch.export.export with its refusals (data-dependent
control flow, Python it cannot follow) turned into one line: the user's source line, then
torch's own reason, with torch's logging quiet while it runs."""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import torch

from ...errors import ConversionError

_TORCH = Path(torch.__file__).resolve().parent
_OURS = Path(__file__).resolve().parents[2]


def export_program(model, inputs: tuple, dynamic_shapes=None):
    """The ExportedProgram of `model(*inputs)`; ConversionError when torch.export refuses it."""
    with quiet():
        try:
            return torch.export.export(model, tuple(inputs), dynamic_shapes=dynamic_shapes)
        except Exception as err:  # torch's refusal, with its long explanation
            raise ConversionError(refusal_line(err)) from None


@contextlib.contextmanager
def quiet():
    """torch.export logs graphs and guards (some straight to the stderr it found at import);
    a conversion prints one line: its stderr goes to a scratch file meanwhile."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as scratch, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            os.dup2(scratch.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)
        logging.disable(previous)


def refusal_line(err: BaseException) -> str:
    """`file:line: torch.export refused the model: <torch's reason> (in `<source>`)`."""
    reason = next((line.strip() for line in str(err).splitlines() if line.strip()), type(err).__name__)
    frame = user_frame(err)
    if frame is None:
        return f"torch.export refused the model: {reason}"
    source = f" (in `{frame.line.strip()}`)" if frame.line else ""
    return f"{frame.filename}:{frame.lineno}: torch.export refused the model: {reason}{source}"


def user_frame(err: BaseException):
    """The innermost traceback frame in the user's code (neither torch's nor ours)."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if _is_user(f.filename)]
    return frames[-1] if frames else None


def _is_user(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    path = Path(filename).resolve()
    return not (path.is_relative_to(_TORCH) or path.is_relative_to(_OURS)
                or "site-packages" in path.parts and path.parts[path.parts.index("site-packages") + 1:][:1]
                in (("torch",), ("torchvision",), ("functorch",)))
