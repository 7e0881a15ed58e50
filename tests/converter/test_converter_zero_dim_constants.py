"""0-d constants keep their rank (numpy's ascontiguousarray would make them 1-d)."""
from __future__ import annotations

import numpy as np
import onnx

from pnnx_reference.emit.onnx.builder import OnnxBuilder
from pnnx_reference.ir import Attribute, Graph


def test_a_0d_attribute_has_an_empty_shape():
    attr = Attribute.from_numpy(np.array(0.5, dtype=np.float32))
    assert attr.shape == () and attr.to_numpy().shape == ()


def test_a_0d_onnx_weight_has_an_empty_shape():
    builder = OnnxBuilder(Graph(), opset=23, fp16=False)
    name = builder.weight(np.array(0.5, dtype=np.float32), "w")
    init = next(i for i in builder.initializers if i.name == name)
    assert list(init.dims) == [] and onnx.numpy_helper.to_array(init).shape == ()
