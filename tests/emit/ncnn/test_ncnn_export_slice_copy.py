"""Writes into a slice (`y[:, a:b] = x`, `y[:, a:b].copy_(x)`, an in-place op on a slice), which
the capture records as `Tensor.slice_copy`: lowered to ncnn CopyTo, run in ncnn, compared with torch."""
from __future__ import annotations

import ncnn
import pytest

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param
from slice_writes import (Write, copy_into_slice, mul_into_slice, random_inputs, setitem_broadcast,
                          setitem_channels, setitem_negative_start, setitem_select, setitem_step2,
                          setitem_two_dims)


CASES = {
    "setitem_channels": (setitem_channels, [(1, 8, 6, 6), (1, 3, 6, 6)]),
    "copy_into_slice": (copy_into_slice, [(1, 4, 8, 5), (1, 4, 3, 5)]),
    "inplace_mul_on_slice": (mul_into_slice, [(1, 5, 4, 3)]),
    "setitem_two_dims": (setitem_two_dims, [(1, 4, 6, 7), (1, 2, 3, 7)]),
    "setitem_select": (setitem_select, [(1, 4, 6), (1, 6)]),
    "setitem_negative_start": (setitem_negative_start, [(1, 5, 7), (1, 5, 3)]),
}


def _export(model, inputs, tmp_path):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return base


def _check(name, tmp_path, mode, tol=FP32):
    body, shapes = CASES[name]
    model, inputs = Write(body).eval(), random_inputs(shapes)
    expected = torch_outputs(model, inputs)
    base = _export(model, inputs, tmp_path)
    assert_close(run_ncnn(base, inputs, mode), expected, tol, f"{name} [{mode}]")
    return base


@pytest.mark.parametrize("name", sorted(CASES))
def test_write_into_slice_matches_torch_on_cpu(name, tmp_path):
    base = _check(name, tmp_path, "fp32")
    types = [layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers]
    assert "CopyTo" in types, types


@pytest.mark.parametrize("name", ["setitem_channels", "setitem_two_dims"])
def test_write_into_slice_matches_torch_with_ncnn_defaults(name, tmp_path):
    _check(name, tmp_path, "default", LOW_PRECISION)


def test_two_dims_are_one_copyto_with_two_axes(tmp_path):
    base = _check("setitem_two_dims", tmp_path, "fp32")
    layer = next(la for la in ncnn_param.load(f"{base}.ncnn.param").layers if la.type == "CopyTo")
    assert list(layer.params[9]) == [1, 2] and list(layer.params[11]) == [0, 1], layer.params  # c,h of c,h,w


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["setitem_channels", "copy_into_slice"])
def test_write_into_slice_matches_torch_on_vulkan(name, tmp_path):
    _check(name, tmp_path, "vulkan", LOW_PRECISION)


@pytest.mark.parametrize("body, shapes, reason", [
    (setitem_step2, [(1, 7, 6), (1, 3, 4)], "step 2 is not lowered (ncnn CopyTo has no step)"),
    (setitem_broadcast, [(1, 4, 5, 5), (1, 1, 5, 5)], "broadcast into a slice"),
])
def test_write_ncnn_cannot_express_is_refused(body, shapes, reason, tmp_path):
    with pytest.raises(UnsupportedOperator) as info:
        _export(Write(body).eval(), random_inputs(shapes), tmp_path)
    assert "Tensor.slice_copy" in str(info.value) and reason in str(info.value)
