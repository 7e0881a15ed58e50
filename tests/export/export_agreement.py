"""Shared by the agreement test and its summary: one op case through the `.pt2` route
(torch.export.export, save, load, our export frontend) and the Python-API route."""
from __future__ import annotations

import io
import warnings

import torch

from pnnx_reference.api import capture
from ts_agreement import normalised_param


def exported(case, decompose: bool = False):
    """The case exported and round-tripped through a .pt2 archive; None when torch.export
    refuses it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            program = torch.export.export(case.make_model().eval(), tuple(case.make_inputs()))
            if decompose:
                program = program.run_decompositions()
        except Exception:
            return None
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        buffer.seek(0)
        return torch.export.load(buffer)


def both_routes(case, decompose: bool = False):
    """(python-route lines, .pt2-route lines), or None when the case does not export or does
    not capture through the Python API."""
    try:
        python_graph = capture(case.make_model(), tuple(case.make_inputs()))
    except Exception:
        return None
    program = exported(case, decompose)
    if program is None:
        return None
    return normalised_param(python_graph), normalised_param(capture(program, tuple(case.make_inputs())))
