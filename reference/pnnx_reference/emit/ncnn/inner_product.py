"""y = x W^T + b with a constant W: InnerProduct for a vector, Gemm for rows; shared by
Linear, addmm, matmul by a constant, mv and bilinear."""
from __future__ import annotations

import math

import numpy as np

from .context import Context, dims_params
from .layers import Weight


def inner_product(ctx: Context, op, src_operand, weight: np.ndarray, bias) -> None:
    """y = x W^T + b over the last dim: InnerProduct for a vector; for rows (a >1-d blob,
    flattened to 2-d and reshaped back) Gemm with constant B, as upstream writes it: ncnn's
    InnerProduct runs one row at a time, Gemm its blocked matrix kernels (measured: vit_b_16
    on ncnn CPU, one thread, 1108 ms with InnerProduct rows, 570 ms with Gemm)."""
    inner_product_rows(ctx, ctx.blob(src_operand), ctx.shape(src_operand), op.outputs[0].name, weight, bias)


def inner_product_rows(ctx: Context, src: str, shape: list[int], out: str, weight: np.ndarray, bias) -> None:
    """`inner_product` on a blob of ncnn shape `shape`, written to blob `out`."""
    if len(shape) <= 1:
        ctx.emit("InnerProduct", "linear", [src], [out], *inner_product_layer(weight, bias))
        return
    out_features, in_features = weight.shape
    rows = math.prod(shape[:-1]) if all(isinstance(d, int) and d > 0 for d in shape[:-1]) else 0
    if len(shape) == 2:
        ctx.emit("Gemm", "gemm", [src], [out], *_gemm_layer(weight, bias, rows))
        return
    flat, flat_out = ctx.temp(out), ctx.temp(out)
    ctx.emit("Reshape", "reshape", [src], [flat], dims_params([rows or -1, in_features]))
    ctx.emit("Gemm", "gemm", [flat], [flat_out], *_gemm_layer(weight, bias, rows))
    ctx.emit("Reshape", "reshape", [flat_out], [out], dims_params([*shape[:-1], int(out_features)]))


def inner_product_layer(weight: np.ndarray, bias) -> tuple[dict, list]:
    """InnerProduct params and weights: W tagged, the bias raw fp32."""
    p = {0: int(weight.shape[0]), 1: int(bias is not None), 2: int(weight.size)}
    weights = [Weight(weight.reshape(-1), tagged=True)]
    if bias is not None:
        weights.append(Weight(bias.reshape(-1), tagged=False))
    return p, weights


# Gemm params: 2/3 transA/B, 4/5/6 constant A/B/C, 7/8/9 M/N/K, 10 how C broadcasts (4: one row of N)
def _gemm_layer(weight: np.ndarray, bias, rows: int) -> tuple[dict, list]:
    out_features, in_features = (int(d) for d in weight.shape)
    p = {2: 0, 3: 1, 4: 0, 5: 1, 6: int(bias is not None), 7: int(rows), 8: out_features, 9: in_features}
    weights = [Weight(weight.reshape(-1), tagged=True)]  # B is W itself: N x K, transposed by 3=1
    if bias is not None:
        p[10] = 4
        weights.append(Weight(bias.reshape(-1), tagged=True))
    return p, weights
