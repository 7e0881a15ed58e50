"""The F / Tensor / torch family helpers render what they describe."""
from __future__ import annotations

import pytest

from pnnx_op_cases.families.F_Tensor_torch_kit import binary, case, f, i, reduce, table, unary


def test_case_setup_lines_then_result():
    c = case("torch.add", "demo", "y = x0 * 2.0\ntorch.add(y, x1)", [f(2, 3), f(2, 3)])
    assert "        y = x0 * 2.0\n        return torch.add(y, x1)\n" in c.source
    assert {"multi-input", "ours"} <= c.tags
    a, b = c.make_inputs()
    assert c.run_eager()[0].equal(a * 2.0 + b)


def test_case_tolerance_and_reason_tags():
    c = case("F.dropout", "demo", "F.dropout(x0)", [f(4)], reasons={"random": "why"}, tol=(1e-3, 0, "because"))
    assert "random" in c.tags and c.tolerance.reason == "because"
    with pytest.raises(ValueError, match="reason"):
        case("F.dropout", "demo2", "F.dropout(x0)", [f(4)], tags={"random"})


def test_table_tags_exactly_first_case_smoke():
    cases = table("torch.abs", [("a", "torch.abs(x0)", [f(3)]), ("b", "torch.abs(x0)", [i(3)])])
    assert [c.tier for c in cases] == ["smoke", "full"]
    assert "integer" in cases[1].tags


def test_reduce_variants_render_dims():
    cases = {c.variant: c for c in reduce("torch.sum", "torch.sum({x}, {args})")}
    assert "return torch.sum(x0)\n" in cases["all"].source
    assert "torch.sum(x0, dim=(-1, 1), keepdim=True)" in cases["dneg_tuple_keepdim"].source
    assert "noncontiguous" in cases["noncontig_d1"].tags


def test_unary_and_binary_cover_shared_axes():
    u = {c.variant for c in unary("torch.neg", "torch.neg({x})", with_ints=True)}
    assert {"r0_scalar", "r1_n13", "r4_noncontig", "i32"} <= u
    bcases = {c.variant: c for c in binary("torch.mul", "torch.mul({a}, {b})", scalar="3")}
    assert bcases["bcast_rank"].inputs[1].shape == (8,)
    assert "torch.mul(x0, 3)" in bcases["scalar"].source
