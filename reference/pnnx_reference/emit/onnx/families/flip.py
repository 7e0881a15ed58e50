"""Elements reordered along dims: flip -> Slice with step -1, roll -> Slice + Concat."""
from __future__ import annotations

from ....errors import Unsupported
from ..builder import INT64_MAX, axis, int_list
from ..registry import LOWERINGS


@LOWERINGS.register("torch.flip", "Tensor.flip")
def flip(b, op):
    dims = [axis(d, b.rank(op.inputs[0])) for d in int_list(op.params["dims"])]
    n = len(dims)
    b.node("Slice", [b.x(op), b.const([-1] * n, hint="starts"),
                     b.const([-INT64_MAX - 1] * n, hint="ends"), b.const(dims, hint="axes"),
                     b.const([-1] * n, hint="steps")], b.y(op))


@LOWERINGS.register("torch.roll", "Tensor.roll")
def roll(b, op):
    """Per rolled dim: the last `shift` elements moved to the front (Slice, Slice, Concat)."""
    shape = b.shape(op.inputs[0])
    shifts, dims = int_list(op.params.get("shifts")), int_list(op.params.get("dims"))
    if not dims or len(shifts) != len(dims) or any(shape[d] < 0 for d in dims):
        raise Unsupported("roll needs dims and static sizes (the flattened form is not lowered)")
    current = b.x(op)
    for k, (shift, dim) in enumerate(zip(shifts, dims)):
        dim = axis(dim, len(shape))
        n = shape[dim]
        cut = (n - shift % n) % n
        out = b.y(op) if k == len(dims) - 1 else 1
        if cut == 0:
            current = b.node("Identity", [current], out)
            continue
        axes = b.const([dim], hint="axes")
        tail = b.node("Slice", [current, b.const([cut], hint="starts"),
                                b.const([n], hint="ends"), axes])
        head = b.node("Slice", [current, b.const([0], hint="starts"),
                                b.const([cut], hint="ends"), axes])
        current = b.node("Concat", [tail, head], out, axis=dim)
