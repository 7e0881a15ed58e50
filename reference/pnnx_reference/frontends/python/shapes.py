"""Ints that remember where they came from: `x.size(1) // 2` stays `floor_divide(size(@0,1),2)`
so a reshape fed by shape arithmetic can keep working for other input sizes."""
from __future__ import annotations

from .literals import literal


class SymInt(int):
    """An int whose value came from a tensor's shape. `node` is a tree:
    ("size", operand, dim) or (func, child, child) with children SymInt or plain numbers."""

    node: tuple

    def __new__(cls, value: int, node: tuple):
        obj = int.__new__(cls, value)
        obj.node = node
        return obj

    def _binary(self, other, func, value, reflected=False):
        if not isinstance(other, int) or isinstance(other, bool):
            return value
        node = (func, other, self) if reflected else (func, self, other)
        return SymInt(value, node)

    def __add__(self, o): return self._binary(o, "add", int(self) + o)
    def __radd__(self, o): return self._binary(o, "add", o + int(self), True)
    def __sub__(self, o): return self._binary(o, "sub", int(self) - o)
    def __rsub__(self, o): return self._binary(o, "sub", o - int(self), True)
    def __mul__(self, o): return self._binary(o, "mul", int(self) * o)
    def __rmul__(self, o): return self._binary(o, "mul", o * int(self), True)
    def __floordiv__(self, o): return self._binary(o, "floor_divide", int(self) // o)
    def __rfloordiv__(self, o): return self._binary(o, "floor_divide", o // int(self), True)
    def __mod__(self, o): return self._binary(o, "remainder", int(self) % o)
    def __neg__(self): return SymInt(-int(self), ("neg", self))
    def __index__(self): return int(self)
    __hash__ = int.__hash__


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
