"""Read a `.pt2` file, and prepare an ExportedProgram for the tracer: its example inputs,
the rebuilt module, and a second set of inputs where the program has dynamic dimensions."""
from __future__ import annotations

from pathlib import Path

import torch
import torch.nn as nn

from ...errors import ConversionError, UsageError
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
    try:
        with quiet():  # torch logs a traceback before its own fallback reader runs
            program = torch.export.load(str(path))
    except Exception as err:  # not a .pt2 archive, a corrupt one, or one of another torch
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConversionError(f"{path}: not a loadable torch.export (.pt2) file: {first}") from None
    if not is_program(program):
        raise ConversionError(f"{path}: holds a {type(program).__name__}, not an ExportedProgram")
    return program


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

