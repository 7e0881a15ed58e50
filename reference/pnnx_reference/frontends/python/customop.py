"""A call of a registered custom operator (`torch.ops.ns.op`, naming.is_custom_op) is one
operator of its own type; its arguments are named `arg_<i>` after their position in the
operator's schema (tensors inputs, anything else params)."""
from __future__ import annotations

import torch

from . import naming, torchvision_ops
from .recorder import Recorder, tensors_in


def record(rec: Recorder, func, args, kwargs):
    result = func(*args, **kwargs)
    schema = naming.custom_op_schema(func)
    bound = list(args) + [kwargs[a.name] for a in schema.arguments[len(args):] if a.name in kwargs]
    recorded = torchvision_ops.RECORDED.get(naming.custom_op_type(func))
    if recorded is not None and len(bound) == len(schema.arguments):
        return record_as_api_call(rec, recorded, dict(zip((a.name for a in schema.arguments), bound)), result)
    inputs, inputnames, params = [], [], {}
    for j, value in enumerate(bound):
        if isinstance(value, torch.Tensor):
            inputs.append(rec.operand_of(value))
            inputnames.append(f"arg_{j}")
        else:
            params[f"arg_{j}"] = rec.param(naming.custom_op_type(func), f"arg_{j}", value)
    rec.add(naming.custom_op_type(func), inputs, inputnames, params, tensors_in(result))
    return result


def record_as_api_call(rec: Recorder, recorded, args: dict, result):
    """A registered operator written as the Python API call that makes it (torchvision_ops)."""
    with rec.quiet():
        op_type, named, params = recorded(args, lambda t: rec.operand_of(t) not in rec.dynamic)
    rec.add(op_type, [rec.operand_of(t) for _, t in named], [n for n, _ in named], params, [result])
    return result
