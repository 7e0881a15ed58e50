"""Names shared by the `__init__` and `forward` renderers of one generated module."""
from __future__ import annotations

from pnnx_reference.emit.python.members import container_lines, plan_paths, render_path
from pnnx_reference.emit.python.names import Namer
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.ir import Graph, Operand, Operator, body_weight_key


class Context:
    """`owner`: the moduleop operator whose body this module is (None for `Model`). A body's
    weights are read from pnnx.bin under the prefix its constructor is given."""

    def __init__(self, graph: Graph, owner: Operator | None = None) -> None:
        self.graph = graph
        self.owner = owner
        self.classes: dict[int, str] = {}   # id(moduleop operator) -> generated class name
        self._vars = Namer("v_")
        self._members = Namer("", avoid_module_attrs=True)
        self._paths = plan_paths(graph)  # dotted names kept as container paths (members.py)
        self._members.taken.update(parts[0] for parts in self._paths.values())

    def container_lines(self) -> list[str]:
        """The `__init__` lines creating the containers of the dotted member paths."""
        return container_lines(self._paths)

    def _member(self, key, name: str) -> str:
        parts = self._paths.get(name)
        return render_path(parts) if parts is not None else self._members(key, name)

    def var(self, operand: Operand) -> str:
        """`v_<operand>` for an operand (unique per Operand object)."""
        return self._vars(id(operand), operand.name)

    def member(self, op: Operator) -> str:
        """`self.<member>` name of an nn module operator."""
        return self._member(("op", id(op)), op.name)

    def attr_member(self, op: Operator, key: str) -> str:
        """`self.<op>` name of a pnnx.Attribute's `data` tensor (`self.<op>_<key>` for another
        key). Upstream writes `self.<op>_data`; the operator's own name is the attribute path
        that capture names the operator after, so converting this file again keeps the name."""
        return self._member(("attr", id(op), key), op.name if key == "data" else f"{op.name}_{key}")

    def bin_entry(self, op: Operator, key: str) -> str:
        """The pnnx.bin entry of weight `key` of `op`, as a Python expression."""
        if self.owner is None:
            return repr(f"{op.name}.{key}")
        path = body_weight_key(op, key)
        if path not in self.owner.attrs:
            raise UnsupportedOperator(self.owner.type, self.owner.name,
                                      f"its body uses a tensor ({path}) that is not one of its "
                                      "attributes, so pnnx.bin does not hold it")
        return f"prefix + {path!r}"

    def bin_prefix(self, op: Operator) -> str:
        """The pnnx.bin entry prefix of a moduleop operator's weights, as a Python expression."""
        text = repr(f"{op.name}.")
        return text if self.owner is None else f"prefix + {text}"
