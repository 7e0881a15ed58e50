"""where/masked_fill whose unselected side holds run-time infinities, or values past fp16's
largest (65504) that fp16 storage turns into infinities (emit/ncnn/families/logic.py): the 0/1
blend cond * x + (1 - cond) * y gave inf * 0 = NaN there, on Vulkan's default fp16 storage
even where fp32 is exact. The output must be finite and match torch in every ncnn mode."""
from __future__ import annotations

import inspect

import ncnn
import numpy as np
import pytest
import torch

from conformance_runs import assert_close, run_ncnn
from dynamic_shape_models import MODELS, inputs_at
from fn_modules import Fn
from ncnn_export_helpers import FP32, LOW_PRECISION, layer_types, lowered, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn

MODES = ["fp32", "default"] + (["vulkan-fp32", "vulkan"] if ncnn.get_gpu_count() else [])


CASES = {
    # exp(50 x) is past float32's range (inf) for x > 1.78 and past fp16's for x > 0.23; where
    # it is selected (x <= 0) it is at most 1
    "where_inf": Fn(lambda x, y: torch.where(x > 0, y, (x * 50).exp())),
    "masked_fill_inf_input": Fn(lambda x: (x * 50).exp().masked_fill(x > 0, 0.5)),
    # exp(5 x): finite in float32, inf in fp16 storage for x > 2.22
    "where_past_fp16": Fn(lambda x, y: torch.where(x <= 0, (x * 5).exp(), y)),
    "masked_fill_past_fp16_input": Fn(lambda x, y: (x * 5).exp().masked_fill(x > 0, 0.5) + y),
    # an attention mask filled with a number past fp16's range (finfo(float32).min, as
    # Hugging Face writes it): fp16 reads it as -inf, which the mask multiplied by 0
    "masked_fill_finfo_min_softmax": Fn(lambda x, y: y.masked_fill(x > 1, torch.finfo(torch.float32).min).softmax(-1)),
    # an integer index clamped to -2^63 (log(0) cast to int64, as T5's buckets), left out by where()
    "where_int_clamped": Fn(lambda x: torch.where(
        x.abs() <= 1, (x * 4).long(), torch.log((x.abs() - 1).clamp(min=0)).long()).float()),
}


def _inputs():
    g = torch.Generator().manual_seed(0)
    return [torch.rand(2, 5, 16, generator=g) * 6 - 3, torch.rand(2, 5, 16, generator=g) * 6 - 3]


@pytest.fixture(scope="module", params=sorted(CASES))
def converted(request, tmp_path_factory):
    model = CASES[request.param]
    inputs = _inputs()[:len(inspect.signature(model.fn).parameters)]
    return request.param, model, inputs, lowered(tmp_path_factory.mktemp("sel"), model, inputs)


@pytest.mark.parametrize("mode", MODES)
def test_an_unselected_infinity_leaves_the_output_finite(converted, mode):
    name, model, inputs, base = converted
    expected = torch_outputs(model.eval(), inputs)
    assert np.isfinite(expected[0]).all()
    got = run_ncnn(base, inputs, mode)
    assert np.isfinite(got[0]).all(), f"{name} ({mode}): {np.isnan(got[0]).sum()} NaN, {np.isinf(got[0]).sum()} inf"
    assert_close(got, expected, FP32 if mode.endswith("fp32") else LOW_PRECISION, f"{name} ({mode})")


@pytest.mark.parametrize("mode", MODES)
def test_t5_relative_bias_at_two_lengths_is_finite(tmp_path, mode):
    """log(0) = -inf on the bucket diagonal, cast to int64 (clamped to -2^63, which fp16 stores
    as -inf) and left out by where(): NaN everywhere on Vulkan's default fp16 before."""
    cls, shapes, shapes2 = MODELS["relative_bias_by_length"]
    model, base = cls().eval(), tmp_path / "m"
    graph = capture(model, tuple(inputs_at(shapes, 0)), inputs2=tuple(inputs_at(shapes2, 0)))
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=True)
    for size in (shapes, shapes2):
        inputs = inputs_at(size, 1)
        assert_close(run_ncnn(base, inputs, mode), torch_outputs(model, inputs),
                     FP32 if mode.endswith("fp32") else LOW_PRECISION, f"at {size} ({mode})")


def _layer_types(tmp_path, fn, inputs) -> list[str]:
    return layer_types(f"{lowered(tmp_path, Fn(fn), inputs)}.ncnn.param")


def test_sides_known_finite_keep_the_blend(tmp_path):
    """Numbers within fp16's range and bools cannot be infinite: 1 - cond and two products
    summed, no +inf MemoryData nor min/max."""
    types = _layer_types(tmp_path, lambda x: torch.where(x > 0.5, 1.0, -1.0), _inputs()[:1])
    assert "MemoryData" not in types and types.count("BinaryOp") == 5, types  # x - 0.5 is the comparison's


def test_an_infinite_number_needs_no_blend(tmp_path):
    """masked_fill(m, -inf) = min(y, (0.5 - m) * inf): three BinaryOps and a +inf MemoryData."""
    types = _layer_types(tmp_path, lambda x, m: x.masked_fill(m, float("-inf")), [_inputs()[0], _inputs()[1] > 0])
    assert sorted(types) == ["BinaryOp", "BinaryOp", "BinaryOp", "Input", "Input", "MemoryData"], types
