"""Tensor.unfold(dimension, size, step) (halo attention's neighbourhoods) rewritten before
lowering as what it computes: one slice per window along `dimension`, stacked at `dimension`,
and the window's `size` axis permuted last (torch's new trailing axis). The slices, the stack
and the permute then lower as any others (a rank-5 permute through the high-rank prepasses)."""
from __future__ import annotations

from ...ir import Graph, Operator

_ENDLESS = 2147483647


def _rewrite(graph: Graph, op: Operator) -> None:
    x, out = op.inputs[0], op.outputs[0]
    rank = len(x.shape)
    dim, size, step = int(op.params["dimension"]) % rank, int(op.params["size"]), int(op.params["step"])
    windows = (x.shape[dim] - size) // step + 1
    pieces = []
    for i in range(windows):
        piece = graph.new_operator("Tensor.slice", f"{op.name}_w{i}", before=op)
        piece.params.update({"dims": [dim], "starts": [i * step], "ends": [i * step + size],
                             "steps": [1], "selects": [_ENDLESS]})
        shape = list(x.shape)
        shape[dim] = size
        graph.connect(piece, inputs=[x], outputs=[graph.new_operand(f"{out.name}_w{i}", shape, x.dtype)])
        piece.inputnames = ["input"]
        pieces.append(piece.outputs[0])
    stack = graph.new_operator("torch.stack", f"{op.name}_stack", before=op)
    stacked = list(x.shape[:dim]) + [windows] + list(x.shape[dim:])
    stacked[dim + 1] = size
    graph.connect(stack, inputs=pieces, outputs=[graph.new_operand(f"{out.name}_stack", stacked, x.dtype)])
    stack.params["dim"] = dim
    stack.inputnames = ["tensors"] * len(pieces)
    permute = graph.new_operator("Tensor.permute", f"{op.name}_permute", before=op)
    permute.params["dims"] = list(range(dim + 1)) + list(range(dim + 2, rank + 1)) + [dim + 1]
    graph.connect(permute, inputs=[stack.outputs[0]],
                  outputs=[graph.new_operand(f"{out.name}_windows", out.shape, out.dtype)])
    permute.inputnames = ["input"]
    graph.replace_uses(out, permute.outputs[0])
    graph.remove_operator(op)


def unfold_as_windows(graph: Graph) -> None:
    for op in [op for op in graph.ops if op.type == "Tensor.unfold"]:
        x = op.inputs[0]
        if x.shape and all(d > 0 for d in x.shape) and op.outputs[0].shape \
                and (x.shape[int(op.params["dimension"]) % len(x.shape)] - int(op.params["size"])) >= 0 \
                and int(op.params["step"]) > 0:
            _rewrite(graph, op)
