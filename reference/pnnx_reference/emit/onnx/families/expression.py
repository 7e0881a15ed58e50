"""pnnx.Expression: the lowering itself is emit/onnx/expressions.py, which the shape family shares."""
from __future__ import annotations

from ..expressions import lower_complex_expression, lower_expression
from ..registry import COMPLEX_LOWERINGS, LOWERINGS


@LOWERINGS.register("pnnx.Expression")
def expression(ctx, op):
    lower_expression(ctx, op)


@COMPLEX_LOWERINGS.register("pnnx.Expression")
def complex_expression(ctx, op):
    lower_complex_expression(ctx, op)
