"""x * rsqrt(mean(x^2, -1, keepdim) + eps) [* weight], written by hand (LLaMA, T5, Qwen, ...)
-> one F.rms_norm over the last dim.

Runs in the ncnn emitter only (its RMSNorm layer), as attention fusion does: pnnx.param keeps
the user's arithmetic. Matched only where the meaning is exactly torch's rms_norm: the mean
over the last dim of pow(x, 2) or x * x of the same x that is scaled, a literal eps inside
the rsqrt, an optional weight of the last dim's size (a constant, multiplied in the same
expression or in the next one, through dtype casts that keep float32). Anything else stays
as it was written."""
from __future__ import annotations

from .. import expression as ex
from ..ir import Graph, Operand, Operator
from .rewire import single_consumer

_CASTS = {"Tensor.to", "Tensor.float", "Tensor.type_as"}


def _call(node, func: str, nargs: int) -> bool:
    return isinstance(node, ex.Call) and node.func == func and len(node.args) == nargs


def _either(node, func: str):
    """The two argument orders of a commutative call."""
    return (node.args, node.args[::-1]) if _call(node, func, 2) else ()


def _scaled(node, x: int, mean: int) -> float | None:
    """eps of mul(@x, rsqrt(add(@mean, eps))) (either operand order), else None."""
    for a, b in _either(node, "mul"):
        if a == ex.Input(x) and _call(b, "rsqrt", 1):
            for m, eps in _either(b.args[0], "add"):
                if m == ex.Input(mean) and isinstance(eps, ex.Literal) and isinstance(eps.value, float):
                    return eps.value
    return None


def _squares(op: Operator | None, x: Operand) -> bool:
    if op is None or op.type != "pnnx.Expression" or op.inputs != [x]:
        return False
    return op.params.get("expr") in ("pow(@0,2)", "pow(@0,2.0)", "mul(@0,@0)")


def _mean_of_squares(mean: Operator) -> Operand | None:
    """x, where `mean` is mean(pow(x, 2), dim=-1, keepdim=True) and x is float32."""
    if mean.type not in ("Tensor.mean", "torch.mean") or len(mean.inputs) != 1 or mean.params.get("dtype"):
        return None
    square = mean.inputs[0].producer
    x = square.inputs[0] if square is not None and square.inputs else None
    if x is None or not x.shape or x.dtype != "f32" or not _squares(square, x):
        return None
    dims = mean.params.get("dim")
    dims = [dims] if isinstance(dims, int) else list(dims or [])
    if dims not in ([-1], [len(x.shape) - 1]) or mean.params.get("keepdim") is not True:
        return None
    return x if single_consumer(square.outputs[0]) is mean else None


def _weight(operand: Operand, size: int) -> bool:
    producer = operand.producer
    return producer is not None and producer.type == "pnnx.Attribute" and list(operand.shape or []) == [size]


def _scaled_by_weight(op: Operator, x: Operand, mean: Operand) -> tuple[float, Operand | None] | None:
    """(eps, weight or None) when `op` computes the normalisation (times a weight) of x."""
    if op.type != "pnnx.Expression" or mean not in op.inputs or x not in op.inputs:
        return None
    node = ex.parse(op.params.get("expr", ""))
    xi, mi = op.inputs.index(x), op.inputs.index(mean)
    eps = _scaled(node, xi, mi)
    if eps is not None and len(op.inputs) == 2:
        return eps, None
    for a, b in _either(node, "mul"):
        if isinstance(a, ex.Input) and len(op.inputs) == 3 and _weight(op.inputs[a.index], x.shape[-1]):
            eps = _scaled(b, xi, mi)
            if eps is not None:
                return eps, op.inputs[a.index]
    return None


def _trailing_weight(op: Operator, size: int) -> tuple[list[Operator], Operand] | None:
    """Float32-keeping casts then mul(norm, weight) after the normalisation `op`."""
    chain, nxt = [], single_consumer(op.outputs[0])
    while nxt is not None and nxt.type in _CASTS and nxt.outputs[0].dtype == "f32" and len(nxt.inputs) == 1:
        chain.append(nxt)
        nxt = single_consumer(nxt.outputs[0])
    if nxt is None or nxt.type != "pnnx.Expression" or nxt.params.get("expr") not in ("mul(@0,@1)",):
        return None
    norm = (chain[-1] if chain else op).outputs[0]
    other = [x for x in nxt.inputs if x is not norm]
    if len(other) != 1 or not _weight(other[0], size):
        return None
    return chain + [nxt], other[0]


def _match(mean: Operator):
    x = _mean_of_squares(mean)
    scale = single_consumer(mean.outputs[0]) if x is not None else None
    found = _scaled_by_weight(scale, x, mean.outputs[0]) if scale is not None else None
    if found is None:
        return None
    eps, weight = found
    chain = [mean.inputs[0].producer, mean, scale]
    if weight is None:
        tail = _trailing_weight(scale, x.shape[-1])
        if tail is not None:
            chain, weight = chain + tail[0], tail[1]
    return x, eps, weight, chain


def run(graph: Graph, context=None) -> bool:
    changed = False
    for mean in list(graph.ops):
        found = _match(mean) if mean in graph.ops else None
        if found is None:
            continue
        x, eps, weight, chain = found
        last = chain[-1].outputs[0]
        norm = graph.new_operator("F.rms_norm", f"F.rms_norm_{mean.name}", before=chain[-1])
        norm.params.update({"normalized_shape": [x.shape[-1]], "eps": eps})
        graph.connect(norm, inputs=[x] + ([weight] if weight is not None else []),
                      outputs=[graph.new_operand(f"{last.name}_rms", last.shape, last.dtype)])
        norm.inputnames = ["input", "weight"][:len(norm.inputs)]
        graph.replace_uses(last, norm.outputs[0])
        for dead in reversed(chain):
            graph.remove_operator(dead)
        changed = True
    return changed
