"""softmax(q @ k^T * scale) @ v written by hand -> one F.scaled_dot_product_attention."""
from __future__ import annotations

import math
import re

from ..ir import Graph, Operator
from .rewire import single_consumer

_MATMUL = {"torch.matmul", "Tensor.matmul"}
_SOFTMAX = {"F.softmax", "Tensor.softmax", "torch.softmax"}
_TRANSPOSE = {"Tensor.transpose", "torch.transpose"}
_SCALE = re.compile(r"^(mul|div)\(@0,([-0-9.e]+)\)$")


def _last_two_swapped(op: Operator) -> bool:
    if op.type not in _TRANSPOSE or op.inputs[0].shape is None:
        return False
    rank = len(op.inputs[0].shape)
    dims = sorted(d % rank for d in (op.params.get("dim0"), op.params.get("dim1")))
    return dims == [rank - 2, rank - 1]


def _scale_of(op: Operator) -> float | None:
    match = _SCALE.match(op.params.get("expr", "")) if op.type == "pnnx.Expression" else None
    if match is None or len(op.inputs) != 1:
        return None
    value = float(match.group(2))
    return value if match.group(1) == "mul" else 1.0 / value


def _match(qk: Operator):
    """(q, k, v, scale, ops-to-remove, final) for a matching chain starting at q @ k^T."""
    if qk.type not in _MATMUL or len(qk.inputs) != 2 or qk.inputs[1].producer is None:
        return None
    transpose = qk.inputs[1].producer
    if not _last_two_swapped(transpose) or len(transpose.outputs[0].consumers) != 1:
        return None
    nxt = single_consumer(qk.outputs[0])
    scale, chain = None, [transpose, qk]
    if nxt is not None and _scale_of(nxt) is not None:
        scale, chain = _scale_of(nxt), chain + [nxt]
        nxt = single_consumer(nxt.outputs[0])
    if nxt is None or nxt.type not in _SOFTMAX or nxt.params.get("dim") not in (-1, len(qk.outputs[0].shape) - 1):
        return None
    if nxt.params.get("dtype") is not None:
        return None
    final = single_consumer(nxt.outputs[0])
    if final is None or final.type not in _MATMUL or final.inputs[0] is not nxt.outputs[0]:
        return None
    q, k, v = qk.inputs[0], transpose.inputs[0], final.inputs[1]
    return q, k, v, (1.0 if scale is None else scale), chain + [nxt], final


def run(graph: Graph, context=None) -> bool:
    changed = False
    for op in list(graph.ops):
        if op not in graph.ops:
            continue
        found = _match(op)
        if found is None:
            continue
        q, k, v, scale, chain, final = found
        default = 1.0 / math.sqrt(q.shape[-1]) if q.shape and q.shape[-1] > 0 else None
        name = f"F.scaled_dot_product_attention_{sum(o.type.startswith('F.scaled_dot') for o in graph.ops)}"
        sdpa = graph.new_operator("F.scaled_dot_product_attention", name, before=final)
        sdpa.params.update({"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "enable_gqa": False,
                            "scale": None if default is not None and math.isclose(scale, default, rel_tol=1e-6) else scale})
        graph.connect(sdpa, inputs=[q, k, v])
        sdpa.inputnames = ["query", "key", "value"]
        out = final.outputs[0]
        for operand in list(final.inputs):
            operand.consumers.remove(final)
        final.outputs = []
        graph.ops.remove(final)
        graph.connect(sdpa, outputs=[out])
        for dead in reversed(chain):
            graph.remove_operator(dead)
        changed = True
    return changed
