"""aten calls on plain Python values (scripted control flow, shape arithmetic)."""
from __future__ import annotations

import operator

SCALAR_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
              "div": lambda a, b, rounding_mode=None: a / b if rounding_mode is None else a // b,
              "floordiv": operator.floordiv, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
              "gt": operator.gt, "le": operator.le, "ge": operator.ge, "__not__": operator.not_,
              "neg": operator.neg, "len": len, "__getitem__": lambda s, i: s[i], "__is__": operator.is_,
              "__isnot__": operator.is_not, "remainder": operator.mod, "floor_divide": operator.floordiv,
              "__and__": operator.and_, "__or__": operator.or_, "__contains__": operator.contains,
              "format": lambda fmt, *a: fmt.format(*a), "warn": lambda *a: None,
              "append": lambda lst, x: lst.append(x) or lst}
