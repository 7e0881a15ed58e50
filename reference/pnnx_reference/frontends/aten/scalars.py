"""aten calls on plain Python values (scripted control flow, shape arithmetic), by position:
`aten::sub(int a, int b)` and `aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha)` on a
traced size both arrive here."""
from __future__ import annotations

import math
import operator

import torch

SCALAR_OPS = {"add": lambda a, b, alpha=1: a + b * alpha, "sub": lambda a, b, alpha=1: a - b * alpha,
              "rsub": lambda a, b, alpha=1: b - a * alpha, "mul": operator.mul,
              "div": lambda a, b, rounding_mode=None: a / b if rounding_mode is None else a // b,
              "floordiv": operator.floordiv, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
              "gt": operator.gt, "le": operator.le, "ge": operator.ge, "__not__": operator.not_,
              "neg": operator.neg, "len": len, "__getitem__": lambda s, i: s[i], "__is__": operator.is_,
              "__isnot__": operator.is_not, "remainder": operator.mod, "floor_divide": operator.floordiv,
              "__and__": operator.and_, "__or__": operator.or_, "__contains__": operator.contains,
              "format": lambda fmt, *a: fmt.format(*a), "warn": lambda *a: None,
              "append": lambda lst, x: lst.append(x) or lst, "floor": math.floor, "ceil": math.ceil,
              "__lshift__": operator.lshift, "__rshift__": operator.rshift,
              "to": lambda value, *rest: _cast(value, rest), "detach": lambda value: value,
              "clone": lambda value, *rest: value,
              # aten::sqrt(int) -> float on a traced size (raft: corr / torch.sqrt(torch.tensor(C)))
              "sqrt": math.sqrt, "exp": math.exp, "log": math.log}


def _cast(value, arguments):
    """`aten::to` on a traced Python number (size arithmetic): the number in the dtype asked for."""
    dtype = next((a for a in arguments if isinstance(a, torch.dtype)), None)
    if dtype is None:
        return value
    if dtype.is_floating_point:
        return float(value)
    return bool(value) if dtype == torch.bool else int(value)
