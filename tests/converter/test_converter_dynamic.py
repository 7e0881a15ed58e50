"""inputs2 / inputshape2: dimensions that differ between the two runs become `?`."""
import pytest
import torch
import torch.nn as nn

from converter_helpers import op_of
from pnnx_reference.api import capture
from pnnx_reference.errors import ConversionError
from pnnx_reference.formats.pnnx_param import dumps


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 1)

    def forward(self, x):
        x = self.conv(x)
        b, c, h, w = x.shape
        return x.view(b, c, h * w).permute(0, 2, 1)


def test_differing_dims_become_unknown_and_shape_arithmetic_stays():
    graph = capture(Head(), torch.rand(1, 3, 8, 8), inputs2=torch.rand(1, 3, 12, 16))
    assert graph.inputs()[0].outputs[0].shape == [1, 3, -1, -1]
    view = op_of(graph, "Tensor.view")
    assert view.outputs[0].shape == [1, 8, -1]
    assert view.inputnames == ["input", "shape"]
    assert op_of(graph, "pnnx.Expression").params["expr"] == "[1,8,mul(size(@0,2),size(@0,3))]"
    assert "#0=(1,3,?,?)f32" in dumps(graph)


def test_same_shapes_fold_as_usual():
    graph = capture(Head(), torch.rand(1, 3, 8, 8), inputs2=torch.rand(1, 3, 8, 8))
    assert op_of(graph, "Tensor.view").params["shape"] == [1, 8, 64]


def test_input_shapes_build_the_example_inputs():
    graph = capture(Head(), input_shapes=[[1, 3, 4, 4]], input_shapes2=[[1, 3, 6, 4]])
    assert graph.inputs()[0].outputs[0].shape == [1, 3, -1, 4]


def test_control_flow_that_differs_between_shapes_is_refused():
    class Branch(nn.Module):
        def forward(self, x):
            return x.relu() if x.shape[-1] > 4 else x.sigmoid()

    with pytest.raises(ConversionError, match="different operators"):
        capture(Branch(), torch.rand(2, 8), inputs2=torch.rand(2, 3))


def test_shape_used_outside_traced_arithmetic_is_refused():
    class Untraced(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), int(x.size(1) / 2), -1)

    with pytest.raises(ConversionError, match="shape"):
        capture(Untraced(), torch.rand(1, 4, 6), inputs2=torch.rand(1, 8, 6))
