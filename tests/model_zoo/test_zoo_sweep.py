"""The torchvision sweep (pnnx_model_zoo/sweep.py): full tier only, outside the default run,
selected by name or as `sweep`, and built deterministically with calibrated batch-norm statistics."""
from __future__ import annotations

import warnings

import torch

from pnnx_conformance.cli.run import _zoo_run
from pnnx_model_zoo import run
from pnnx_model_zoo.zoo import all_cases, zoo_cases

SWEEP = [c for c in all_cases() if c.sweep]


def test_the_sweep_is_full_tier_and_kept_out_of_the_zoo():
    assert len(SWEEP) >= 20 and all(c.tier == "full" and c.table == "models" for c in SWEEP)
    tier = {c for c in all_cases() if c.transformers}  # the transformers tier (test_zoo_transformers.py)
    assert not set(SWEEP) & set(zoo_cases()) and set(all_cases()) == set(SWEEP) | set(zoo_cases()) | tier
    assert len({c.id for c in all_cases()}) == len(all_cases())


def test_select_names_the_sweep_and_its_networks():
    assert run.select(None) == list(zoo_cases())
    assert run.select("sweep") == SWEEP
    assert run.select("all") == list(all_cases())
    assert [c.id for c in run.select("raft_small")] == ["models.raft_small/random_init"]


def test_only_a_full_tier_run_takes_the_sweep(tmp_path):
    smoke, full = _zoo_run(tmp_path / "s", 1, "smoke"), _zoo_run(tmp_path / "f", 1, "full")
    assert smoke.cases == list(zoo_cases()) and full.cases == list(all_cases())


def test_a_sweep_network_is_deterministic_with_calibrated_batch_norms():
    case = next(c for c in SWEEP if c.op == "models.shufflenet_v2_x0_5")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = case.run_eager(), case.run_eager()
        model = case.make_model()
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert norms and not model.training and all(m.num_batches_tracked.item() == 1 for m in norms)
