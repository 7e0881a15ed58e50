"""Names shared by the `__init__` and `forward` renderers of one generated module."""
from __future__ import annotations

from pnnx_reference.emit.python.names import Namer
from pnnx_reference.ir import Graph, Operand, Operator


class Context:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._vars = Namer("v_")
        self._members = Namer("", avoid_module_attrs=True)

    def var(self, operand: Operand) -> str:
        """`v_<operand>` for an operand (unique per Operand object)."""
        return self._vars(id(operand), operand.name)

    def member(self, op: Operator) -> str:
        """`self.<member>` name of an nn module operator."""
        return self._members(("op", id(op)), op.name)

    def attr_member(self, op: Operator, key: str) -> str:
        """`self.<op>_<key>` name of a pnnx.Attribute tensor."""
        return self._members(("attr", id(op), key), f"{op.name}_{key}")
