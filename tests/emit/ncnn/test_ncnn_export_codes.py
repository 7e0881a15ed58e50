"""The code tables the lowering relies on, checked against the ncnn package itself."""
from __future__ import annotations

import itertools

import ncnn
import numpy as np
import pytest
import torch

from pnnx_reference.emit.ncnn.arithmetic import UNARY
from pnnx_reference.emit.ncnn.context import permutation_order_type


def _run_layer(line: str, x: np.ndarray) -> np.ndarray:
    net = ncnn.Net()
    for flag in ("use_fp16_packed", "use_fp16_storage", "use_fp16_arithmetic", "use_bf16_storage"):
        setattr(net.opt, flag, False)
    assert net.load_param_mem(f"7767517\n2 2\nInput in0 0 1 in0\n{line}\n") == 0
    ex = net.create_extractor()
    ex.input("in0", ncnn.Mat(x).clone())
    ret, mat = ex.extract("out0")
    assert ret == 0
    return np.array(mat).copy()


@pytest.mark.parametrize("func", sorted(UNARY))
def test_unary_op_codes(func):
    x = np.linspace(-0.9, 0.9, 24, dtype=np.float32).reshape(4, 6)
    if func in ("sqrt", "rsqrt", "log", "log10"):
        x = np.abs(x) + 0.1
    if func == "acosh":
        x = np.abs(x) + 1.5
    if func == "reciprocal":
        x = x + 2.0
    got = _run_layer(f"UnaryOp op 1 1 in0 out0 0={UNARY[func]}", x)
    expected = getattr(torch, func)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("rank", [2, 3, 4])
def test_permute_order_types(rank):
    shape = (2, 3, 4, 5)[:rank]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    for perm in itertools.permutations(range(rank)):
        got = _run_layer(f"Permute p 1 1 in0 out0 0={permutation_order_type(list(perm))}", x)
        np.testing.assert_array_equal(got, x.transpose(perm))
