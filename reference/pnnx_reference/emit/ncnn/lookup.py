"""Rows of a table looked up by indices that ncnn carries as float values (Embed reads int32
bits): shared by the embedding and indexing families."""
from __future__ import annotations

import numpy as np

from .arithmetic import BINARY, UNARY
from .context import Context, dims_params
from .inner_product import inner_product_rows
from .layers import Weight

# layer featmask (param 31): no fp16 storage (2), no bf16 storage (4), no vulkan (16)
KEEP_INT32_BITS = 2 | 4 | 16


def lookup_by_value(ctx: Context, operand, weight: np.ndarray, out: str) -> None:
    """Rows picked by indices that ncnn layers carry as float values (positions computed from
    the token ids, or ids that other layers read as values): a one-hot matrix
    relu(1 - |i - v|) of the n indices by the table's rows v, exact for integers, times the
    table (Gemm). The one-hot layers stay in fp32 on the CPU (an index past 2048 is not exact
    in fp16)."""
    num, dim = weight.shape
    shape = ctx.shape(operand)
    count = int(np.prod(shape)) if all(d > 0 for d in shape) else -1
    column, rows, distance = ctx.temp(out), ctx.temp(out), ctx.temp(out)
    layers = [ctx.emit("Reshape", "reshape", [ctx.blob(operand)], [column], dims_params([count, 1])),
              ctx.emit("MemoryData", "rows", [], [rows], dims_params([1, num]),
                       [Weight(np.arange(num, dtype=np.float32), tagged=False)])]
    layers.append(ctx.emit("BinaryOp", "sub", [column, rows], [distance], {0: BINARY["sub"][0]}))
    layers.append(ctx.emit("UnaryOp", "abs", [distance], [unary_out := ctx.temp(out)], {0: UNARY["abs"]}))
    layers.append(ctx.emit("BinaryOp", "rsub", [unary_out], [near := ctx.temp(out)],
                           {0: BINARY["sub"][1], 1: 1, 2: 1.0}))
    layers.append(ctx.emit("ReLU", "relu", [near], [onehot := ctx.temp(out)]))
    for layer in layers:
        layer.params[31] = KEEP_INT32_BITS
    inner_product_rows(ctx, onehot, [count, num], out, weight.T.copy(), None)
