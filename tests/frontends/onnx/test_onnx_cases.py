"""The ONNX table's cases: the oracle (onnxruntime) agrees with the spec's reference evaluator on
every case, and every smoke case converts with the ONNX frontend to a `_pnnx.py` that computes
what the oracle does (the conformance harness runs all of them through every backend)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from onnx.reference import ReferenceEvaluator

from onnx_models import run_generated
from pnnx_op_cases import registry, tables
from pnnx_reference import api

pytestmark = pytest.mark.op_case_sweep  # coverage on a sample of the cases (coverage_sample.py)

CASES = [c for c in registry.all_cases() if c.table == "onnx"]
SMOKE = [c for c in CASES if c.tier == "smoke"]


def test_every_row_has_cases_and_a_smoke_case():
    rows = {r.op for r in tables.load_table("onnx")}
    assert rows == {c.op for c in CASES} == {c.op for c in SMOKE}
    assert len(rows) == 81


def test_cases_cover_the_certified_opsets():
    opsets = {int(line.split("=")[1]) for c in CASES for line in c.source.splitlines()
              if line.strip().startswith("opset =")}
    assert set(range(11, 24)) - opsets <= {12, 15, 16} and min(opsets) <= 11 and max(opsets) == 23


def _batch_norm(p, x):
    shape = [1, -1] + [1] * (x.dim() - 2)
    eps = 0.01 if x.dim() == 2 else 1e-5
    return (p["scale"].view(shape) * (x - p["mean"].view(shape)) / torch.sqrt(p["var"].view(shape) + eps)
            + p["bias"].view(shape))


def _linear_asymmetric(x, dim, scale):
    """Upsample(mode=linear): input coordinate = output / scale, neighbours clamped to the edge."""
    n = x.shape[dim]
    source = torch.arange(int(n * scale), dtype=torch.float64) / scale
    low = source.floor().long().clamp(0, n - 1)
    shape = [1] * x.dim()
    shape[dim] = -1
    weight = (source - source.floor()).to(x.dtype).view(shape)
    return x.index_select(dim, low) * (1 - weight) + x.index_select(dim, (low + 1).clamp(max=n - 1)) * weight


# Where onnx's reference evaluator (onnx 1.23) disagrees with the spec or cannot run the case,
# the oracle is held to an independent computation of the spec's formula instead.
INDEPENDENT = {
    # the evaluator's BatchNormalization does not give y = scale (x - mean) / sqrt(var + eps) + B here
    "onnx.BatchNormalization/1d_eps": _batch_norm,
    "onnx.BatchNormalization/2d": _batch_norm,
    # its LRN window differs from the spec's [c - floor((size-1)/2), c + ceil((size-1)/2)]
    "onnx.LRN/size5_params": lambda p, x: F.local_response_norm(x, 5, 0.001, 0.5, 2.0),
    # before opset 13 softmax acts on the input flattened to 2-d at the axis; the evaluator does not
    "onnx.Softmax/opset11_axis1": lambda p, x: F.softmax(x.reshape(2, -1), 1).reshape(x.shape),
    "onnx.LogSoftmax/opset11_axis1": lambda p, x: F.log_softmax(x.reshape(2, -1), 1).reshape(x.shape),
    # it drops the pooled axis of a 1-d global pool
    "onnx.GlobalMaxPool/1d": lambda p, x: x.amax(-1, keepdim=True),
    # it fails on grouped 1-d and on output_shape transposed convolutions
    "onnx.ConvTranspose/group_1d": lambda p, x: F.conv_transpose1d(x, p["W"], p["B"], groups=2),
    # output_shape 10 from 11: total padding 1, at the start (auto_pad NOTSET)
    "onnx.ConvTranspose/output_shape": lambda p, x: F.conv_transpose2d(x, p["W"], stride=2)[:, :, 1:, 1:],
    # it fails on negative (cropping) pads
    "onnx.Pad/crop": lambda p, x: F.pad(x, [-2, 0, -1, 1]),
    # it has no Upsample before opset 9's form it was given
    "onnx.Upsample/nearest_attr_opset7": lambda p, x: x.repeat_interleave(3, 2).repeat_interleave(2, 3),
    "onnx.Upsample/linear_opset9": lambda p, x: _linear_asymmetric(_linear_asymmetric(x, 2, 2.0), 3, 3.0),
}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_oracle_agrees_with_the_spec(case):
    """onnxruntime against onnx's reference evaluator, or against the formula where that is wrong."""
    model = case.make_model()
    inputs = case.make_inputs()
    with torch.no_grad():
        got = model(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    if case.id in INDEPENDENT:
        params = {k: v.detach() for k, v in model.initializers().items()}
        want = [INDEPENDENT[case.id](params, *inputs).numpy()]
    else:
        feeds = {name: x.numpy() for (name, _, _), x in zip(model.inputs, inputs)}
        want = ReferenceEvaluator(model.onnx_model()).run(None, feeds)
    for g, w in zip(got, want):
        assert g.shape == tuple(np.shape(w)), case.id
        np.testing.assert_allclose(g.numpy().astype(np.float64), np.asarray(w).astype(np.float64),
                                   rtol=1e-4, atol=1e-5, err_msg=case.id)


@pytest.mark.parametrize("case", SMOKE, ids=[c.id for c in SMOKE])
def test_smoke_case_converts_and_matches_the_oracle(case, tmp_path):
    model, inputs = case.make_model(), case.make_inputs()
    with torch.no_grad():
        want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    result = api.export_onnx(model.onnx_model(), tmp_path, "m", inputs=inputs)
    got = run_generated(result.paths["pnnxpy"], inputs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.double(), w.double(), rtol=1e-4, atol=1e-5)
