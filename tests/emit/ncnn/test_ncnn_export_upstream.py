"""Our ncnn lowering fed upstream pnnx's own graph of the same module (fixtures/): it runs in
ncnn and matches torch, and our ncnn.param has upstream's layer types with the same param ids
and the same ncnn.bin bytes, except where we lower differently on purpose (listed with the
reason). The fixture models are the only hand-written ncnn models (upstream_fixture_cases.py);
`block`, a small network with no table row, also runs through our own capture here."""
from __future__ import annotations

import ncnn
import pytest

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import (FIXTURES, FP32, LOW_PRECISION, exported, param_layers, torch_outputs,
                                 upstream_cases)
from upstream_fixture_cases import CASES as MODELS
from upstream_fixture_cases import build

DIFFERENT_ON_PURPOSE = {
    # ncnn's InnerProduct already treats a 2-d blob as rows: no Reshape/Gemm/Reshape needed
    "linear_3d": "InnerProduct on the (m,k) blob instead of Reshape + Gemm + Reshape",
    # upstream keeps a leading 1 (2=1) on this view; ours writes the batch-dropped 2-d shape
    "view": "Reshape 0=144 1=8 instead of 0=144 1=8 2=1",
    # a (8,1,1) constant already has the blob's rank: no Reshape (upstream reshapes it to 4-d),
    # and each MemoryData is emitted where it is first used
    "expr_const": "MemoryData + BinaryOp without the Reshape upstream inserts",
}
# ids upstream writes that the layer's load_param never reads (formats/ncnn_layer_params.tsv):
# ours leaves them out, the layers and every other id still match
STRAY_IDS = {
    "conv2d_reflect": {("Convolution", "7")},  # 7 is ConvolutionDepthWise's group; Convolution ignores it
}
CASES = upstream_cases()


def _check(name: str, mode: str, tol: dict, source: str) -> None:
    model, inputs = build(name)
    got = run_ncnn(exported(name, source), inputs, mode)
    assert_close(got, torch_outputs(model, inputs), tol, f"{name} [{mode}, {source} graph]")


def test_every_fixture_has_its_model_and_every_model_a_fixture():
    assert sorted(MODELS) == CASES


@pytest.mark.parametrize("name", CASES)
def test_ncnn_from_upstream_graph(name):
    """The same lowering fed upstream pnnx's graph of the same module."""
    _check(name, "fp32", FP32, source="upstream")


@pytest.mark.parametrize("name", CASES)
def test_layers_and_param_ids_match_upstream(name):
    ours = param_layers(f"{exported(name, 'upstream')}.ncnn.param")
    theirs = param_layers(FIXTURES / name / "model.ncnn.param")
    stray = STRAY_IDS.get(name, set())
    assert stray <= {(t, i) for t, ids in theirs for i in ids}, f"{name}: upstream no longer writes {stray}"
    theirs = [(t, tuple(i for i in ids if (t, i) not in stray)) for t, ids in theirs]
    if name in DIFFERENT_ON_PURPOSE:
        assert ours != theirs, f"{name} now matches upstream: drop it from DIFFERENT_ON_PURPOSE"
        return
    assert ours == theirs


@pytest.mark.parametrize("name", [n for n in CASES if n not in DIFFERENT_ON_PURPOSE])
def test_bin_bytes_match_upstream(name):
    ours = open(f"{exported(name, 'upstream')}.ncnn.bin", "rb").read()
    assert ours == (FIXTURES / name / "model.ncnn.bin").read_bytes()


@pytest.mark.parametrize("mode,tol", [("fp32", FP32), ("default", LOW_PRECISION),
                                      pytest.param("vulkan", LOW_PRECISION, marks=[
                                          pytest.mark.vulkan,
                                          pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")])])
def test_block_from_our_capture(mode, tol):
    """The network has no op case: our own capture of it runs in every ncnn mode."""
    _check("block", mode, tol, source="ours")
