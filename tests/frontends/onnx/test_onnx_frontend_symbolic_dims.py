"""Symbolic ONNX dims stay dynamic into ncnn: when doubling every symbolic dim does not convert
(a convolution's weight fixes the channels the exporter also left symbolic), the dims whose
doubling converts on their own (batch, length) still follow the input, and the ncnn files
compute onnxruntime's result at other sizes of those dims."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import helper

from conformance_runs import assert_close, run_ncnn
from onnx_models import FLOAT, graph_model, run_ort
from pnnx_reference import api


def _conv1d_all_symbolic():
    w = np.random.default_rng(0).standard_normal((16, 12, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["y"])]
    return graph_model(nodes, [("x", FLOAT, ["N", "C", "L"])], [("y", FLOAT, None)], {"w": w})


def test_dims_that_convert_doubled_alone_stay_dynamic(tmp_path):
    model = _conv1d_all_symbolic()
    result = api.export_onnx(model, tmp_path, "m", input_shapes=[[1, 12, 64]], fp16=False)
    assert "#0=(?,12,?)f32" in Path(result.paths["pnnxparam"]).read_text()
    assert result.notes and "follow the input" in result.notes[0]
    base = str(tmp_path / "m")
    for shape in ((1, 12, 64), (3, 12, 40)):
        x = np.random.default_rng(1).random(shape, dtype=np.float32)
        assert_close(run_ncnn(base, [x], "fp32"), run_ort(model, [x]), dict(atol=1e-4, rtol=1e-3), str(shape))
