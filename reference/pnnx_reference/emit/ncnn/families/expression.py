"""pnnx.Expression -> chains of BinaryOp, UnaryOp and Erf (see arithmetic.py)."""
from __future__ import annotations

from .... import expression as ex
from ..arithmetic import lower_tree
from ..context import Context, param
from ..registry import LOWERINGS


@LOWERINGS.register("pnnx.Expression", batchless=True)
def expression(ctx: Context, op) -> None:
    lower_tree(ctx, op, ex.parse(param(op, "expr")), op.inputs, op.outputs[0].name)
