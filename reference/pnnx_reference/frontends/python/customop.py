"""A call of a registered custom operator (`torch.ops.ns.op`, naming.is_custom_op) is one
operator of its own type; its arguments are named `arg_<i>` after their position in the
operator's schema (tensors inputs, anything else params)."""
from __future__ import annotations

import torch

from . import naming
from .recorder import Recorder, tensors_in


def record(rec: Recorder, func, args, kwargs):
    result = func(*args, **kwargs)
    schema = naming.custom_op_schema(func)
    bound = list(args) + [kwargs[a.name] for a in schema.arguments[len(args):] if a.name in kwargs]
    inputs, inputnames, params = [], [], {}
    for j, value in enumerate(bound):
        if isinstance(value, torch.Tensor):
            inputs.append(rec.operand_of(value))
            inputnames.append(f"arg_{j}")
        else:
            params[f"arg_{j}"] = rec.param(naming.custom_op_type(func), f"arg_{j}", value)
    rec.add(naming.custom_op_type(func), inputs, inputnames, params, tensors_in(result))
    return result
