"""`OnnxModule`: an ONNX graph rebuilt as an `nn.Module` whose forward replays each node
through the Python API (one rule per op type, `rules/`), so the Python-API tracer records
PyTorch-level operators: a Conv with constant weights runs a real `nn.Conv2d` submodule,
an Add runs `a + b`, a Reshape fed by shape arithmetic runs `x.reshape([size(@0,0), -1])`.

Building it: nodes that read only constants (initializers, Constant nodes, what is computed
from them) are evaluated once here and their results kept as buffers; then one untraced run
on example inputs makes each node's submodules and gathers every node no rule can map, so a
model is refused with all of them named at once, before anything is written."""
from __future__ import annotations

import numpy as np
import onnx
import torch
import torch.nn as nn

from ...errors import ConstantInputsNeeded, ConstantNeeded, ConversionError, PnnxError, Unsupported
from . import fusions
from . import values as V
from .node import Ctx, Node, identifier, parse_node, subgraphs, tensor_of
from .reader import default_opset
from .rules import RULES


class OnnxModule(nn.Module):
    def __init__(self, proto: onnx.ModelProto, what: str = "<ModelProto>"):
        super().__init__()
        graph = proto.graph
        self._what, self._opset = what, default_opset(proto)
        self._needed: set[str] | None = None
        self._subgraphs: dict = {}
        self._constant_names: dict[str, str] = {}  # ONNX value name -> buffer name (after folding)
        initializers = {t.name: self._tensor(t) for t in graph.initializer}
        self._input_names = [v.name for v in graph.input if v.name not in initializers]
        self._output_names = [v.name for v in graph.output]
        self._types = _declared_types(proto)
        nodes = self._parse(graph)
        self._producers = {out: node for node in nodes for out in node.outputs if out}
        constants = self._fold(nodes, initializers)
        self._nodes = fusions.apply(_live(nodes, self._output_names, constants), constants, self._output_names)
        self._register_constants(constants)

    # --- building --------------------------------------------------------------------------
    def _tensor(self, proto: onnx.TensorProto) -> torch.Tensor:
        try:
            return tensor_of(proto)
        except Unsupported as err:
            raise ConversionError(f"{self._what}: {err}") from None

    def _parse(self, graph: onnx.GraphProto) -> list[Node]:
        nodes, problems = _parse_nodes(graph, "", set())
        if problems:
            raise ConversionError(_refusal(self._what, problems))
        return nodes

    def _fold(self, nodes: list[Node], initializers: dict) -> dict[str, torch.Tensor]:
        """Evaluate every node whose inputs are all constants."""
        constants = dict(initializers)
        for node in nodes:
            rule = RULES.lookup(node.rule_key)
            typed = self._dtype_only(node, rule, constants)
            if not rule.traits.get("foldable", True) or not all(n in constants or n in typed for n in node.reads):
                continue
            inputs = [constants[n] if n in constants else typed.get(n) for n in node.inputs]
            ctx = Ctx(self, node, inputs, self._opset, folding=True, captured={n: constants[n] for n in node.captures})
            try:
                outputs = _as_list(rule.fn(ctx), node)
            except PnnxError as err:
                raise ConversionError(_refusal(self._what, [f"{node.label}: {err}"])) from None
            if any(isinstance(v, list) for v in outputs):
                continue  # a sequence is no tensor to keep: the node runs with the graph
            for name, value in zip(node.outputs, outputs):
                if name and value is not None:
                    constants[name] = self._typed(name, V.to_tensor(value))
        return constants

    def _dtype_only(self, node: Node, rule, constants: dict) -> dict[str, torch.Tensor]:
        """The inputs a rule reads only the element type of (trait `dtype_only`: CastLike's
        target), where the graph declares it: an empty tensor of that type stands for each, so
        that `CastLike(constant, x)` folds (torch.onnx's dynamo exporter types scalars so)."""
        positions = rule.traits.get("dtype_only", ())
        names = [node.inputs[i] for i in positions if i < len(node.inputs) and node.inputs[i]]
        return {n: torch.empty(0, dtype=self._types[n]) for n in names if n not in constants and n in self._types}

    def _register_constants(self, constants: dict) -> None:
        """Constants read by replayed nodes or returned by the graph become buffers, named
        after their ONNX value, so pnnx.param names them so."""
        used = {n for node in self._nodes for n in node.reads} | set(self._output_names)
        taken = set(dir(self))
        for name, tensor in constants.items():
            if name in used and name not in self._input_names:
                buffer = _unique(identifier(name, "constant"), taken)
                self.register_buffer(buffer, tensor)
                self._constant_names[name] = buffer

    def is_constant(self, name: str) -> bool:
        return name in self._constant_names

    def is_read(self, name: str) -> bool:
        """Whether a node or the graph's outputs read value `name` (while folding, before the
        live nodes are known: assumed read)."""
        nodes = self.__dict__.get("_nodes")
        return nodes is None or name in self._output_names or any(name in node.reads for node in nodes)

    def submodule(self, key: str, factory, temporary: bool = False) -> nn.Module:
        if temporary:
            return factory()
        if key not in self._modules:
            if hasattr(self, key):
                key = _unique(key, set(dir(self)))
            self.add_module(key, factory())
        return self._modules[key]

    def check(self, inputs: tuple) -> None:
        """One untraced run: make every submodule and refuse, in one line, every node that no
        rule maps with these inputs (the run goes on past each through onnx's reference
        evaluator, so one refusal does not hide the next)."""
        problems: list[str] = []
        self._needed = set()
        with torch.no_grad():
            self._run(inputs, problems)
        needed, self._needed = self._needed, None
        if problems and needed is not None and needed:
            raise ConstantInputsNeeded(_refusal(self._what, problems), sorted(needed))
        if problems:
            raise ConversionError(_refusal(self._what, problems))

    def _feeding_inputs(self, name: str) -> set[str]:
        """The graph inputs value `name` is computed from."""
        found, stack, seen = set(), [name], set()
        while stack:
            value = stack.pop()
            if value in seen:
                continue
            seen.add(value)
            if value in self._input_names:
                found.add(value)
            elif value in self._producers:
                stack.extend(self._producers[value].reads)
        return found

    # --- running ---------------------------------------------------------------------------
    def forward(self, *inputs):
        outputs = self._run(inputs, None)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _run(self, inputs: tuple, problems: list | None) -> list:
        if len(inputs) != len(self._input_names):
            raise ConversionError(f"{self._what}: the model has {len(self._input_names)} inputs, "
                                  f"{len(inputs)} given")
        env = dict(zip(self._input_names, inputs))
        env.update({name: getattr(self, buffer) for name, buffer in self._constant_names.items()})
        done = self._done_after()
        for i, node in enumerate(self._nodes):
            if not any(n not in env for n in node.reads):  # else downstream of a node that could not run (reported)
                args = [env.get(n) if n else None for n in node.inputs]
                outputs = self._replay(node, args, problems, {n: env[n] for n in node.captures})
                if outputs is not None:
                    env.update((n, v) for n, v in zip(node.outputs, outputs) if n and v is not None)
            for name in done[i]:  # as a plain forward frees them: the tracer keeps no value alive
                env.pop(name, None)
        missing = [n for n in self._output_names if n not in env]
        if missing:
            if problems:
                return []
            raise ConversionError(f"{self._what}: graph output(s) {', '.join(missing)} are computed by no node")
        sequences = [n for n in self._output_names if isinstance(env[n], list)]
        if sequences:
            raise ConversionError(f"{self._what}: graph output(s) {', '.join(sequences)} are sequences; a PNNX graph "
                                  f"returns tensors")
        return [self._typed(n, V.to_tensor(env[n])) for n in self._output_names]

    def _done_after(self) -> list[list[str]]:
        """Per node, the values no later node reads and the graph does not return."""
        last: dict[str, int] = {}
        for i, node in enumerate(self._nodes):
            for name in (*node.outputs, *node.reads, *node.inputs, *node.captures):
                if name:
                    last[name] = i
        done: list[list[str]] = [[] for _ in self._nodes]
        for name, i in last.items():
            if name not in self._output_names:
                done[i].append(name)
        return done

    def _replay(self, node: Node, args: list, problems: list | None, captured: dict | None = None):
        rule = RULES.lookup(node.rule_key)
        try:
            outputs = _as_list(rule.fn(Ctx(self, node, args, self._opset, captured=captured)), node)
        except Unsupported as err:
            if problems is None:
                raise ConversionError(_refusal(self._what, [f"{node.label}: {err}"])) from None
            problems.append(f"{node.label}: {err}")
            if self._needed is not None:
                inputs = self._feeding_inputs(err.value) if isinstance(err, ConstantNeeded) else set()
                self._needed = self._needed | inputs if inputs else None
            return _reference_outputs(node, args, self._opset)
        except PnnxError:
            raise
        except Exception as err:
            text = str(err).strip().splitlines()[0] if str(err).strip() else ""
            raise ConversionError(f"{self._what}: {node.label} failed on the example inputs: "
                                  f"{type(err).__name__}: {text}") from err
        return [self._typed(n, v) if isinstance(v, torch.Tensor) else v
                for n, v in zip(node.outputs, outputs)]

    def run_subgraph(self, graph: onnx.GraphProto, outer: dict, formal: list, prefix: str, folding: bool) -> list:
        """A subgraph (If's branch, Loop's body) run inline with `formal` bound to its inputs: its
        nodes are recorded like the graph's own (a Loop unrolls)."""
        key = (id(graph), prefix)
        if key not in self._subgraphs:
            nodes, problems = _parse_nodes(graph, prefix + "_", set())
            if problems:
                raise Unsupported("; ".join(problems))
            self._subgraphs[key] = (graph, nodes, {t.name: self._tensor(t) for t in graph.initializer})
        _, nodes, initializers = self._subgraphs[key]
        env = {**outer, **initializers, **dict(zip([v.name for v in graph.input], formal))}
        constants = set(initializers) | {n for n in outer if folding or self.is_constant(n)}
        for node in nodes:
            rule = RULES.lookup(node.rule_key)
            ctx = Ctx(self, node, [env[n] if n else None for n in node.inputs], self._opset, folding=folding,
                      captured={n: env[n] for n in node.captures}, local_constants=frozenset(constants))
            env.update((n, v) for n, v in zip(node.outputs, _as_list(rule.fn(ctx), node)) if n and v is not None)
            if all(n in constants for n in node.reads) and RULES.lookup(node.rule_key).traits.get("foldable", True):
                constants |= {n for n in node.outputs if n}
        return [V.from_tensor(env[v.name]) if v.name in constants and _small_integers(env[v.name]) else env[v.name]
                for v in graph.output]

    def _typed(self, name: str, value: torch.Tensor) -> torch.Tensor:
        """The value in the dtype the graph declares for it (ONNX types every value exactly,
        PyTorch promotes: `int / int` is float, ONNX Div of ints is int)."""
        want = self._types.get(name)
        if want is not None and value.dtype != want:
            return value.to(want)
        return value


def _parse_nodes(graph: onnx.GraphProto, prefix: str, keys: set) -> tuple[list[Node], list[str]]:
    """The graph's nodes (their submodule keys unique, prefixed inside a subgraph) and every
    node, subgraphs included, that no rule maps."""
    nodes, problems = [], []
    for i, proto in enumerate(graph.node):
        try:
            node = parse_node(proto, i)
        except Unsupported as err:
            problems.append(f"{proto.name or proto.op_type} ({proto.op_type}): {err}")
            continue
        node.key = _unique(prefix + node.key, keys)
        if RULES.lookup(node.rule_key) is None:
            problems.append(f"{node.label}: no rule")
        for sub in subgraphs(node.attrs):
            problems += _parse_nodes(sub, node.key + "_", set())[1]
        nodes.append(node)
    return nodes, problems


def _small_integers(value) -> bool:
    """An integer constant a branch returns is carried as sizes (it is most often a shape)."""
    return isinstance(value, torch.Tensor) and not value.is_floating_point() and not value.is_complex() \
        and value.numel() <= 64 and value.dtype != torch.bool


def _as_list(outputs, node: Node) -> list:
    if isinstance(outputs, (list, tuple)):
        return list(outputs)
    return [outputs]


def _declared_types(proto: onnx.ModelProto) -> dict[str, torch.dtype]:
    """Element types of the values: declared ones, and onnx's shape inference for the rest."""
    try:
        inferred = onnx.shape_inference.infer_shapes(_without_weights(proto), strict_mode=False)
    except Exception:
        inferred = proto
    out = {}
    for value in [*inferred.graph.value_info, *proto.graph.output, *proto.graph.input]:
        if value.type.WhichOneof("value") == "tensor_type" and value.type.tensor_type.elem_type in V.TORCH_DTYPES:
            out[value.name] = V.TORCH_DTYPES[value.type.tensor_type.elem_type]
    return out


WEIGHT_BYTES = 4096  # an initializer this large is a weight, never a shape or an axis list


def _without_weights(proto: onnx.ModelProto) -> onnx.ModelProto:
    """`proto` for type inference: each large initializer a graph input of its type and shape
    instead (onnx.shape_inference serialises and parses the model it is given, twice over: with
    the weights in, four copies of them at once). Small ones, which a Reshape or a Slice may
    read as constants, stay."""
    light = onnx.ModelProto(ir_version=proto.ir_version)
    light.opset_import.extend(proto.opset_import)
    light.functions.extend(proto.functions)
    graph, source = light.graph, proto.graph
    graph.name = source.name
    graph.node.extend(source.node)
    graph.input.extend(source.input)
    graph.output.extend(source.output)
    graph.value_info.extend(source.value_info)
    graph.sparse_initializer.extend(source.sparse_initializer)
    inputs = {v.name for v in source.input}
    for tensor in source.initializer:
        if tensor.ByteSize() < WEIGHT_BYTES:
            graph.initializer.append(tensor)
        elif tensor.name not in inputs:
            graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))
    return light


def _live(nodes: list[Node], outputs: list[str], constants: dict) -> list[Node]:
    """The nodes the graph outputs need and constant folding did not compute, in an order
    where each reads only what comes before it."""
    producer = {out: node for node in nodes for out in node.outputs if out}
    needed, stack, live = set(), [n for n in outputs if n not in constants], set()
    while stack:
        name = stack.pop()
        node = producer.get(name)
        if name in needed or node is None:
            continue
        needed.add(name)
        if id(node) not in live:
            live.add(id(node))
            stack.extend(n for n in node.reads if n not in constants)
    ordered, done, pending = [], set(constants), [n for n in nodes if id(n) in live]
    while pending:  # the spec asks for topological order; tolerate files that break it
        ready = [n for n in pending if all(i in done or i not in producer for i in n.reads)]
        if not ready:
            ordered.extend(pending)
            break
        for node in ready:
            done.update(o for o in node.outputs if o)
        ordered.extend(ready)
        pending = [n for n in pending if all(n is not r for r in ready)]
    return ordered


def _unique(name: str, taken: set) -> str:
    base, i = name, 1
    while name in taken or hasattr(nn.Module, name):
        name, i = f"{base}_{i}", i + 1
    taken.add(name)
    return name


def _refusal(what: str, problems: list[str]) -> str:
    count = f"{len(problems)} ONNX node{'s' if len(problems) != 1 else ''}"
    return f"{what}: {count} cannot be mapped to PyTorch: " + "; ".join(problems)


def _reference_outputs(node: Node, args: list, opset: int) -> list | None:
    """The node's outputs by onnx's reference evaluator, so the checking run can go on."""
    try:
        from onnx.reference import ReferenceEvaluator

        feeds, names = {}, []
        for i, value in enumerate(args):
            name = node.inputs[i] if value is not None else ""
            if value is not None:
                feeds[name] = V.to_tensor(value).detach().cpu().numpy()
            names.append(name)
        proto = onnx.helper.make_node(node.op_type, names, node.outputs, domain=node.domain or None,
                                      **{k: _attr_proto_value(v) for k, v in node.attrs.items()})
        graph = onnx.helper.make_graph(
            [proto], "one", [onnx.helper.make_tensor_value_info(n, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                             for n, a in feeds.items()],
            [onnx.helper.make_empty_tensor_value_info(o) for o in node.outputs if o])
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
        results = iter(ReferenceEvaluator(model).run(None, feeds))
        return [torch.from_numpy(np.array(next(results), copy=True)) if o else None for o in node.outputs]
    except Exception:
        return None


def _attr_proto_value(value):
    if isinstance(value, torch.Tensor):
        return onnx.numpy_helper.from_array(value.numpy())
    return value
