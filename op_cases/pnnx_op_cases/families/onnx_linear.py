"""ONNX table, the `linear` family (frontends/onnx/rules/linear.py): Gemm, MatMul."""
from __future__ import annotations

from ..builders import rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Gemm")
def gemm():
    op = "onnx.Gemm"
    yield onnx_case(op, "linear", node("Gemm", ["x0", "W", "B"], transB=1), [rand(2, 16)],
                    params={"W": (10, 16), "B": (10,)}, smoke=True)
    yield onnx_case(op, "no_trans_alpha_beta", node("Gemm", ["x0", "W", "B"], alpha=0.5, beta=2.0), [rand(3, 8)],
                    params={"W": (8, 5), "B": (1, 5)}, opset=11)
    yield onnx_case(op, "no_bias", node("Gemm", ["x0", "W"], transB=1), [rand(2, 6)], params={"W": (4, 6)})
    yield onnx_case(op, "matrix_bias", node("Gemm", ["x0", "W", "B"]), [rand(3, 6)], params={"W": (6, 4), "B": (3, 4)})
    yield onnx_case(op, "inputs", node("Gemm", ["x0", "x1", "x2"], transA=1), [rand(6, 3), rand(6, 4), rand(4)])


@family("onnx.MatMul")
def matmul():
    op = "onnx.MatMul"
    yield onnx_case(op, "weight_3d", node("MatMul", ["x0", "W"]), [rand(2, 5, 16)], params={"W": (16, 8)}, smoke=True)
    yield onnx_case(op, "matmul_add", [node("MatMul", ["x0", "W"], "t"), node("Add", ["t", "B"])], [rand(2, 5, 16)],
                    params={"W": (16, 8), "B": (8,)})
    yield onnx_case(op, "batched", node("MatMul", ["x0", "x1"]), [rand(2, 3, 4, 5), rand(2, 3, 5, 6)], opset=11)
    yield onnx_case(op, "broadcast", node("MatMul", ["x0", "x1"]), [rand(2, 3, 4, 5), rand(5, 2)])
    yield onnx_case(op, "vector", node("MatMul", ["x0", "x1"]), [rand(5), rand(5, 3)])
