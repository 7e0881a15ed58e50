"""Our ncnn.param next to upstream pnnx's for the same module (fixtures/): the same layer
types with the same param ids, and the same ncnn.bin bytes, except where we lower differently
on purpose (listed with the reason)."""
from __future__ import annotations

import pytest

from ncnn_export_helpers import FIXTURES, exported, param_layers, upstream_cases

DIFFERENT_ON_PURPOSE = {
    # ncnn's InnerProduct already treats a 2-d blob as rows: no Reshape/Gemm/Reshape needed
    "linear_3d": "InnerProduct on the (m,k) blob instead of Reshape + Gemm + Reshape",
    # upstream keeps a leading 1 (2=1) on this view; ours writes the batch-dropped 2-d shape
    "view": "Reshape 0=144 1=8 instead of 0=144 1=8 2=1",
    # a (8,1,1) constant already has the blob's rank: no Reshape (upstream reshapes it to 4-d),
    # and each MemoryData is emitted where it is first used
    "expr_const": "MemoryData + BinaryOp without the Reshape upstream inserts",
}
CASES = upstream_cases()


@pytest.mark.parametrize("name", CASES)
def test_layers_and_param_ids_match_upstream(name):
    ours = param_layers(f"{exported(name, 'upstream')}.ncnn.param")
    theirs = param_layers(FIXTURES / name / "model.ncnn.param")
    if name in DIFFERENT_ON_PURPOSE:
        assert ours != theirs, f"{name} now matches upstream: drop it from DIFFERENT_ON_PURPOSE"
        return
    assert ours == theirs


@pytest.mark.parametrize("name", [n for n in CASES if n not in DIFFERENT_ON_PURPOSE])
def test_bin_bytes_match_upstream(name):
    ours = open(f"{exported(name, 'upstream')}.ncnn.bin", "rb").read()
    assert ours == (FIXTURES / name / "model.ncnn.bin").read_bytes()
