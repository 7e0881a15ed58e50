"""Hand-built pnnx graphs (as the converter writes them) exported to ONNX and run in
onnxruntime against torch."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from onnx_export_util import GraphMaker, assert_close, export_and_run, op_types


def _conv_params(m: nn.Conv2d) -> dict:
    return dict(bias=m.bias is not None, dilation=m.dilation, groups=m.groups,
                in_channels=m.in_channels, kernel_size=m.kernel_size, out_channels=m.out_channels,
                padding=m.padding, padding_mode=m.padding_mode, stride=m.stride)


def test_conv_relu_linear_cat_view_expression(tmp_path):
    torch.manual_seed(0)
    conv, fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 4)
    x = torch.rand(1, 3, 8, 8)
    g = GraphMaker()
    a = g.input((1, 3, 8, 8))
    c = g.module("nn.Conv2d", conv, [a], [(1, 8, 8, 8)], _conv_params(conv))
    r = g.op("F.relu", [c], [(1, 8, 8, 8)], inputnames=["input"])
    p = g.op("F.adaptive_avg_pool2d", [r], [(1, 8, 1, 1)], {"output_size": (1, 1)}, inputnames=["input"])
    v = g.op("Tensor.view", [p], [(1, 8)], {"shape": (1, 8)}, inputnames=["input"])
    e = g.op("pnnx.Expression", [v, v], [(1, 8)], {"expr": "add(mul(@0,2),sub(@1,0.5))"})
    cat = g.op("torch.cat", [v, e], [(1, 16)], {"dim": 1}, inputnames=["tensors", "tensors"])
    y = g.module("nn.Linear", fc, [v], [(1, 4)], dict(bias=True, in_features=8, out_features=4))
    graph = g.output(y, cat)
    got, model = export_and_run(graph, [x], tmp_path)
    with torch.no_grad():
        pooled = F.adaptive_avg_pool2d(F.relu(conv(x)), 1).view(1, 8)
        want = [fc(pooled), torch.cat([pooled, pooled * 2 + (pooled - 0.5)], 1)]
    assert_close(got, want)
    assert op_types(model) == ["Conv", "Relu", "GlobalAveragePool", "Reshape", "Mul", "Sub",
                               "Add", "Concat", "Gemm"]
