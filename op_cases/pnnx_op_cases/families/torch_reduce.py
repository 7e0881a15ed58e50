"""torch.*: the `reduce` family (emit/*/families/reduce.py): all, amax, amin, any, argmax, argmin,
logsumexp, max, mean, min, norm, prod, std, sum, var, var_mean."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import b, case, f, i, reduce, table


MO = {"tags": {"multi-output"}}


_SUM_TOL = (1e-5, 1e-5, "summation order differs between runtimes")


family("torch.sum")(lambda: reduce("torch.sum", "torch.sum({x}, {args})", extra=[
    ("int", "torch.sum(x0, 1)", [i(3, 4)]), ("bool", "torch.sum(x0)", [b(5, 6)]),
    ("dtype_f64", "torch.sum(x0, -1, dtype=torch.float64)", [f(2, 8)])], tol=_SUM_TOL))


family("torch.mean")(lambda: reduce("torch.mean", "torch.mean({x}, {args})", extra=[
    ("dtype_f64", "torch.mean(x0, (1, 2), dtype=torch.float64)", [f(2, 3, 4)])], tol=_SUM_TOL))


family("torch.prod")(lambda: reduce("torch.prod", "torch.prod({x}, {args})", 0.5, 1.5, tuple_dims=False, extra=[
    ("int", "torch.prod(x0, 1)", [i(3, 4, low=1, high=4)])]))


family("torch.amax")(lambda: reduce("torch.amax", "torch.amax({x}, {args})", extra=[
    ("int", "torch.amax(x0, 0)", [i(5, 3)])]))


family("torch.amin")(lambda: reduce("torch.amin", "torch.amin({x}, {args})", extra=[
    ("int", "torch.amin(x0, (0, 1))", [i(5, 3, 2)])]))


family("torch.logsumexp")(lambda: reduce("torch.logsumexp", "torch.logsumexp({x}, {args})", -4, 4, full=False,
                                         tol=_SUM_TOL))


def _var_std(op: str, fn: str):
    return reduce(op, f"{fn}({{x}}, {{args}})", full=True, extra=[
        ("unbiased_false", f"{fn}(x0, 1, unbiased=False)", [f(2, 13, 4)]),
        ("correction0_keepdim", f"{fn}(x0, dim=-1, correction=0, keepdim=True)", [f(3, 16)]),
        ("correction2", f"{fn}(x0, dim=(1, 2), correction=2)", [f(2, 4, 5)]),
    ], tol=_SUM_TOL)


family("torch.var")(lambda: _var_std("torch.var", "torch.var"))


family("torch.std")(lambda: _var_std("torch.std", "torch.std"))


family("torch.var_mean")(lambda: table("torch.var_mean", [
    ("d1", "torch.var_mean(x0, 1)", [f(2, 13, 6)], MO),
    ("dneg1_keepdim", "torch.var_mean(x0, dim=-1, keepdim=True)", [f(1, 4, 16)], MO),
    ("tuple_correction0", "torch.var_mean(x0, dim=(2, 3), correction=0)", [f(2, 8, 5, 7)], MO),
    ("all", "torch.var_mean(x0)", [f(3, 4, 5)], MO),
    ("unbiased_false", "torch.var_mean(x0, 0, unbiased=False)", [f(12, 3)], MO),
], tol=_SUM_TOL))


@family("torch.norm")
def _norm():
    return table("torch.norm", [
        ("fro_all", "torch.norm(x0)", [f(1, 3, 8, 8)]),
        ("p2_d1", "torch.norm(x0, dim=1)", [f(2, 13, 6)]),
        ("p1_dneg1_keepdim", "torch.norm(x0, p=1, dim=-1, keepdim=True)", [f(2, 4, 16)]),
        ("p3_tuple", "torch.norm(x0, p=3, dim=(1, 2))", [f(2, 4, 5)]),
        ("inf", "torch.norm(x0, p=float('inf'), dim=1)", [f(3, 12)]),
        ("fro_tuple", "torch.norm(x0, p='fro', dim=(0, 1))", [f(4, 5)]),
        ("r1", "torch.norm(x0, 2, 0)", [f(16)]),
    ], tol=_SUM_TOL)


def _max_min(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("all", f"{fn}(x0)", [f(1, 3, 8, 8)]),
        ("d1", f"{fn}(x0, 1)", [f(2, 13, 5)], MO),
        ("dneg1_keepdim", f"v, idx = {fn}(x0, dim=-1, keepdim=True)\nv, idx", [f(2, 4, 6)], MO),
        ("d0_values_only", f"{fn}(x0, 0)[0]", [f(7, 3)]),
        ("binary_other", f"{fn}(x0, x1)", [f(3, 4), f(3, 4)]),
        ("binary_bcast", f"{fn}(x0, x1)", [f(2, 3, 4), f(4)]),
        ("int", f"{fn}(x0, 1)[0]", [i(3, 5)]),
        ("noncontig", f"{fn}(x0.transpose(1, 2), 1)[0]", [f(2, 4, 6)]),
    ])


family("torch.max")(lambda: _max_min("max"))


family("torch.min")(lambda: _max_min("min"))


def _arg(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("all", f"{fn}(x0)", [f(1, 3, 8, 8)]),
        ("d1", f"{fn}(x0, 1)", [f(2, 13, 5)]),
        ("dneg1_keepdim", f"{fn}(x0, dim=-1, keepdim=True)", [f(2, 4, 6)]),
        ("r1", f"{fn}(x0, 0)", [f(16)]),
        ("int", f"{fn}(x0, 1)", [i(3, 5, high=1000)]),
        ("noncontig", f"{fn}(x0.t(), 0)", [f(4, 6)]),
    ])


family("torch.argmax")(lambda: _arg("argmax"))


family("torch.argmin")(lambda: _arg("argmin"))


def _all_any(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("bool_all", f"{fn}(x0)", [b(3, 8)]),
        ("bool_d1", f"{fn}(x0, 1)", [b(2, 13, 3)]),
        ("bool_dneg1_keepdim", f"{fn}(x0, dim=-1, keepdim=True)", [b(2, 4, 6)]),
        ("from_compare", f"{fn}(x0 > -0.9, 0)", [f(5, 4)]),
        ("float", f"{fn}(x0, 1)", [f(3, 4, low=-1, high=2)]),
        ("int", f"{fn}(x0)", [i(12, high=3)]),
    ])


family("torch.all")(lambda: _all_any("all"))


family("torch.any")(lambda: _all_any("any"))


@family("torch.max", "torch.prod", "torch.norm", "torch.mean")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("torch.max", "binary_other_b1", "torch.max(x0, x1)", [f(1, 3, 4), f(1, 3, 4)])
    yield case("torch.max", "d2_values_b1", "torch.max(x0, dim=2)[0]", [f(1, 8, 12, 12)])
    yield case("torch.prod", "d1_b1", "torch.prod(x0, dim=1)", [f(1, 3, 5, low=0.5, high=1.5)])
    yield case("torch.norm", "p2_d1_b1", "torch.norm(x0, dim=1)", [f(1, 6, 5)], tol=_SUM_TOL)
    yield case("torch.mean", "d1_r4_b1", "torch.mean(x0, dim=1)", [f(1, 8, 12, 12)], tol=_SUM_TOL)
