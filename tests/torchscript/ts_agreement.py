"""Shared by the agreement test and its summary: one op case through both frontends."""
from __future__ import annotations

import io
import re
import warnings

import torch

from pnnx_reference.api import capture
from pnnx_reference.formats import pnnx_param
from pnnx_reference.frontends.torchscript import rebuild

_NAMES = re.compile(r"^(\S+)\s+\S+\s+")


def normalised_param(graph) -> list[str]:
    """The pnnx.param text with the operator-name column dropped (operands are already
    renumbered by canonicalisation)."""
    text = pnnx_param.dumps(graph)
    text = text[0] if isinstance(text, tuple) else text
    return [_NAMES.sub(r"\1 ", line) for line in text.splitlines()[2:]]


def traced(case):
    """The case traced and round-tripped through a .pt archive; None when it does not trace."""
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


def both_routes(case):
    """(python-route lines, .pt-route lines), or None when the case does not trace."""
    try:
        python_graph = capture(case.make_model(), tuple(case.make_inputs()))
    except Exception:
        return None
    script = traced(case)
    if script is None:
        return None
    return normalised_param(python_graph), normalised_param(capture(rebuild(script), tuple(case.make_inputs())))
