"""Rows whose upstream pnnx ncnn files pass and ours used to refuse (issue 21): even LRN sizes,
area interpolation, nearest-exact at whole scales, negative padding (cropping), Conv3d
with reflect/replicate padding, ChannelShuffle on (N, C, L), select (and unbind) to 0-d tensors and
convolutions with a run-time weight. Each op case runs through the harness (reference converter,
ncnn-cpu fp32 and default options, ncnn-vulkan fp16 and fp32); the layer each lowering writes is
pinned, and the argument forms that stay refused name their reason."""
from __future__ import annotations

from pathlib import Path

import ncnn
import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, parity, run_ncnn
from fn_modules import Fn
from ncnn_export_helpers import FP32, LOW_PRECISION, exported, param_layers, torch_outputs
from pnnx_conformance.checks import Executor
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator

ROWS = ["F.interpolate/area_r3", "F.interpolate/area_r4", "nn.Upsample/nearest_exact_1d_x2",
        "nn.Upsample/nearest_exact_2d_x2", "nn.Upsample/nearest_exact_2d_x2x3", "F.local_response_norm/size2_r3",
        "F.local_response_norm/size4_r5", "nn.LocalResponseNorm/s2_even", "nn.LocalResponseNorm/s4_b2_c16",
        "nn.Conv3d/k3_p2_reflect", "nn.Conv3d/k3_p2_replicate", "nn.LazyConv3d/k3_p2_reflect",
        "nn.LazyConv3d/k3_p2_replicate", "nn.ConstantPad1d/crop", "nn.ConstantPad2d/crop",
        "nn.ConstantPad3d/crop", "nn.ZeroPad2d/crop", "nn.ChannelShuffle/g2_r3", "Tensor.select/r1",
        "F.conv2d/weight_input"]
VULKAN_QUICK = {"nn.LocalResponseNorm/s4_b2_c16", "nn.ConstantPad3d/crop", "F.conv2d/weight_input",
                "F.interpolate/area_r4", "nn.Upsample/nearest_exact_2d_x2x3"}


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    return Executor(tmp_path_factory.mktemp("ncnn_upstream_rows"), tier="full")


@pytest.mark.parametrize("precision", ["fp32", "default"])
@pytest.mark.parametrize("case_id", ROWS)
def test_row_passes_on_ncnn_cpu(ex, case_id, precision):
    parity(ex, case_id, "ncnn-cpu", precision)


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("precision", ["fp16", "fp32"])
@pytest.mark.parametrize("case_id", [pytest.param(c, marks=[] if c in VULKAN_QUICK else [pytest.mark.slow])
                                     for c in ROWS])
def test_row_passes_on_ncnn_vulkan(ex, case_id, precision):
    parity(ex, case_id, "ncnn-vulkan", precision)


# --- the layers written ------------------------------------------------------------------------
def _param(case_id: str) -> Path:
    return Path(f"{exported(case_id)}.ncnn.param")


def _lines(case_id: str) -> list[str]:
    return _param(case_id).read_text().splitlines()[2:]


def _layers(case_id: str) -> list[str]:
    return [line.split()[0] for line in _lines(case_id)]


@pytest.mark.parametrize("case_id, layers", [
    ("nn.LocalResponseNorm/s2_even", ["Input", "LRN"]),  # ncnn's window is torch's for an even size
    ("F.interpolate/area_r3", ["Input", "Pooling1D"]),
    ("F.interpolate/area_r4", ["Input", "Pooling"]),
    ("nn.Upsample/nearest_exact_2d_x2x3", ["Input", "Interp"]),
    ("nn.ZeroPad2d/crop", ["Input", "Crop", "Padding"]),
    ("nn.Conv3d/k3_p2_reflect", ["Input", "Padding", "Convolution3D"]),
    ("nn.ChannelShuffle/g2_r3", ["Input", "ShuffleChannel"]),
    ("Tensor.select/r1", ["Input", "Crop"]),
    ("F.conv2d/weight_input", ["Input", "Input", "Convolution"]),
])
def test_lowering_writes(case_id, layers):
    assert _layers(case_id) == layers


def test_area_is_adaptive_average_pooling():
    pool = next(line for line in _lines("F.interpolate/area_r4") if line.startswith("Pooling"))
    assert {"0=1", "7=1", "8=4", "18=3"} <= set(pool.split())  # avg, adaptive, out w=4, h=3


def test_negative_padding_is_cut_before_padding():
    """No negative Padding value (ncnn's CPU Padding cuts nothing: upstream's files crash there)."""
    crop, pad = _lines("nn.ConstantPad3d/crop")[1:]
    assert crop.split()[0] == "Crop" and pad.split()[0] == "Padding"
    assert not any("=-" in p for p in pad.split()[6:])


def test_conv3d_reflect_pads_depth_too():
    pad = next(line for line in _lines("nn.Conv3d/k3_p2_reflect") if line.startswith("Padding"))
    assert {"4=2", "7=2", "8=2"} <= set(pad.split())


def test_run_time_weight_is_a_second_blob():
    conv = _lines("F.conv2d/weight_input")[-1].split()
    assert conv[2:4] == ["2", "1"] and "19=1" in conv
    assert ("Convolution", ("0", "1", "11", "12", "13", "14", "19", "2", "3", "4", "5", "6")) in \
        param_layers(_param("F.conv2d/weight_input"))


# --- argument forms beyond the rows ----------------------------------------------------------
def _x(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.rand(*shape, generator=g) * 2 - 1


def _export(tmp_path, model, inputs):
    graph = capture(model.eval(), tuple(inputs))
    base = tmp_path / "m"
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    return base


def _check(tmp_path, model, inputs, mode="fp32", tol=FP32):
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    expected = torch_outputs(model.eval(), inputs)
    got = [g.reshape(()) if e.ndim == 0 and g.size == 1 else g for g, e in zip(got, expected)]
    assert_close(got, expected, tol)


@pytest.mark.parametrize("fn", [lambda t: torch.unbind(t), lambda t: t.unbind(0)[1:], lambda t: t[2] * t[0]])
def test_parts_of_a_vector_are_0d(tmp_path, fn):
    """select and unbind of a rank-1 tensor: 0-d results, carried as 1-element blobs."""
    _check(tmp_path, Fn(fn), [_x(4)])


# whole enlargement factors per axis, by scale and by size: nearest-exact == nearest there
NEAREST_EXACT = [((1, 2, 7), dict(scale_factor=3.0)), ((1, 2, 5), dict(size=20)),
                 ((2, 3, 4, 5), dict(scale_factor=(1.0, 4.0))), ((1, 2, 3, 3), dict(size=(15, 6))),
                 ((3, 5, 6), dict(scale_factor=2.0)), ((4, 5, 6), dict(scale_factor=1.0))]


@pytest.mark.parametrize("shape, kw", NEAREST_EXACT)
def test_nearest_exact_at_whole_scales(tmp_path, shape, kw):
    x = torch.arange(float(np.prod(shape))).reshape(shape)  # distinct values: a wrong pick shows
    _check(tmp_path, Fn(lambda t: F.interpolate(t, mode="nearest-exact", **kw)), [x], tol=dict(atol=0, rtol=0))


def test_lrn_even_size_with_large_alpha(tmp_path):
    """alpha large enough that a window one channel off would show."""
    _check(tmp_path, nn.LocalResponseNorm(4, alpha=2.0, beta=0.75, k=1.0), [_x(1, 9, 4, 5) * 3])


def test_area_3d(tmp_path):
    _check(tmp_path, Fn(lambda t: F.interpolate(t, size=(2, 3, 5), mode="area")), [_x(1, 3, 5, 7, 9)])


@pytest.mark.parametrize("pads, value, shape", [
    ((-2, -1), 0.0, (2, 3, 9)),                    # a pure cut, batch 2
    ((1, -2, -1, 3), 1.5, (3, 4, 6, 7)),           # both signs on both dims, batch 3
    ((0, 0, -1, 2, 2, -1), -0.5, (4, 5, 6, 7)),    # 3 dims of an unbatched (c, d, h, w)
])
def test_negative_constant_padding(tmp_path, pads, value, shape):
    _check(tmp_path, Fn(lambda t: F.pad(t, pads, value=value)), [_x(*shape)])


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("pads, shape", [
    ((-1, 6), (1, 3, 8)),                   # the furthest reflection that reads no cut element
    ((2, -3), (2, 3, 8)),
    ((1, -2, -1, 3), (2, 3, 6, 7)),
    ((1, -2, 0, 0, -1, 2), (1, 2, 4, 5, 6)),
])
def test_negative_reflect_and_replicate_padding(tmp_path, mode, pads, shape):
    _check(tmp_path, Fn(lambda t: F.pad(t, pads, mode=mode)), [_x(*shape)])


@pytest.mark.parametrize("model, shapes", [
    (Fn(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1)), [(2, 3, 9, 8), (5, 3, 3, 3), (5,)]),
    (Fn(lambda x, w: F.conv2d(x, w * 2 + 1, groups=4)), [(1, 4, 7, 7), (8, 1, 3, 3)]),
    (Fn(lambda x, w: F.conv1d(x, w, padding=2, dilation=2)), [(1, 4, 12), (6, 4, 3)]),
    (Fn(lambda x, w, b: F.conv1d(x, w, b, groups=2)), [(4, 12), (6, 2, 3), (6,)]),  # unbatched input
    (Fn(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)),
     [(2, 4, 5, 6), (4, 3, 3, 3), (6,)]),
    (Fn(lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=1)), [(1, 4, 9), (4, 5, 4)]),
    (Fn(lambda x, b: F.conv2d(x, torch.ones(3, 2, 2, 2) * 0.25, b * 2)), [(1, 2, 5, 5), (3,)]),  # run-time bias
    # the zero Padding folds into the convolution, whose weight blob must stay its second input
    (Fn(lambda x, w: F.conv2d(F.pad(x, (1, 2, 1, 0)), w)), [(1, 3, 6, 6), (4, 3, 3, 3)]),
], ids=["conv2d_bias_b2", "conv2d_dw_expr", "conv1d", "conv1d_g2_unbatched", "conv_transpose2d_g2",
        "conv_transpose1d", "conv2d_bias_only", "conv2d_after_pad"])
def test_run_time_weights(tmp_path, model, shapes):
    _check(tmp_path, model, [_x(*s, seed=i) for i, s in enumerate(shapes)])


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
def test_run_time_weight_on_vulkan(tmp_path):
    model = Fn(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, groups=2))
    _check(tmp_path, model, [_x(2, 4, 5, 6), _x(4, 3, 3, 3, seed=1), _x(6, seed=2)], "vulkan", LOW_PRECISION)


@pytest.mark.parametrize("fn, shapes, reason", [
    (lambda t: F.interpolate(t, scale_factor=1.5, mode="nearest-exact"), [(1, 2, 6)],
     "nearest-exact with scale 1.5 along spatial dim 0: it equals ncnn's nearest only for whole"),
    (lambda t: F.interpolate(t, size=(3, 6), mode="nearest-exact"), [(1, 2, 6, 6)],
     "nearest-exact with scale 3/6 along spatial dim 0"),
    (lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest-exact"), [(1, 2, 3, 4, 5)],
     "1-d or 2-d spatial data; got 3-d with mode nearest-exact"),
    (lambda t: F.pad(t, (-1, 7), mode="reflect"), [(1, 3, 8)],
     "reflect padding by 7 beside a cut of 1 on a dim of 8: it reflects elements the cut removes"),
    (lambda x, w: F.conv3d(x, w), [(1, 2, 4, 4, 4), (3, 2, 2, 2, 2)],  # ncnn has no such layer either
     r"F.conv3d .*operand 1 \(3, 2, 2, 2, 2\) is a rank-5 blob"),
])
def test_refusals_name_the_reason(tmp_path, fn, shapes, reason):
    with pytest.raises(UnsupportedOperator, match=reason):
        _export(tmp_path, Fn(fn), [_x(*s) for s in shapes])
