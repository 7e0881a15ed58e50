"""torch.* tensor factories. Each case ties the factory to an input (its size, or an add)
so that torch.jit.trace has something to trace."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table

_UNINIT = "torch.empty returns uninitialised memory; compare shape and dtype only"
_RANDOM = "draws from the global RNG at every call; parity on statistics only"


@family("torch.arange")
def _arange():
    return table("torch.arange", [
        ("end_from_size", "x0 + torch.arange(x0.size(-1))", [f(2, 3, 8)]),
        ("start_end_step", "x0 * torch.arange(1, 13, 2)", [f(4, 6)]),
        ("float_step", "x0 + torch.arange(0.0, 1.0, 0.125)", [f(2, 8)]),
        ("dtype_f32", "torch.arange(x0.size(0), dtype=torch.float32) + x0.sum()", [f(13, 2)]),
        ("int_index", "x0[torch.arange(0, x0.size(0), 2)]", [f(6, 4)]),
        ("neg_step", "x0 + torch.arange(5, 0, -1)", [f(3, 5)]),
    ])


def _filled(op: str, fn: str, value: str):
    """torch.zeros / ones / full: sizes from inputs, from literals, with dtypes."""
    v = f", {value}" if value else ""
    return table(op, [
        ("shape_of_input", f"x0 + {fn}(x0.shape{v})", [f(1, 3, 8, 8)]),
        ("size_based", f"{fn}((x0.size(0), 13){v}) + x0.mean()", [f(2, 5)]),
        ("literal_bcast", f"x0 * {fn}((1, 4, 1){v})", [f(2, 4, 6)]),
        ("dtype_i64", f"{fn}((x0.size(0), 3){v}, dtype=torch.int64) + x0", [i(4, 3)]),
        ("cat_with", f"torch.cat((x0, {fn}((2, x0.size(1)){v})), 0)", [f(3, 16)]),
    ])


family("torch.zeros")(lambda: _filled("torch.zeros", "torch.zeros", ""))
family("torch.ones")(lambda: _filled("torch.ones", "torch.ones", ""))
family("torch.full")(lambda: _filled("torch.full", "torch.full", "2.5"))


def _like(op: str, fn: str, value: str):
    v = f", {value}" if value else ""
    return table(op, [
        ("r4", f"x0 + {fn}(x0{v})", [f(1, 3, 8, 8)]),
        ("dtype_i64", f"{fn}(x0{v}, dtype=torch.int64)", [f(2, 13)]),
        ("from_int", f"{fn}(x0{v}) * x0", [i(3, 4)]),
        ("of_noncontig", f"{fn}(x0.t(){v}) + x1", [f(4, 5), f(5, 4)]),
        ("only_output", f"{fn}(x0{v})", [f(16)]),
    ])


family("torch.zeros_like")(lambda: _like("torch.zeros_like", "torch.zeros_like", ""))
family("torch.ones_like")(lambda: _like("torch.ones_like", "torch.ones_like", ""))
family("torch.full_like")(lambda: _like("torch.full_like", "torch.full_like", "-1.5"))


@family("torch.empty")
def _empty():
    r = {"reasons": {"random": _UNINIT}}
    return table("torch.empty", [
        ("filled", "torch.empty(x0.shape).fill_(0.5) + x0", [f(1, 3, 8, 8)]),
        ("zeroed_size_based", "torch.empty(x0.size(0), 13).zero_() + x0.sum()", [f(2, 5)]),
        ("raw", "x0.sum() + torch.empty(3, 4).shape[0]", [f(2, 2)]),
        ("raw_output", "torch.empty((x0.size(0), 4))", [f(3, 2)], r),
        ("raw_dtype", "torch.empty(5, dtype=torch.int64) * 0 + x0", [i(5)]),
    ])


@family("torch.empty_like")
def _empty_like():
    r = {"reasons": {"random": _UNINIT}}
    return table("torch.empty_like", [
        ("filled", "torch.empty_like(x0).fill_(2.0) * x0", [f(1, 3, 8, 8)]),
        ("zeroed", "torch.empty_like(x0).zero_() + x0", [f(2, 13)]),
        ("raw", "torch.empty_like(x0)", [f(4, 4)], r),
        ("raw_dtype", "torch.empty_like(x0, dtype=torch.int32)", [f(3, 2)], r),
        ("shape_only_use", "x0.view(torch.empty_like(x0).shape[0], -1)", [f(2, 3, 4)]),
    ])


@family("torch.linspace")
def _linspace():
    return table("torch.linspace", [
        ("steps_from_size", "x0 + torch.linspace(0, 1, x0.size(-1))", [f(2, 3, 8)]),
        ("neg_range", "x0 * torch.linspace(-1.0, 1.0, 13)", [f(4, 13)]),
        ("steps1", "x0 + torch.linspace(2.0, 5.0, 1)", [f(3, 1)]),
        ("dtype_f64", "torch.linspace(0, 2, 5, dtype=torch.float64) + x0", [f(5, dtype="f64")]),
        ("grid_coords", "x0 + torch.linspace(-1, 1, 4).view(1, 4, 1)", [f(2, 4, 6)]),
    ])


@family("torch.eye")
def _eye():
    return table("torch.eye", [
        ("n_from_size", "x0 + torch.eye(x0.size(0))", [f(5, 5)]),
        ("rect", "x0 * torch.eye(3, 4)", [f(3, 4)]),
        ("batched_add", "x0 + torch.eye(4)", [f(2, 4, 4)]),
        ("dtype_bool_mask", "x0.masked_fill(torch.eye(6, dtype=torch.bool), 0.0)", [f(6, 6)]),
        ("n13", "torch.mm(x0, torch.eye(13))", [f(2, 13)]),
    ])


def _random_rows(op: str, rows: list[tuple]):
    return table(op, rows, reasons={"random": _RANDOM})


family("torch.randn")(lambda: _random_rows("torch.randn", [
    ("shape_of_input", "x0 + torch.randn(x0.shape)", [f(1, 3, 8, 8)]),
    ("size_based", "torch.randn(x0.size(0), 16) * x0.std()", [f(4, 3)]),
    ("literal", "x0 * torch.randn(2, 5)", [f(2, 5)]),
    ("dtype_f64", "torch.randn(3, 4, dtype=torch.float64) + x0", [f(3, 4, dtype="f64")]),
    ("only_output", "torch.randn(x0.size(1), 13)", [f(2, 7)]),
]))
family("torch.randn_like")(lambda: _random_rows("torch.randn_like", [
    ("r4", "x0 + torch.randn_like(x0)", [f(1, 3, 8, 8)]),
    ("scaled_noise", "x0 + 0.1 * torch.randn_like(x0)", [f(2, 13)]),
    ("only_output", "torch.randn_like(x0)", [f(16)]),
    ("dtype_f64", "torch.randn_like(x0, dtype=torch.float64)", [f(3, 4)]),
    ("of_noncontig", "torch.randn_like(x0.t()) * 2.0", [f(4, 6)]),
]))
family("torch.normal")(lambda: _random_rows("torch.normal", [
    ("tensor_mean_std", "torch.normal(x0, x1)", [f(3, 8), f(3, 8, low=0.1, high=1.0)]),
    ("tensor_mean_scalar_std", "torch.normal(x0, 0.5)", [f(2, 13)]),
    ("scalar_mean_tensor_std", "torch.normal(0.0, x0)", [f(16, low=0.1, high=2.0)]),
    ("scalars_size", "x0 + torch.normal(1.0, 2.0, size=(2, 4))", [f(2, 4)]),
    ("scalars_size_from_input", "torch.normal(0.0, 1.0, size=x0.shape) * x0", [f(1, 3, 4, 4)]),
]))
