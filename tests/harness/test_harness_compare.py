"""Comparison metrics and the tolerance table."""
from __future__ import annotations

import numpy as np
import pytest

from pnnx_conformance.compare import bitwise_equal, compare, max_ulp
from pnnx_conformance.tolerances import TABLE, Tolerance, accumulation, tolerance_for
from pnnx_op_cases.case import Case, InputSpec, ToleranceHint

TOL = Tolerance(1e-4, 1e-4, "test")


def test_metrics_recorded_on_pass_and_fail():
    r = np.linspace(-1, 1, 100, dtype=np.float32)
    ok = compare([r + 1e-6], [r], TOL)
    assert ok.ok and 0 < ok.metrics.max_abs < 2e-6 and ok.metrics.cosine == pytest.approx(1.0)
    assert ok.metrics.max_ulp > 0 and ok.metrics.atol == 1e-4
    a = r.copy()
    a[:10] += 0.5
    bad = compare([a], [r], TOL)
    assert not bad.ok and bad.metrics.mismatch_pct == pytest.approx(10.0)
    assert bad.metrics.max_abs == pytest.approx(0.5, rel=1e-5) and "10/100" in bad.message


def test_non_finite_classes_compare_before_values():
    r = np.array([np.nan, np.inf, -np.inf, 1.0], dtype=np.float32)
    assert compare([r.copy()], [r], TOL).ok
    assert not compare([np.array([np.nan, np.inf, np.inf, 1.0], np.float32)], [r], TOL).ok
    assert not compare([np.array([0.0, np.inf, -np.inf, 1.0], np.float32)], [r], TOL).ok


def test_ulp_ignores_sign_of_zero_and_counts_steps():
    assert max_ulp(np.array([-0.0], np.float32), np.array([0.0], np.float32)) == 0
    one = np.float32(1.0)
    assert max_ulp(np.array([np.nextafter(one, np.float32(2))]), np.array([one])) == 1


def test_shapes_counts_and_integers():
    r = np.zeros((1, 3, 4), np.float32)
    assert "shape" in compare([np.zeros((3, 4), np.float32)], [r], TOL).message
    assert compare([np.zeros((3, 4), np.float32)], [r], TOL, loose_rank=True).ok
    assert not compare([r, r], [r], TOL).ok
    ints = np.arange(5)
    assert not compare([ints.astype(np.float32) + 0.5e-4], [ints], TOL).ok  # integers are exact


def test_accumulation_bound_widens_only_what_it_covers():
    r = np.full(4, 100.0, np.float32)
    a = r + 0.05
    assert not compare([a], [r], TOL).ok
    assert compare([a], [r], TOL, extra_bound=[np.full(4, 0.05)]).ok


def test_bitwise_equal():
    r = np.array([1.0, np.nan], np.float32)
    assert bitwise_equal([r.copy()], [r]) == ""
    assert "float64" in bitwise_equal([r.astype(np.float64)], [r])
    assert "1/2" in bitwise_equal([np.array([1.5, np.nan], np.float32)], [r])


def _case(op, hint=None):
    return Case(f"{op}/x", op, "", (InputSpec((1, 2)),), tolerance=hint)


def test_every_table_entry_has_a_reason_and_lookup_order():
    assert all(t.reason for t in TABLE.values())
    assert tolerance_for(_case("F.relu"), "torch", "fp32").exact
    assert tolerance_for(_case("F.relu"), "vendor-x", "fp16") is TABLE[("*", "fp16")]
    hinted = tolerance_for(_case("F.gelu", ToleranceHint(1e-2, 1e-3, "erf approximation")), "ncnn-cpu", "fp32")
    assert hinted.atol == 1e-2 and hinted.rtol == 1e-3 and "erf approximation" in hinted.reason
    assert tolerance_for(_case("F.gelu", ToleranceHint(1, 1, "x")), "torch", "fp32").exact


def test_accumulating_operators():
    assert accumulation("nn.Conv2d") is not None and accumulation("torch.matmul") is not None
    assert accumulation("F.relu") is None


def test_network_level_bound_judges_the_relative_l2_error_of_each_output():
    net = Tolerance(0.0, 0.0, "test", max_rel_l2=1e-2)
    r = np.linspace(-10, 10, 1000, dtype=np.float32)
    noisy = r + np.float32(0.05) * np.sign(r)  # every element off by far more than atol=0
    verdict = compare([noisy], [r], net)
    assert verdict.ok and 0 < verdict.metrics.rel_l2 < 1e-2 and verdict.metrics.mismatch_pct == 0
    wrong = compare([r[::-1].copy()], [r], net)  # same values, another vector
    assert not wrong.ok and wrong.metrics.rel_l2 > 1 and "relative L2 error" in wrong.message
    assert wrong.metrics.mismatch_pct == 100
    assert compare([r], [r], TOL).metrics.rel_l2 is None  # per-element tolerances record none


def test_complex_outputs_compare_both_parts():
    r = (np.linspace(-1, 1, 50) + 1j * np.linspace(2, 3, 50)).astype(np.complex64)
    assert compare([r.copy()], [r], TOL).ok
    wrong_imaginary = (r.real - 1j * r.imag).astype(np.complex64)
    verdict = compare([wrong_imaginary], [r], TOL)
    assert not verdict.ok and verdict.metrics.max_abs == pytest.approx(6.0, rel=1e-5)
    assert not compare([r.real.copy()], [r], TOL).ok  # a real result for a complex oracle
