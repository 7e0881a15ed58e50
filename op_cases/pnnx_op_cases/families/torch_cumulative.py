"""torch.*: the `cumulative` family (emit/*/families/cumulative.py): cumprod, cumsum."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, i, table


_SUM_TOL = (1e-5, 1e-5, "summation order differs between runtimes")


def _scan(name: str, lo: float, hi: float):
    fn = f"torch.{name}"
    return table(fn, [
        ("d1", f"{fn}(x0, 1)", [f(1, 3, 8, 8, low=lo, high=hi)]),
        ("dneg1", f"{fn}(x0, dim=-1)", [f(2, 13, low=lo, high=hi)]),
        ("r1", f"{fn}(x0, 0)", [f(16, low=lo, high=hi)]),
        ("int", f"{fn}(x0, 0)", [i(4, 3, low=1, high=4)]),
        ("dtype_f64", f"{fn}(x0, 1, dtype=torch.float64)", [f(2, 5, low=lo, high=hi)]),
        ("noncontig", f"{fn}(x0.t(), 1)", [f(5, 4, low=lo, high=hi)]),
    ], tol=_SUM_TOL)


family("torch.cumsum")(lambda: _scan("cumsum", -1, 1))


family("torch.cumprod")(lambda: _scan("cumprod", 0.5, 1.5))
