"""Linear / addmm -> InnerProduct (a vector) or Gemm (rows); matmul, bmm, mm -> MatMul; Embedding -> Embed."""
from __future__ import annotations

import math

import numpy as np

from .context import CannotLower, Context, dims_params, param
from .layers import Weight
from .registry import lowers


def _const(ctx: Context, op, name: str, position: int):
    names = op.inputnames or []
    idx = names.index(name) if name in names else (position if not names else None)
    if idx is None or idx >= len(op.inputs):
        return None
    value = ctx.constant(op.inputs[idx])
    if value is None:
        raise CannotLower(f"{name} is not a constant")
    return value.astype(np.float32)


def _inner_product(ctx: Context, op, src_operand, weight: np.ndarray, bias) -> None:
    """y = x W^T + b over the last dim: InnerProduct for a vector; for rows (a >1-d blob,
    flattened to 2-d and reshaped back) Gemm with constant B, as upstream writes it: ncnn's
    InnerProduct runs one row at a time, Gemm its blocked matrix kernels (measured: vit_b_16
    on ncnn CPU, one thread, 1108 ms with InnerProduct rows, 570 ms with Gemm)."""
    inner_product_rows(ctx, ctx.blob(src_operand), ctx.shape(src_operand), op.outputs[0].name, weight, bias)


def inner_product_rows(ctx: Context, src: str, shape: list[int], out: str, weight: np.ndarray, bias) -> None:
    """`_inner_product` on a blob of ncnn shape `shape`, written to blob `out`."""
    if len(shape) <= 1:
        ctx.emit("InnerProduct", "linear", [src], [out], *_inner_product_layer(weight, bias))
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


def _inner_product_layer(weight: np.ndarray, bias) -> tuple[dict, list]:
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


@lowers("nn.Linear", "F.linear")
def linear(ctx: Context, op) -> None:
    weight = op.attrs["weight"].to_numpy().astype(np.float32) if "weight" in op.attrs else _const(ctx, op, "weight", 1)
    if weight is None:
        raise CannotLower("linear without weight")
    if "bias" in op.attrs:
        bias = op.attrs["bias"].to_numpy().astype(np.float32)
    else:
        bias = None if op.type.startswith("nn.") else _const(ctx, op, "bias", 2)
    _inner_product(ctx, op, op.inputs[0], weight, bias)


@lowers("torch.addmm")
def addmm(ctx: Context, op) -> None:
    """addmm(input=bias, mat1=x, mat2=W^T): InnerProduct with constant W and 1-d bias,
    otherwise MatMul, scaled, plus input (BinaryOp broadcasting)."""
    names = op.inputnames or ["input", "mat1", "mat2"]
    inp, x, w = (op.inputs[names.index(n)] for n in ("input", "mat1", "mat2"))
    bias, weight = ctx.constant(inp), ctx.constant(w)
    beta, alpha = float(param(op, "beta", 1.0)), float(param(op, "alpha", 1.0))
    if bias is not None and weight is not None and bias.ndim <= 1:
        _inner_product(ctx, op, x, np.ascontiguousarray(weight.astype(np.float32).T * alpha),
                       np.broadcast_to(bias.astype(np.float32), weight.shape[1:]) * beta)
        return
    out = op.outputs[0].name
    product = ctx.temp(out)
    ctx.emit("MatMul", "matmul", [ctx.blob(x), ctx.blob(w)], [product], {0: 0})
    product = scaled(ctx, product, alpha, out)
    ctx.emit("BinaryOp", "add", [product, scaled(ctx, ctx.blob(inp), beta, out)], [out], {0: 0})


def scaled(ctx: Context, blob: str, factor: float, base: str) -> str:
    """`blob` times a scalar, in a temp blob named after `base` (`blob` itself for 1)."""
    if factor == 1.0:
        return blob
    result = ctx.temp(base)
    ctx.emit("BinaryOp", "mul", [blob], [result], {0: 2, 1: 1, 2: factor})
    return result


@lowers("torch.matmul", "torch.bmm", "torch.mm", "Tensor.matmul")
def matmul(ctx: Context, op) -> None:
    a, b = op.inputs[0], op.inputs[1]
    if ctx.constant(b) is not None and len(ctx.torch_shape(b)) == 2 and op.type != "torch.bmm":
        _inner_product(ctx, op, a, np.ascontiguousarray(ctx.constant(b).astype(np.float32).T), None)
        return
    ra, rb = ctx.rank(a), ctx.rank(b)
    if ra != rb:
        raise CannotLower(f"matmul of rank-{ra + 1} by rank-{rb + 1} tensors (broadcast batch) is not lowered")
    ctx.emit("MatMul", "matmul", [ctx.blob(a), ctx.blob(b)], [op.outputs[0].name], {0: 0})


# layer featmask (param 31): no fp16 storage (2), no bf16 storage (4), no vulkan (16)
_KEEP_INT32_BITS = 2 | 4 | 16


def _embed_indices(ctx: Context, operand, base: str) -> str:
    """The blob Embed reads its indices from. Embed reads one row (w int32 words) and writes
    (w, dim): a deeper blob is flattened first, on the CPU in fp32 storage, since a GPU or
    fp16 copy would convert the int32 bits as if they were floats."""
    index = ctx.blob(operand)
    if ctx.rank(operand) == 1:
        return index
    flat = ctx.temp(base)
    ctx.emit("Flatten", "flatten", [index], [flat], {31: _KEEP_INT32_BITS})
    return flat


@lowers("nn.Embedding", "F.embedding")
def embedding(ctx: Context, op) -> None:
    weight = op.attrs["weight"].to_numpy() if "weight" in op.attrs else _const(ctx, op, "weight", 1)
    if weight is None:
        raise CannotLower("embedding without a constant weight")
    num, dim = weight.shape
    out = op.outputs[0]
    shape = ctx.shape(out)
    if len(shape) > 4:
        raise CannotLower(f"embedding to a rank-{len(shape)} blob (ncnn blobs have at most 4 dims)")
    index = _embed_indices(ctx, op.inputs[0], out.name)
    target = out.name if len(shape) == 2 else ctx.temp(out.name)
    ctx.emit("Embed", "embed", [index], [target],
             {0: int(dim), 1: int(num), 2: 0, 3: int(weight.size)},
             [Weight(weight.astype(np.float32).reshape(-1), tagged=True)])
    if target != out.name:
        ctx.emit("Reshape", "reshape", [target], [out.name], dims_params(shape))
