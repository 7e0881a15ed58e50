"""nn.Linear / F.linear -> InnerProduct (a vector) or Gemm (rows); nn.Bilinear / F.bilinear ->
the outer product of each row pair (BinaryOp broadcasting) then InnerProduct/Gemm."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..arithmetic import MUL
from ..context import Context
from ..inner_product import inner_product, inner_product_rows
from ..registry import LOWERINGS


@LOWERINGS.register("nn.Linear", "F.linear", batchless=True)
def linear(ctx: Context, op) -> None:
    if "weight" in op.attrs:
        weight = op.attrs["weight"].to_numpy().astype(np.float32)
    else:
        weight = ctx.constant_input(op, "weight", 1)
    if weight is None:
        raise Unsupported("linear without weight")
    if "bias" in op.attrs:
        bias = op.attrs["bias"].to_numpy().astype(np.float32)
    else:
        bias = None if op.type.startswith("nn.") else ctx.constant_input(op, "bias", 2)
    inner_product(ctx, op, op.inputs[0], weight, bias)


def _bilinear_weights(ctx: Context, op) -> tuple[np.ndarray, np.ndarray | None]:
    if op.type == "nn.Bilinear":
        bias = op.attrs.get("bias")
        return op.attrs["weight"].to_numpy(), None if bias is None else bias.to_numpy()
    weight, bias = op.input("weight", 2), op.input("bias", 3)
    values = [None if operand is None else ctx.constant(operand) for operand in (weight, bias)]
    if values[0] is None or (bias is not None and values[1] is None):
        raise Unsupported("bilinear with a weight or bias computed at run time is not lowered")
    return values[0], values[1]


@LOWERINGS.register("nn.Bilinear", "F.bilinear", batchless=True)
def bilinear(ctx: Context, op) -> None:
    """y_k = x1 A_k x2 + b_k: per row the outer product x1 x2^T ((in1, 1) by (1, in2) BinaryOp
    broadcasting), flattened to in1*in2, then InnerProduct/Gemm with A_k flattened the same way."""
    x1, x2 = op.inputs[0], op.inputs[1]
    weight, bias = _bilinear_weights(ctx, op)
    out_features, in1, in2 = weight.shape
    lead = ctx.shape(x1)[:-1]
    if ctx.shape(x2)[:-1] != lead:
        raise Unsupported(f"bilinear of inputs {tuple(ctx.torch_shape(x1))} and {tuple(ctx.torch_shape(x2))} "
                          "with different leading dims is not lowered")
    out = op.outputs[0].name
    column = ctx.reshaped(ctx.blob(x1), [*lead, in1, 1], out)
    row = ctx.reshaped(ctx.blob(x2), [*lead, 1, in2], out)
    products = ctx.temp(out)
    ctx.emit("BinaryOp", "bilinear", [column, row], [products], {0: MUL})
    flat = ctx.reshaped(products, [*lead, in1 * in2], out)
    inner_product_rows(ctx, flat, [*lead, in1 * in2], out,
                       np.ascontiguousarray(weight.astype(np.float32).reshape(out_features, in1 * in2)),
                       None if bias is None else bias.astype(np.float32))
