"""torch.einsum -> Einsum (0=the equation as character codes). ncnn's Einsum knows the letters
i, j, k, l only, and loops the output's axes over them in that order: the output letters are
renamed i, j, ... in order and the summed letters follow, so at most four distinct letters and
an output of rank 1 to 4. A batch-1 axis (dropped from ncnn blobs) must be the leading letter
of every batched operand and of the output; a batchless graph keeps every axis."""
from __future__ import annotations

from collections import Counter

from .context import CannotLower, Context, param
from .registry import lowers

NCNN_LETTERS = "ijkl"


def _parse(equation: str, count: int) -> tuple[list[str], str]:
    equation = equation.replace(" ", "")
    if "." in equation:
        raise CannotLower("einsum with an ellipsis (...) is not lowered")
    lhs, arrow, rhs = equation.partition("->")
    tokens = lhs.split(",")
    if len(tokens) != count:
        raise CannotLower(f"einsum equation {equation!r} names {len(tokens)} operands, got {count}")
    if not arrow:  # implicit output: the letters seen once, sorted
        seen = Counter("".join(tokens))
        rhs = "".join(sorted(c for c, n in seen.items() if n == 1))
    return tokens, rhs


def _drop_batch(ctx: Context, op, tokens: list[str], rhs: str) -> tuple[list[str], str]:
    """Remove the batch-1 letter, which ncnn blobs do not carry."""
    if ctx.batchless:
        return tokens, rhs
    batched = [ctx.has_batch(x) for x in op.inputs]
    letter = rhs[:1]
    if not ctx.has_batch(op.outputs[0]) or not letter or any(
            b != t.startswith(letter) or letter in t[1:] for t, b in zip(tokens, batched)):
        raise CannotLower("einsum must keep the batch axis as the leading letter of every operand and of "
                          "the output: ncnn blobs have no batch axis")
    return [t[1:] if b else t for t, b in zip(tokens, batched)], rhs[1:]


def ncnn_equation(ctx: Context, op) -> str:
    tokens, rhs = _parse(str(param(op, "equation")), len(op.inputs))
    tokens, rhs = _drop_batch(ctx, op, tokens, rhs)
    if not rhs:
        raise CannotLower("einsum to a 0-d result is not lowered (ncnn Einsum writes rank 1 to 4)")
    if len(set(rhs)) != len(rhs):
        raise CannotLower(f"einsum output {rhs!r} repeats a letter")
    summed = [c for c in dict.fromkeys("".join(tokens)) if c not in rhs]
    order = list(rhs) + summed
    if len(order) > len(NCNN_LETTERS):
        raise CannotLower(f"einsum over {len(order)} distinct indices: ncnn Einsum handles at most 4")
    for token, operand in zip(tokens, op.inputs):
        if len(token) != ctx.rank(operand):
            raise CannotLower(f"einsum operand {operand.name} has rank {ctx.rank(operand)} in ncnn, "
                              f"the equation gives it {len(token)} indices")
    rename = dict(zip(order, NCNN_LETTERS))
    return ",".join("".join(rename[c] for c in t) for t in tokens) + "->" + "".join(rename[c] for c in rhs)


@lowers("torch.einsum")
def einsum(ctx: Context, op) -> None:
    equation = ncnn_equation(ctx, op)
    ctx.emit("Einsum", "einsum", [ctx.blob(x) for x in op.inputs], [op.outputs[0].name],
             {0: [ord(c) for c in equation]})
