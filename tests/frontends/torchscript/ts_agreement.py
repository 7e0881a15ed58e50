"""Shared by the agreement test and its summary: one op case through both frontends."""
from __future__ import annotations

import io
import warnings

import torch

from param_lines import normalised_param
from pnnx_reference.api import capture
from pnnx_reference.frontends.torchscript import rebuild


def traced(case):
    """The case traced and round-tripped through a .pt archive; None when torch.jit.trace
    refuses it (torch's limit, not ours)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            script = torch.jit.trace(case.make_model(), tuple(case.make_inputs()), check_trace=False)
        except Exception:
            return None
    buffer = io.BytesIO()
    torch.jit.save(script, buffer)
    buffer.seek(0)
    return torch.jit.load(buffer)


def both_doors(case):
    """(python-door lines, .pt-door lines), or None when the case does not trace. An
    exception of our own capture (either door) propagates: a crash is a failure, not a skip."""
    python_graph = capture(case.make_model(), tuple(case.make_inputs()))
    script = traced(case)
    if script is None:
        return None
    return normalised_param(python_graph), normalised_param(capture(rebuild(script), tuple(case.make_inputs())))
