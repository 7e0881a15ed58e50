"""Ints that remember where they came from: `x.size(1) // 2` stays `floor_divide(size(@0,1),2)`
so a reshape fed by shape arithmetic can keep working for other input sizes."""
from __future__ import annotations

from .literals import literal


class SymInt(int):
    """An int whose value came from a tensor's shape. `node` is a tree:
    ("size", operand, dim) or (func, child, child) with children SymInt or plain numbers.

    `guard`, when set, is called with a description before the int leaves the traced
    arithmetic (`int(n)`, `n > 0`, `n / 2`, ...): the size of a tensor whose shape depends on
    the input values (`torch.nonzero(x).size(0)`) must not silently become a constant."""

    node: tuple
    guard = None

    def __new__(cls, value: int, node: tuple, guard=None):
        obj = int.__new__(cls, value)
        obj.node = node
        obj.guard = guard
        return obj

    @property
    def value(self) -> int:
        return int.__int__(self)

    def _binary(self, other, func, value, reflected=False):
        if not isinstance(other, int) or isinstance(other, bool):
            return value
        node = (func, other, self) if reflected else (func, self, other)
        return SymInt(value, node, self.guard or getattr(other, "guard", None))

    def __add__(self, o): return self._binary(o, "add", self.value + o)
    def __radd__(self, o): return self._binary(o, "add", o + self.value, True)
    def __sub__(self, o): return self._binary(o, "sub", self.value - o)
    def __rsub__(self, o): return self._binary(o, "sub", o - self.value, True)
    def __mul__(self, o): return self._binary(o, "mul", self.value * o)
    def __rmul__(self, o): return self._binary(o, "mul", o * self.value, True)
    def __floordiv__(self, o): return self._binary(o, "floor_divide", self.value // o)
    def __rfloordiv__(self, o): return self._binary(o, "floor_divide", o // self.value, True)
    def __mod__(self, o): return self._binary(o, "remainder", self.value % o)
    def __neg__(self): return SymInt(-self.value, ("neg", self), self.guard)
    def __index__(self): return self.value
    __hash__ = int.__hash__


def _guarded(name: str):
    """int's method `name`, first asking the guard (if any) whether the value may escape."""
    base = getattr(int, name)

    def method(self, *args):
        if self.guard is not None and ARMED[0]:
            self.guard(f"{_SPELLING.get(name, name)} of a size that depends on the input values")
        return base(self.value, *args)

    method.__name__ = name
    return method


_SPELLING = {"__int__": "int()", "__float__": "float()", "__bool__": "bool()", "__truediv__": "/",
             "__rtruediv__": "/", "__eq__": "==", "__ne__": "!=", "__lt__": "<", "__le__": "<=",
             "__gt__": ">", "__ge__": ">="}
for _name in ("__int__", "__float__", "__bool__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
              "__ge__", "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__lshift__", "__rshift__",
              "__and__", "__or__", "__xor__", "__abs__", "__divmod__", "__round__", "__trunc__",
              "__floor__", "__ceil__"):
    setattr(SymInt, _name, _guarded(_name))
SymInt.__hash__ = int.__hash__

# [True] while a Tracer runs the user's code, [False] while the tracer's own code handles a
# call: only the user's code is asked to keep value-dependent sizes symbolic
ARMED = [False]


def has_symint(value) -> bool:
    if isinstance(value, SymInt):
        return True
    return isinstance(value, (list, tuple)) and any(has_symint(v) for v in value)


def operands_of(value, found: list) -> list:
    """Collect the operands a SymInt (or a list of them) reads, in first-use order."""
    if isinstance(value, SymInt):
        _walk(value.node, found)
    elif isinstance(value, (list, tuple)):
        for v in value:
            operands_of(v, found)
    return found


def _walk(node, found):
    if node[0] == "size":
        if not any(node[1] is f for f in found):
            found.append(node[1])
        return
    for child in node[1:]:
        if isinstance(child, SymInt):
            _walk(child.node, found)


def render(value, operands: list) -> str:
    """The expression text of a SymInt / list / number; `@i` indexes `operands`."""
    if isinstance(value, SymInt):
        return _render_node(value.node, operands)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(render(v, operands) for v in value) + "]"
    return literal(value)


def _render_node(node, operands):
    if node[0] == "size":
        index = next(i for i, o in enumerate(operands) if o is node[1])
        return f"size(@{index},{node[2]})"
    return f"{node[0]}(" + ",".join(render(c, operands) for c in node[1:]) + ")"
