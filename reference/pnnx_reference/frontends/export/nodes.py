"""FX nodes of an ExportedProgram: their aten name, their arguments named by the operator's
schema, and plain evaluation (the values every node takes on example inputs)."""
from __future__ import annotations

import weakref

import torch
from torch._ops import OpOverload
from torch.fx.node import Node, map_arg

from ...errors import ConversionError

# Calls that check or constrain shapes and compute nothing.
CHECKS = {"_assert_tensor_metadata", "_assert_scalar", "_assert_async", "sym_constrain_range",
          "sym_constrain_range_for_size", "_functional_sym_constrain_range",
          "_functional_sym_constrain_range_for_size", "_functional_assert_async"}


def feeds_only_checks(node: Node) -> bool:
    """True for a node whose value only a check reads (`u0 >= 0` for `_assert_scalar`): it is
    not computed, since on a size that depends on the input values it would be refused."""
    return node in _check_only(node.graph)


_CHECK_ONLY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _check_only(graph) -> set:
    """The nodes whose every user is a check or such a node, found in one backward sweep (a
    recursion over users goes as deep as the graph, and revisits shared users: vit_b_16)."""
    found = _CHECK_ONLY.get(graph)
    if found is None:
        found = set()
        for node in reversed(list(graph.nodes)):
            users = list(node.users)
            if users and all(aten_name(u) in CHECKS or u in found for u in users):
                found.add(node)
        _CHECK_ONLY[graph] = found
    return found


def aten_name(node: Node) -> str | None:
    """`torch.ops.aten.convolution.default` -> "convolution" (None for anything else)."""
    target = node.target
    if node.op == "call_function" and isinstance(target, OpOverload) and target.namespace == "aten":
        return target._schema.name.split("::", 1)[1]
    return None


def named_args(node: Node, value) -> dict:
    """The node's arguments by their schema names (defaults filled in, as a TorchScript node
    has them), each Node replaced by `value(node)`."""
    kwargs = {}
    for i, argument in enumerate(node.target._schema.arguments):
        if not argument.kwarg_only and i < len(node.args):
            given = node.args[i]
        elif argument.name in node.kwargs:
            given = node.kwargs[argument.name]
        elif argument.has_default_value():
            kwargs[argument.name] = argument.default_value
            continue
        else:
            continue
        kwargs[argument.name] = map_arg(given, value)
    return kwargs


def constants(nodes: list[Node]) -> dict:
    """name -> value of every non-tensor argument the aten calls of `nodes` pass (first wins)."""
    found = {}
    for node in nodes:
        if aten_name(node) is None:
            continue
        for name, value in named_args(node, lambda n: _NODE).items():
            if not _has_node(value):
                found.setdefault(name, value)
    return found


_NODE = object()


def _has_node(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_has_node(v) for v in value)
    return value is _NODE


class Values(dict):
    """node -> the value it gave when it ran; `as_read` gives what a later call read instead,
    where an in-place call wrote the tensor in between (a mask filled by index, then passed
    to a module)."""

    def __init__(self, values: dict, reads: dict):
        super().__init__(values)
        self.reads = reads

    def as_read(self, reader: Node, node: Node):
        return self.reads.get((reader, node), self[node])


def evaluate(graph, bound: dict) -> Values:
    """node -> value for every node, running each call as torch does (no tracer). Each value is
    the one the node gave when it ran: an in-place call (`relu_` after a batch norm, `add_` of a
    residual) would change its argument's value afterwards, so what it writes is kept first,
    and what each later call read of it is kept beside (`Values.as_read`). A bound tensor
    written in place (`embedding_renorm_` of a weight) is given back its value afterwards."""
    values, kept, reads = dict(bound), {}, {}
    sharing = _Sharing(values)
    with torch._C.DisableTorchFunction(), torch.no_grad():
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            for arg in node.all_input_nodes:
                if arg in kept and isinstance(values[arg], torch.Tensor):
                    reads[node, arg] = values[arg].clone()
            args = map_arg(node.args, values.__getitem__)
            kwargs = map_arg(node.kwargs, values.__getitem__)
            for tensor in _written(node, args, kwargs):
                for other in sharing.of(tensor):
                    if other not in kept:
                        kept[other] = values[other].clone()
            try:
                values[node] = node.target(*args, **kwargs)
            except Exception as err:
                raise ConversionError(f"the exported program does not run on the example inputs at "
                                      f"{node.name} ({node.target}): {type(err).__name__}: "
                                      f"{str(err).splitlines()[0] if str(err) else ''}") from None
            sharing.add(node, values[node])
        for node, value in bound.items():  # the program's weights and the inputs stay as given
            if node in kept and isinstance(value, torch.Tensor):
                value.copy_(kept.pop(node))
    return Values({**values, **kept}, reads)


def _written(node: Node, args, kwargs) -> list:
    """The tensors an in-place or `out=` call writes (its schema marks them `Tensor(a!)`)."""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return []
    written = []
    for i, argument in enumerate(schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            value = args[i] if i < len(args) and not argument.kwarg_only else kwargs.get(argument.name)
            if isinstance(value, torch.Tensor):
                written.append(value)
    return written


class _Sharing:
    """Which nodes' tensors share a storage (a view and its base, an in-place call's result and
    its argument): all of them change when one is written."""

    def __init__(self, values: dict):
        self._values, self._by_storage = values, {}
        for node, value in values.items():
            self.add(node, value)

    def add(self, node, value) -> None:
        if isinstance(value, torch.Tensor) and value.layout == torch.strided:
            self._by_storage.setdefault(_storage(value), []).append(node)

    def of(self, tensor) -> list:
        if not isinstance(tensor, torch.Tensor) or tensor.layout != torch.strided:
            return []
        return self._by_storage.get(_storage(tensor), [])


def _storage(tensor) -> int:
    return tensor.untyped_storage().data_ptr()
