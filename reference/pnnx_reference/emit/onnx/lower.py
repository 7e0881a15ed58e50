"""Lowering a graph operator by operator, and a module operator (moduleop=) with a captured
body as a call of a model-local ONNX function.

The function (domain: the module's Python module, name: its class) is the body lowered with
the same lowerings. ONNX functions hold no initializers, so the body's weights are extra
function inputs fed from main-graph initializers named like the pnnx.bin entries
(`focus.conv.0.weight`); the body's small constants (shapes, axes) become Constant nodes."""
from __future__ import annotations

from onnx import FunctionProto, helper

from ...errors import Unsupported
from ...ir import Graph, Operator
from . import families  # noqa: F401  (registers every lowering)
from .builder import OnnxBuilder
from .dtypes import COMPLEX
from .registry import COMPLEX_LOWERINGS, LOWERINGS
from .unbatched import lowering

FALLBACK_DOMAIN = "pnnx.moduleop"


def lower_graph(ctx: OnnxBuilder, graph: Graph) -> list[tuple[str, str, str]]:
    """Lower every operator of `graph` into `ctx`; (type, name, reason) per one that cannot be."""
    problems = []
    for op in graph.ops:
        complex_operands = any(o.dtype in COMPLEX for o in op.inputs + op.outputs)
        fn = lower_moduleop if op.subgraph is not None else _lowering(op.type, complex_operands)
        if fn is None:
            what = " with complex operands" if complex_operands else ""
            problems.append((op.type, op.name, f"no ONNX lowering for this operator{what}"))
            continue
        ctx.op = op
        mark = ctx.checkpoint()
        try:
            fn(ctx, op)
        except Unsupported as err:
            problems.append((op.type, op.name, str(err)))
            ctx.rollback(mark)
        except KeyError as err:  # a lowering reads a parameter the operator does not carry
            problems.append((op.type, op.name, f"missing parameter {err}"))
            ctx.rollback(mark)
    return problems


def _lowering(op_type: str, complex_operands: bool):
    rule = (COMPLEX_LOWERINGS if complex_operands else LOWERINGS).lookup(op_type)
    return None if rule is None else lowering(rule)


def lower_moduleop(ctx: OnnxBuilder, op: Operator) -> None:
    body = OnnxBuilder(op.subgraph, ctx.opset, fp16=False)
    body.functions = ctx.functions  # one list, so that a nested moduleop's function keeps its name
    problems = lower_graph(body, op.subgraph)
    if problems:
        raise Unsupported("its body: " + "; ".join(f"{t} ({n}): {r}" for t, n, r in problems))
    weights = [i for i in body.initializers if not body.is_const(i.name)]
    domain, name = _function_id(op.type)
    function = _add_function(ctx, _function(body, domain, name, [w.name for w in weights]))
    ctx.domains.update(body.domains)
    ctx.domains[domain] = 1
    paths = _weight_paths(op.subgraph)
    fed = [ctx.weight(body.initializer_array(w), f"{op.name}.{paths.get(w.name, w.name)}") for w in weights]
    ctx.node(function.name, [o.name for o in op.inputs] + fed, [o.name for o in op.outputs],
           domain=domain)


def _function_id(op_type: str) -> tuple[str, str]:
    module, _, name = op_type.rpartition(".")
    return module or FALLBACK_DOMAIN, name


def _function(body: OnnxBuilder, domain: str, name: str, weights: list[str]) -> FunctionProto:
    constants = [helper.make_node("Constant", [], [i.name], value=i)
                 for i in body.initializers if body.is_const(i.name)]
    opsets = [helper.make_opsetid("", body.opset)]
    opsets += [helper.make_opsetid(d, v) for d, v in sorted(body.domains.items())]
    return helper.make_function(domain, name, [v.name for v in body.inputs] + weights,
                                [v.name for v in body.outputs], constants + body.nodes, opsets)


def _add_function(ctx: OnnxBuilder, function: FunctionProto) -> FunctionProto:
    """The model's function with this body: an existing one, or this one under a name not
    yet taken in its domain (`Focus`, `Focus_1`, ...)."""
    base, n = function.name, 0
    while True:
        same_id = [f for f in ctx.functions if (f.domain, f.name) == (function.domain, function.name)]
        if not same_id:
            ctx.functions.append(function)
            return function
        if _same_body(same_id[0], function):
            return same_id[0]
        n += 1
        function.name = f"{base}_{n}"


def _same_body(a: FunctionProto, c: FunctionProto) -> bool:
    a, c = FunctionProto.FromString(a.SerializeToString()), FunctionProto.FromString(c.SerializeToString())
    a.name = c.name = ""
    return a.SerializeToString() == c.SerializeToString()


def _weight_paths(graph: Graph) -> dict[str, str]:
    """Body initializer name -> attribute path, for `pnnx.Attribute` weights (named after
    their operand); weights of module ops are already named `<op>.<key>`."""
    return {op.outputs[0].name: op.name for op in graph.ops if op.type == "pnnx.Attribute" and op.outputs}
