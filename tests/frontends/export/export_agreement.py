"""Shared by the agreement test and its summary: one op case through the `.pt2` door
(torch.export.export, torch.export.save, load, our export frontend) and the Python-API door."""
from __future__ import annotations

import io

import torch

from param_lines import normalised_param
from pnnx_reference.api import capture
from pnnx_reference.errors import PnnxError
from pnnx_reference.frontends.export import export_program
from pnnx_reference.frontends.export.refusal import quiet


class NoDoor(Exception):
    """The case has no .pt2 door: torch.export refuses it or cannot save it (torch's limits;
    an exception of our own capture is not one of these and fails the test)."""


def exported(case, decompose: bool = False):
    """The case exported and round-tripped through a .pt2 archive."""
    try:
        program = export_program(case.make_model().eval(), tuple(case.make_inputs()))
    except PnnxError as err:
        raise NoDoor(str(err)) from None
    with quiet():
        if decompose:
            program = program.run_decompositions()
        buffer = io.BytesIO()
        try:
            torch.export.save(program, buffer)
        except Exception as err:  # torch exports it but cannot serialise it
            raise NoDoor(f"torch.export.save: {type(err).__name__}: {str(err).splitlines()[0]}") from None
        buffer.seek(0)
        return torch.export.load(buffer)


def both_doors(case, decompose: bool = False):
    """(python-door lines, .pt2-door lines); NoDoor when torch gives no .pt2 door."""
    python_graph = capture(case.make_model(), tuple(case.make_inputs()))
    program = exported(case, decompose)
    return normalised_param(python_graph), normalised_param(capture(program, tuple(case.make_inputs())))
