"""The blocks attention layers are built from, shared by the attention and transformer families:
Q/K/V input projections, a sub-module's linear projection, and the (S, B, E) <-> batch-major
transposes around a layer that is not batch_first."""
from __future__ import annotations


def in_projection(b, op, names: list[str], prefix: str, e: int) -> list[str]:
    """Q, K, V projections of batch-major (B, S, E) inputs with `<prefix>in_proj_*`."""
    weight = b.attr(op, f"{prefix}in_proj_weight")
    bias_key = f"{prefix}in_proj_bias"
    bias = b.attr(op, bias_key) if bias_key in op.attrs else None
    if names[0] == names[1] == names[2]:  # self-attention: one packed projection, then Split
        packed = b.node("MatMul", [names[0], b.weight(weight.T.copy(), f"{op.name}.{prefix}in_proj_weight")])
        if bias is not None:
            packed = b.node("Add", [packed, b.weight(bias, f"{op.name}.{bias_key}")])
        return b.node("Split", [packed], 3, axis=2, num_outputs=3)
    out = []
    for i, name in enumerate(names):
        rows = slice(i * e, (i + 1) * e)
        p = b.node("MatMul", [name, b.weight(weight[rows].T.copy(), f"{op.name}.{prefix}w{'qkv'[i]}")])
        if bias is not None:
            p = b.node("Add", [p, b.weight(bias[rows], f"{op.name}.{prefix}b{'qkv'[i]}")])
        out.append(p)
    return out


def projection(b, op, x: str, prefix: str, out=1) -> str:
    """x @ W^T + b for the `<prefix>weight` / `<prefix>bias` of a sub-module."""
    weight = b.weight(b.attr(op, f"{prefix}weight").T.copy(), f"{op.name}.{prefix}weight")
    has_bias = f"{prefix}bias" in op.attrs
    y = b.node("MatMul", [x, weight], 1 if has_bias else out)
    if has_bias:
        y = b.node("Add", [y, b.attr_weight(op, f"{prefix}bias")], out)
    return y


def batch_major(b, op, names: list[str]) -> list[str]:
    """Transposes (S, B, E) inputs to batch-major, once per distinct operand."""
    if op.params.get("batch_first"):
        return names
    cache: dict[str, str] = {}
    return [cache.setdefault(n, b.node("Transpose", [n], perm=[1, 0, 2])) for n in names]


def sequence_output(b, op, y: str) -> None:
    """Name the last node's output after the op, transposing back when not batch_first.
    `y` must be the output of the last node emitted."""
    if op.params.get("batch_first"):
        b.nodes[-1].output[0] = b.y(op)
    else:
        b.node("Transpose", [y], b.y(op), perm=[1, 0, 2])
