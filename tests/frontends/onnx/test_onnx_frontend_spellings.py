"""Issue 34, the ONNX door: torch.onnx spells some PyTorch calls as pieces (Log of Sigmoid, a
ReduceL2, Resize with computed scales); the frontend folds them back to the one call, so the
generated _pnnx.py is bit-identical to torch on them, as upstream's is."""
import contextlib
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from onnx_models import op_types, run_generated
from pnnx_reference import api


class Spelled(nn.Module):
    def forward(self, x):
        return (F.logsigmoid(x), nn.LogSigmoid()(x * 3), torch.norm(x, dim=1), torch.norm(x),
                F.interpolate(x, scale_factor=2, mode="bilinear"), F.upsample(x, size=(7, 9), mode="nearest"),
                nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=True)(x),
                F.interpolate(x, scale_factor=(1.7, 2.3), mode="bicubic"))


@pytest.mark.parametrize("opset", [13, 17])
def test_torch_onnx_spellings_fold_back_bit_identical(tmp_path, opset):
    torch.manual_seed(0)
    x = torch.randn(1, 3, 4, 4) * 4
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(Spelled().eval(), (x,), str(tmp_path / "s.onnx"), dynamo=False, opset_version=opset)
    api.export_onnx(tmp_path / "s.onnx", tmp_path, "s")
    types = op_types(tmp_path / "s.pnnx.param")
    assert types.count("F.logsigmoid") == 2 and "Tensor.sigmoid" not in types, types
    other = torch.randn(1, 3, 4, 4) * 4
    with torch.no_grad():
        expected = Spelled()(other)
    got = run_generated(tmp_path / "s_pnnx.py", [other])
    assert all(torch.equal(g, e) for g, e in zip(got, expected)), [float((g - e).abs().max()) for g, e in zip(got, expected)]
