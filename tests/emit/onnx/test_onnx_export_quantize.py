"""Per-tensor quantization in ONNX: QuantizeLinear/DequantizeLinear for quint8/qint8, the
spelled-out form for qint32; int_repr is the stored integers. Every op case must match
torch exactly (integers bit for bit, dequantized floats too)."""
from __future__ import annotations

import pytest

from onnx_export_util import assert_close, export_module, op_types
from pnnx_op_cases.registry import all_cases

CASES = [c for c in all_cases() if c.op in ("torch.quantize_per_tensor", "torch.dequantize")]
pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions.*:UserWarning")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_quantization_matches_torch_exactly(case, tmp_path):
    got, want, model, _ = export_module(case.make_model(), case.make_inputs(), tmp_path)
    assert_close(got, want, atol=0, rtol=0)  # integers bit for bit, dequantized floats too
    uses_linear_ops = "qint32" not in case.id
    assert ("QuantizeLinear" in op_types(model)) == uses_linear_ops


def test_dequantize_of_an_unknown_quantizer_is_refused(tmp_path):
    from pnnx_reference.emit.onnx.families.quantize import _scale_zero_point
    from pnnx_reference.errors import Unsupported

    with pytest.raises(Unsupported, match="does not come from torch.quantize_per_tensor"):
        _scale_zero_point(None)
