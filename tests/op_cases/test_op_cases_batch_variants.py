"""Batch variants derived from each row's smoke case (pnnx_op_cases.batch_variants): without a
batch axis and with a batch of 2 to 5, at each lower rank PyTorch accepts."""
from __future__ import annotations

from collections import Counter

import pytest

from pnnx_op_cases import batch_variants, registry
from pnnx_op_cases.batch_variants import TAG_BATCHED, batch_size, batched_inputs, candidates, derive
from pnnx_op_cases.builders import call_case, ints, module_case, rand

CONV = module_case("nn.Conv2d", "k3", "nn.Conv2d(4, 8, 3)", [rand(1, 4, 9, 10)], smoke=True)
ADD = call_case("torch.add", "bcast", "x0 + x1", [rand(1, 3, 5), rand(5)], smoke=True)
MATMUL = call_case("torch.matmul", "r2", "x0 @ x1", [rand(4, 13), rand(13, 8)], smoke=True)


def _shapes(case):
    return [s.shape for s in case.inputs]


def test_the_batch_is_dim_0_of_the_inputs_that_share_input_0s():
    assert batched_inputs(CONV) == [0]
    assert batched_inputs(ADD) == [0]          # the (5,) operand broadcasts: no batch
    assert batched_inputs(MATMUL) == [0]       # (13, 8) is a matrix, not a batch of 13


def test_candidates_drop_the_batch_or_resize_it_at_each_lower_rank():
    found = {c.id: _shapes(c) for c in candidates(CONV)}
    b = batch_size("nn.Conv2d/k3-batch")
    assert found["nn.Conv2d/k3-nobatch"] == [(4, 9, 10)]
    assert found[f"nn.Conv2d/k3-batch{b}"] == [(b, 4, 9, 10)]
    b2 = batch_size("nn.Conv2d/k3-batch-rank3")
    assert found["nn.Conv2d/k3-nobatch-rank2"] == [(9, 10)] and found[f"nn.Conv2d/k3-batch{b2}-rank3"] == [(b2, 9, 10)]
    assert found["nn.Conv2d/k3-nobatch-rank1"] == [(10,)]
    assert {c.id: _shapes(c) for c in candidates(ADD)}["torch.add/bcast-nobatch"] == [(3, 5), (5,)]


def test_batch_sizes_are_2_to_5_and_never_the_bases_own():
    assert {batch_size(f"x/{i}-batch") for i in range(200)} == {2, 3, 4, 5}
    base = module_case("nn.Linear", "b3", "nn.Linear(4, 2)", [rand(3, 4)], smoke=True)
    assert all(c.inputs[0].shape[0] != 3 for c in candidates(base) if TAG_BATCHED in c.tags)


def test_only_what_pytorch_runs_is_generated(tmp_path, monkeypatch):
    """conv2d takes (N, C, H, W) and (C, H, W) only: the rank-2 and rank-1 forms are dropped
    (the rank-3 "batch" form is an unbatched input whose batch size matches the 4 channels)."""
    monkeypatch.setenv("PNNX_CASES_CACHE", str(tmp_path))
    ids = {c.id for c in derive([CONV])}
    b, b3 = batch_size("nn.Conv2d/k3-batch"), batch_size("nn.Conv2d/k3-batch-rank3")
    assert b3 == 4 and ids == {"nn.Conv2d/k3-nobatch", f"nn.Conv2d/k3-batch{b}", "nn.Conv2d/k3-batch4-rank3"}


def test_tags_and_one_smoke_variant_per_row(tmp_path, monkeypatch):
    monkeypatch.setenv("PNNX_CASES_CACHE", str(tmp_path))
    variants = derive([CONV, ADD])
    assert all(bool({"batched", "unbatched"} & v.tags) for v in variants)
    smoke = Counter(v.op for v in variants if v.tier == "smoke")
    assert smoke == {"nn.Conv2d": 1, "torch.add": 1}


def test_verdicts_are_cached_per_source_and_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("PNNX_CASES_CACHE", str(tmp_path))
    first = derive([CONV])
    assert list(tmp_path.glob("batch-variants-*.json"))

    def refuse(case):
        raise AssertionError(f"{case.id} was run again")

    monkeypatch.setattr(batch_variants, "eager_runs", refuse)
    assert [c.id for c in derive([CONV])] == [c.id for c in first]


def test_cases_without_a_batch_or_with_integer_indices_keep_their_other_inputs(tmp_path, monkeypatch):
    monkeypatch.setenv("PNNX_CASES_CACHE", str(tmp_path))
    embed = module_case("nn.Embedding", "r2", "nn.Embedding(10, 4)", [ints(1, 5, high=10)], smoke=True)
    shapes = {c.id: _shapes(c) for c in derive([embed])}
    assert shapes["nn.Embedding/r2-nobatch"] == [(5,)]
    assert candidates(call_case("torch.abs", "r1", "x0.abs()", [rand(7)], smoke=True)) == []


@pytest.mark.parametrize("row", ["nn.Conv2d", "nn.LSTM", "F.max_pool2d", "torch.sum", "torch.add"])
def test_the_registry_has_variants_for_every_kind_of_row(row):
    variants = [c for c in registry.select(op=row) if "-batch" in c.id or "-nobatch" in c.id]
    assert any(TAG_BATCHED in c.tags for c in variants) and any("unbatched" in c.tags for c in variants)
