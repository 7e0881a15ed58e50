"""torchvision's deformable convolution: one operator in pnnx.param through the Python API, `.pt`
and `.pt2` doors (`torchvision.ops.DeformConv2d` for the module, `torchvision.ops.deform_conv2d`
for the call), ncnn DeformableConv2D (weight groups as one dense weight, offset groups as one
layer per group), ONNX DeformConv, each against torch: with and without mask, bias on and off,
weight and offset groups, stride/padding/dilation."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn, run_onnx
from ncnn_export_helpers import FP32, LOW_PRECISION, layer_types, lowered, torch_outputs
from pnnx_reference.api import capture, export
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import pnnx_param

torchvision = pytest.importorskip("torchvision")


class Call(nn.Module):
    """torchvision.ops.deform_conv2d with offsets (and a mask) computed from the input."""

    def __init__(self, cin=4, cout=6, k=3, groups=1, offset_groups=1, bias=True, mask=True, stride=1, padding=1,
                 dilation=1):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(cout, cin // groups, k, k) - 0.5)
        self.bias = nn.Parameter(torch.rand(cout)) if bias else None
        self.offset = nn.Conv2d(cin, 2 * offset_groups * k * k, 3, stride=stride, padding=1)
        self.mask = nn.Conv2d(cin, offset_groups * k * k, 3, stride=stride, padding=1) if mask else None
        self.kw = dict(stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        mask = torch.sigmoid(self.mask(x)) if self.mask is not None else None
        return torchvision.ops.deform_conv2d(x, self.offset(x) * 2, self.weight, self.bias, mask=mask, **self.kw)


class Module(nn.Module):
    def __init__(self, groups=1, offset_groups=1, bias=True, mask=True):
        super().__init__()
        self.offset = nn.Conv2d(4, 18 * offset_groups, 3, padding=1)
        self.mask = nn.Conv2d(4, 9 * offset_groups, 3, padding=1) if mask else None
        self.deform = torchvision.ops.DeformConv2d(4, 8, 3, padding=1, groups=groups, bias=bias)

    def forward(self, x):
        if self.mask is None:
            return self.deform(x, self.offset(x))
        return self.deform(x, self.offset(x), torch.sigmoid(self.mask(x)))


FORMS = {
    "mask_bias": Call(),
    "no_mask_no_bias": Call(bias=False, mask=False),
    "groups2": Call(groups=2, mask=False),
    "groups2_offset_groups2": Call(groups=2, offset_groups=2),
    "offset_groups2_s2_p2_d2": Call(offset_groups=2, stride=2, padding=2, dilation=2, bias=False),
    "depthwise_offset_groups4_s2": Call(cout=4, groups=4, offset_groups=4, stride=2),
    "module": Module(),
    "module_no_mask_groups2_offset_groups2": Module(groups=2, offset_groups=2, bias=False, mask=False),
}


def _model(name):
    torch.manual_seed(0)
    model = FORMS[name]
    for p in model.parameters():  # the same values whatever ran before
        nn.init.uniform_(p, -0.5, 0.5)
    return model.eval(), [torch.rand(2, 4, 9, 9, generator=torch.Generator().manual_seed(1))]


def _ncnn(tmp_path, name, fp16=False):
    model, inputs = _model(name)
    return model, inputs, lowered(tmp_path, model, inputs, fp16)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_deform_conv_matches_torch_on_ncnn_cpu(tmp_path, name):
    model, inputs, base = _ncnn(tmp_path, name)
    assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, name)
    layers = layer_types(tmp_path / "m.ncnn.param")
    assert "DeformableConv2D" in layers


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("name", ["groups2_offset_groups2", "no_mask_no_bias", "module"])
def test_deform_conv_matches_torch_on_vulkan(tmp_path, name):
    model, inputs, base = _ncnn(tmp_path, name, fp16=True)
    assert_close(run_ncnn(base, inputs, "vulkan"), torch_outputs(model, inputs), LOW_PRECISION, name)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_deform_conv_matches_torch_in_pnnx_onnx(tmp_path, name):
    model, inputs = _model(name)
    result = export(model, tuple(inputs), tmp_path, "m", fp16=False)
    assert not result.unsupported, result.unsupported
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), torch_outputs(model, inputs), FP32, name)


def _types(path) -> list[str]:
    return [op.type for op in pnnx_param.load_text(path).ops]


def test_one_operator_per_call_as_upstream_names_it():
    types = [op.type for op in capture(*_model_args("module")).ops]
    assert types.count("torchvision.ops.DeformConv2d") == 1 and not any("custom_op" in t for t in types)
    graph = capture(*_model_args("mask_bias"))
    op = next(op for op in graph.ops if op.type == "torchvision.ops.deform_conv2d")
    assert op.inputnames == ["input", "offset", "weight", "bias", "mask"]
    assert op.params == {"stride": [1, 1], "padding": [1, 1], "dilation": [1, 1]}
    op = next(op for op in capture(*_model_args("no_mask_no_bias")).ops if op.type == "torchvision.ops.deform_conv2d")
    assert op.inputnames == ["input", "offset", "weight"]  # torchvision's zero bias and unused mask are not kept


def _model_args(name):
    model, inputs = _model(name)
    return model, tuple(inputs)


@pytest.mark.slow
@pytest.mark.parametrize("door", ["pt", "pt2"])
def test_the_file_doors_write_one_call_and_lower_it(tmp_path, door):
    from pnnx_reference.cli import main

    model, inputs = _model("groups2_offset_groups2")
    path = tmp_path / f"m.{door}"
    if door == "pt":
        torch.jit.trace(model, tuple(inputs)).save(str(path))
    else:
        torch.export.save(torch.export.export(model, tuple(inputs)), str(path))
    assert main([str(path), "inputshape=[2,4,9,9]", "fp16=0"]) == 0
    assert _types(tmp_path / "m.pnnx.param").count("torchvision.ops.deform_conv2d") == 1
    assert_close(run_ncnn(tmp_path / "m", inputs, "fp32"), torch_outputs(model, inputs), FP32, door)


def test_a_weight_computed_at_run_time_is_refused_in_one_line(tmp_path):
    class Computed(nn.Module):
        def forward(self, x, offset, w):
            return torchvision.ops.deform_conv2d(x, offset, w * 2)

    inputs = (torch.rand(1, 4, 5, 5), torch.rand(1, 18, 3, 3), torch.rand(6, 4, 3, 3))
    with pytest.raises(UnsupportedOperator, match="ncnn DeformableConv2D takes no weight blob"):
        write_ncnn(capture(Computed(), inputs), tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py")


@pytest.mark.parametrize("pads", [[1, 1, 1, 1], [0, 1, 2, 1]])
def test_an_onnx_deform_conv_reads_as_the_call_and_runs_on_ncnn(tmp_path, pads):
    """The ONNX door (torch.onnx's DeformConv, opset 19: weight and offset groups as attributes);
    uneven pads are an F.pad before it."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from pnnx_reference.api import export_onnx

    rng = np.random.RandomState(0)
    weight, bias = (rng.rand(6, 2, 3, 3) - 0.5).astype(np.float32), rng.rand(6).astype(np.float32)
    ho, wo = 8 + pads[0] + pads[2] - 2, 8 + pads[1] + pads[3] - 2
    shapes = {"x": [1, 4, 8, 8], "offset": [1, 36, ho, wo], "mask": [1, 18, ho, wo]}
    node = helper.make_node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"], kernel_shape=[3, 3], pads=pads,
                            group=2, offset_group=2)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                                            for k, s in shapes.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, ho, wo])],
                              initializer=[numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10), tmp_path / "d.onnx")
    inputs = [torch.rand(*s, generator=torch.Generator().manual_seed(i)) * (3 if k == "offset" else 1)
              for i, (k, s) in enumerate(shapes.items())]
    x = torch.nn.functional.pad(inputs[0], [pads[1], pads[3], pads[0], pads[2]])
    expected = torchvision.ops.deform_conv2d(x, inputs[1], torch.from_numpy(weight), torch.from_numpy(bias),
                                             mask=inputs[2])
    assert_close(run_onnx(tmp_path / "d.onnx", inputs), [expected], FP32, "onnxruntime on the ONNX model itself")
    export_onnx(str(tmp_path / "d.onnx"), tmp_path, "m", fp16=False)
    assert _types(tmp_path / "m.pnnx.param").count("torchvision.ops.deform_conv2d") == 1
    assert_close(run_ncnn(tmp_path / "m", inputs, "fp32"), [expected], FP32, str(pads))
