"""The coverage sweep (benchmarks/ncnn_coverage.py): its comparison, its batch-1 variants and a
small end-to-end run through the worker processes."""
from __future__ import annotations

import json

import torch

from pnnx_op_cases.registry import get_case
from script_modules import benchmark



def _module():
    return benchmark("ncnn_coverage")


def test_compare_drops_size_one_axes_but_not_order():
    cov = _module()
    x = torch.arange(12.0).reshape(1, 3, 4)
    assert cov._compare([x.numpy()[0]], [x]) is None
    assert "shape" in cov._compare([x.numpy()[0].T.copy()], [x])
    assert "differ" in cov._compare([x.numpy()[0] + 0.01], [x])
    assert "outputs" in cov._compare([], [x])


def test_batch1_variant_sets_dim0_of_rank2_inputs():
    cov = _module()
    case = get_case("torch.mm/basic")
    variant = cov.batch1_variant(case)
    assert [s.shape[0] for s in variant.inputs] == [1, 1]
    assert [s.shape[1:] for s in variant.inputs] == [s.shape[1:] for s in case.inputs]


def test_sweep_end_to_end(tmp_path, capsys):
    cov = _module()
    out = tmp_path / "cov.json"
    assert cov.main(["--tier", "full", "--pattern", "nn.ReLU6/*", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["cases"] and all(r["outcome"] == "pass" for r in report["cases"].values())
    assert report["tables"]["nn"]["rows_passing"] == 1
    assert "nn" in capsys.readouterr().out
