"""One ONNX node as the rules see it: `Node` (parsed once) and `Ctx` (one application of a rule:
the node's input values, its attributes with defaults, the opset, its submodules)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from ...errors import ConstantNeeded, Unsupported
from . import values as V


@dataclass
class Node:
    op_type: str
    domain: str
    name: str                       # the ONNX name (or op_type_index when it has none)
    key: str                        # the name as a Python identifier, for its submodules
    inputs: list[str]               # "" for an omitted optional input
    outputs: list[str]
    attrs: dict = field(default_factory=dict)
    captures: list[str] = field(default_factory=list)  # outer values its subgraphs (If, Loop) read

    @property
    def reads(self) -> list[str]:
        return [n for n in self.inputs if n] + self.captures

    @property
    def rule_key(self) -> str:
        """The registry key: the op type for the default domain, `domain:op` otherwise."""
        return self.op_type if self.domain in ("", "ai.onnx") else f"{self.domain}:{self.op_type}"

    @property
    def label(self) -> str:
        return f"{self.name} ({self.rule_key})"


_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]+")


def identifier(name: str, fallback: str) -> str:
    """`/layer1/layer1.0/conv1/Conv` -> `layer1_layer1_0_conv1_Conv`."""
    text = _NOT_IDENTIFIER.sub("_", name).strip("_")
    if not text:
        text = fallback
    if text[0].isdigit():
        text = f"n{text}"
    return text


def parse_node(proto: onnx.NodeProto, index: int) -> Node:
    name = proto.name or f"{proto.op_type}_{index}"
    attrs = {a.name: attribute_value(a) for a in proto.attribute}
    captures = sorted({n for g in subgraphs(attrs) for n in outer_names(g)})
    return Node(proto.op_type, proto.domain, name, identifier(name, f"node_{index}"),
                list(proto.input), list(proto.output), attrs, captures)


def subgraphs(attrs: dict) -> list:
    return [v for v in attrs.values() if isinstance(v, onnx.GraphProto)]


def outer_names(graph: onnx.GraphProto) -> set[str]:
    """The values a subgraph reads from the scopes around it."""
    local = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    used = set()
    for node in graph.node:
        used |= {n for n in node.input if n}
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                used |= outer_names(attr.g)
        local |= {n for n in node.output if n}
    return used - local


def attribute_value(attr: onnx.AttributeProto):
    if attr.ref_attr_name:
        raise Unsupported(f"attribute {attr.name} refers to a function attribute")
    value = onnx.helper.get_attribute_value(attr)
    if attr.type == onnx.AttributeProto.TENSOR:
        return tensor_of(value)
    if attr.type == onnx.AttributeProto.STRING:
        return value.decode("utf-8", "replace")
    if attr.type == onnx.AttributeProto.STRINGS:
        return [v.decode("utf-8", "replace") for v in value]
    if attr.type in (onnx.AttributeProto.INTS, onnx.AttributeProto.FLOATS):
        return list(value)
    return value


def tensor_of(proto: onnx.TensorProto) -> torch.Tensor:
    """An initializer or Constant value as a torch tensor (external data already loaded)."""
    dtype = V.torch_dtype(proto.data_type, f"tensor {proto.name!r}" if proto.name else "tensor")
    array = numpy_helper.to_array(proto)
    if dtype == torch.bfloat16:
        return torch.from_numpy(np.asarray(array, dtype=np.float32).copy()).to(torch.bfloat16)
    return torch.from_numpy(np.array(array, copy=True)).to(dtype)


class Ctx:
    """What a rule gets: `ctx.x(i)` the input values, `ctx.attr(name, default)`, `ctx.opset`,
    `ctx.const(i)` (a constant input's tensor, or None), `ctx.ints(i)` (an input needed at
    conversion time, as Python ints), `ctx.module(factory)` (this node's submodule)."""

    def __init__(self, owner, node: Node, inputs: list, opset: int, folding: bool = False,
                 captured: dict | None = None, local_constants: frozenset = frozenset()):
        self.owner, self.node, self.inputs, self.opset, self.folding = owner, node, inputs, opset, folding
        self.captured = captured or {}
        self.local_constants = local_constants  # a subgraph's constants (its initializers, Constant nodes)

    # --- inputs --------------------------------------------------------------------------
    def x(self, i: int):
        return self.inputs[i] if i < len(self.inputs) else None

    def has(self, i: int) -> bool:
        return self.x(i) is not None

    def tensor(self, i: int) -> torch.Tensor:
        """Input i as a tensor (a ShapeValue used as data becomes one)."""
        value = self.x(i)
        if value is None:
            raise Unsupported(f"input {i} is missing")
        return V.to_tensor(value)

    def const(self, i: int) -> torch.Tensor | None:
        """The tensor of input i when it is a constant (an initializer, or computed from them)."""
        if not self.has(i):
            return None
        if self.folding:
            return self.inputs[i] if isinstance(self.inputs[i], torch.Tensor) else None
        name = self.node.inputs[i]
        known = self.owner.is_constant(name) or name in self.local_constants
        return self.inputs[i] if known and isinstance(self.inputs[i], torch.Tensor) else None

    def known(self, i: int):
        """Input i when known at conversion time: a constant tensor or a ShapeValue, else None."""
        value = self.x(i)
        if isinstance(value, V.ShapeValue):
            return value
        return self.const(i)

    def constant(self, i: int, what: str | None = None) -> torch.Tensor:
        """Input i, which the rule needs as a constant tensor (a layer's weights)."""
        const = self.const(i)
        if const is None:
            name = what or f"input {i}"
            raise ConstantNeeded(f"{name} ({self.node.inputs[i]!r}) must be a constant (an initializer or "
                                f"computed from them), it depends on the input data", self.node.inputs[i])
        return const

    def ints(self, i: int, what: str | None = None) -> list:
        """Input i as a list of ints (SymInts where they come from traced shapes)."""
        value = self.known(i)
        if value is None:
            name = what or f"input {i}"
            raise ConstantNeeded(f"{name} ({self.node.inputs[i]!r}) must be known at conversion time "
                                f"(a constant or computed from shapes), it depends on the input data",
                                self.node.inputs[i])
        items = value.tolist()
        return items if isinstance(items, list) else [items]

    def scalar(self, i: int, what: str | None = None):
        items = self.ints(i, what)
        flat = np.array(items, dtype=object).reshape(-1).tolist()
        if len(flat) != 1:
            raise Unsupported(f"{what or f'input {i}'} must hold one value, not {len(flat)}")
        return flat[0]

    # --- attributes ----------------------------------------------------------------------
    def attr(self, name: str, default=None):
        return self.node.attrs.get(name, default)

    def fail(self, message: str):
        raise Unsupported(message)

    def subgraph(self, attr: str, formal: list) -> list:
        """Run the subgraph attribute `attr` with its inputs bound to `formal`; its outputs."""
        return self.owner.run_subgraph(self.node.attrs[attr], self.captured, formal, f"{self.node.key}_{attr}",
                                       self.folding)

    # --- submodules ----------------------------------------------------------------------
    def module(self, factory, suffix: str = ""):
        """This node's submodule (made by `factory()` at the first run, reused afterwards), so
        the tracer records it whole (`nn.Conv2d`, ...)."""
        return self.owner.submodule(self.node.key + suffix, factory, temporary=self.folding)
