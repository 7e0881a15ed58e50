"""`trace(model, inputs)`: run the model once under the Tracer and return the graph."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
import torch.nn as nn

from ..errors import ConversionError, PnnxError
from ..ir import Graph, Operand
from .tracer import Tracer, iter_values


@dataclass
class Capture:
    graph: Graph
    values: dict[Operand, object] = field(default_factory=dict)


def _as_tuple(inputs) -> tuple:
    if isinstance(inputs, torch.Tensor):
        return (inputs,)
    if isinstance(inputs, (list, tuple)):
        return tuple(inputs)
    raise ConversionError(f"inputs must be a tensor or a tuple of tensors, not {type(inputs).__name__}")


def trace(model: nn.Module, inputs, *, moduleop=()) -> Capture:
    """Record `model(*inputs)` as a Graph of Python-API operators."""
    if not isinstance(model, nn.Module):
        raise ConversionError(f"the model must be a torch.nn.Module, not {type(model).__name__}")
    args = _as_tuple(inputs)
    tracer = Tracer(model, tuple(moduleop))
    try:
        for i, tensor in enumerate(t for t in iter_values(args) if isinstance(t, torch.Tensor)):
            tracer.add_input(tensor, i)
        with torch.no_grad(), tracer:
            output = model(*args)
        for i, tensor in enumerate(t for t in iter_values(output) if isinstance(t, torch.Tensor)):
            tracer.add_output(tensor, i)
    except PnnxError:
        raise
    except Exception as err:  # the user's model failed on the example inputs
        raise ConversionError(f"the model cannot run on the given inputs: {type(err).__name__}: "
                              f"{str(err).splitlines()[0] if str(err) else ''}") from err
    finally:
        tracer.close()
    if not tracer.graph.outputs():
        raise ConversionError("the model returned no tensor")
    return Capture(tracer.graph, tracer.values)
