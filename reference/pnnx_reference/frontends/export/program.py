"""An ExportedProgram rebuilt as an `nn.Module`: the program's parameters, buffers and
constants at their original paths (so the tracer names them as the Python door does),
standard modules rebuilt whole at theirs, and a forward that walks the FX graph: a step where
several nodes fold into one call, every other aten call through the shared aten rule table."""
from __future__ import annotations

import torch
import torch.nn as nn
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from ...errors import ConversionError
from . import folds, modules, nodes as fx, self_copies
from .interpreter import run_node
from .steps import Plan


class _Holder(nn.Module):
    """A path segment (`layer1`, `0`) holding what lives below it; never called."""


class ProgramModule(nn.Module):
    """The exported program as a module whose forward replays its graph."""

    def __init__(self, program, example_inputs: tuple):
        super().__init__()
        object.__setattr__(self, "_program", program)
        graph = program.graph_module.graph
        state = {**program.state_dict, **program.constants}
        fqns = _placeholder_paths(program)
        values = fx.evaluate(graph, self._bind_placeholders(program, example_inputs, state, fqns))
        plan, shared = Plan(graph), {}
        modules.plan_modules(plan, graph, values, state, fqns, shared)
        self_copies.plan_self_copies(plan, graph)
        folds.plan_folds(plan, graph, values)
        object.__setattr__(self, "_plan", plan)
        for path, module in sorted(shared.items(), key=lambda item: item[0].count(".")):
            _place(self, path, module)
        self._place_state(program, state)
        object.__setattr__(self, "_fqns", fqns)

    def _bind_placeholders(self, program, inputs: tuple, state: dict, fqns: dict) -> dict:
        bound, user = {}, iter(inputs)
        for node in program.graph_module.graph.nodes:
            if node.op != "placeholder":
                continue
            if node in fqns:
                bound[node] = state[fqns[node]]
            else:
                bound[node] = next(user, None)
        return bound

    def _place_state(self, program, state: dict) -> None:
        """Every tensor no rebuilt module holds goes to its path: parameters as parameters,
        buffers as buffers, constants as plain attributes (named by path all the same)."""
        kinds = {spec.target: spec.kind for spec in program.graph_signature.input_specs if spec.target}
        for path, tensor in state.items():
            owner, name = _owner(self, path)
            if owner is None or hasattr(owner, name):
                continue
            kind = kinds.get(path)
            tensor = tensor.detach() if isinstance(tensor, torch.Tensor) else tensor
            if kind == InputKind.PARAMETER:
                owner.register_parameter(name, nn.Parameter(tensor, requires_grad=False))
            elif kind == InputKind.BUFFER:
                owner.register_buffer(name, tensor)
            else:
                object.__setattr__(owner, name, tensor)

    def tensor_at(self, path: str):
        value = self
        for part in path.split("."):
            value = getattr(value, part)
        return value

    def forward(self, *inputs):
        program, plan = self._program, self._plan
        env, user = {}, iter(inputs)
        for node in program.graph_module.graph.nodes:
            if node.op == "placeholder":
                env[node] = self.tensor_at(self._fqns[node]) if node in self._fqns else next(user, None)
            elif node.op == "output":
                return _user_outputs(program, node, env)
            elif node in plan.at:
                step = plan.at[node]
                env.update(zip(step.outputs, step.run([env[n] for n in step.inputs])))
            elif node not in plan.covered:
                env[node] = run_node(node, env)
        raise ConversionError("the exported program has no output")


def _placeholder_paths(program) -> dict:
    """placeholder node -> path of the parameter, buffer or constant it stands for."""
    by_name = {spec.arg.name: spec.target for spec in program.graph_signature.input_specs
               if spec.kind != InputKind.USER_INPUT and spec.target is not None}
    return {n: by_name[n.name] for n in program.graph_module.graph.nodes
            if n.op == "placeholder" and n.name in by_name}


def _user_outputs(program, node, env):
    kinds = [spec.kind for spec in program.graph_signature.output_specs]
    values = [env[n] if isinstance(n, torch.fx.Node) else n for n in node.args[0]]
    if any(k not in (OutputKind.USER_OUTPUT, OutputKind.USER_INPUT_MUTATION) for k in kinds):
        raise ConversionError("the exported program mutates its buffers (in-place update of a "
                              "parameter or buffer); export the model in eval mode without state updates")
    user = [v for v, k in zip(values, kinds) if k == OutputKind.USER_OUTPUT]
    return user[0] if len(user) == 1 else tuple(user)


def _owner(root: nn.Module, path: str):
    """The module that `path` (`layer1.0.weight`) names an attribute of, holders created on
    the way; None when a rebuilt module owns that path already."""
    *parents, name = path.split(".")
    module = root
    for part in parents:
        child = module._modules.get(part)
        if child is None:
            if hasattr(module, part):
                return None, name
            child = _Holder()
            module.add_module(part, child)
        elif not isinstance(child, _Holder):
            return None, name  # inside a rebuilt standard module: its own state
        module = child
    return module, name


def _place(root: nn.Module, path: str, module: nn.Module) -> None:
    *parents, name = path.split(".")
    owner = root
    for part in parents:
        child = owner._modules.get(part)
        if child is None:
            child = _Holder()
            owner.add_module(part, child)
        owner = child
    owner.add_module(name, module)


def flat_inputs(example) -> tuple:
    """The program's example inputs `(args, kwargs)` as the flat tuple of its user inputs."""
    if example is None:
        return ()
    leaves, _ = pytree.tree_flatten(example)
    return tuple(leaves)
