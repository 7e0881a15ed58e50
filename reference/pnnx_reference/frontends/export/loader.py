"""Read a `.pt2` file, and prepare an ExportedProgram for the tracer: its example inputs,
the rebuilt module, and a second set of inputs where the program has dynamic dimensions."""
from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import torch
import torch.nn as nn

from ...errors import ConversionError, UsageError
from ..torchscript.loader import names_torchvision, register_torchvision_ops
from .dynamic import check_sizes, second_inputs
from .program import ProgramModule, flat_inputs
from .refusal import quiet
from .regions import inline_regions

__all__ = ["load", "is_program", "rebuild", "example_inputs", "second_inputs", "check_sizes"]


def is_program(value) -> bool:
    return isinstance(value, torch.export.ExportedProgram)


def load(path):
    """The ExportedProgram saved in `path` by `torch.export.save`."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if names_torchvision(path, lambda name: "/models/" in name and name.endswith(".json")):
        register_torchvision_ops(path)  # the program's nodes name torch.ops.torchvision.*
    logged: list[logging.LogRecord] = []
    try:
        with quiet(), _kept_records("torch.export", logged):  # torch logs the error, then its fallback's
            program = torch.export.load(str(path))
    except Exception as err:  # not a .pt2 archive, a corrupt one, or one of another torch
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if "warnings above" in first:  # torch's fallback message: the cause is what it logged
            first = _logged_cause(logged) or first
        raise ConversionError(f"{path}: not a loadable torch.export (.pt2) file: {first}") from None
    if not is_program(program):
        raise ConversionError(f"{path}: holds a {type(program).__name__}, not an ExportedProgram")
    return program


@contextlib.contextmanager
def _kept_records(name: str, records: list):
    """The records `name`'s logger emits meanwhile go to `records`, and nowhere else (logging
    stays off for every other logger, as quiet() set it)."""
    logger = logging.getLogger(name)
    previous = (logging.root.manager.disable, logger.propagate, logger.handlers)
    logging.disable(logging.NOTSET)
    logger.propagate, logger.handlers = False, [_ListHandler(records)]  # torch's own handlers print
    try:
        yield
    finally:
        logger.handlers, logger.propagate = previous[2], previous[1]
        logging.disable(previous[0])


class _ListHandler(logging.Handler):
    def __init__(self, records: list) -> None:
        super().__init__(logging.WARNING)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _logged_cause(records: list) -> str | None:
    """The first line of the first exception torch logged, or of its first message."""
    for record in records:
        if record.exc_info and record.exc_info[1] is not None:
            err = record.exc_info[1]
            return f"{type(err).__name__}: {(str(err).strip().splitlines() or [''])[0]}"
    return records[0].getMessage().strip().splitlines()[0] if records else None


def example_inputs(program) -> tuple | None:
    """The user inputs the program was exported with (saved in the `.pt2`), flat; None when
    it has none."""
    example = getattr(program, "example_inputs", None)
    if example is None:
        return None
    return flat_inputs(example)


def rebuild(program, inputs: tuple) -> nn.Module:
    """The program as an eval-mode module; standard modules are rebuilt and checked on `inputs`."""
    if not is_program(program):
        raise ConversionError(f"expected a torch.export ExportedProgram, not {type(program).__name__}")
    return ProgramModule(inline_regions(program), tuple(inputs)).eval()

