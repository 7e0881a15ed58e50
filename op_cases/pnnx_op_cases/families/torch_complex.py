"""torch.*: the `complex` family (emit/*/families/complex.py): complex, imag, real, view_as_complex,
view_as_real."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import f, table


_FFT_TOL = (1e-4, 1e-4, "FFT butterflies accumulate rounding in an implementation-defined order")


@family("torch.complex")
def _complex():
    return table("torch.complex", [
        ("r2", "torch.complex(x0, x1)", [f(3, 8), f(3, 8)]),
        ("bcast", "torch.complex(x0, x1)", [f(2, 13), f(13)]),
        ("abs", "torch.complex(x0, x1).abs()", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("f64", "torch.complex(x0, x1)", [f(5, dtype="f64"), f(5, dtype="f64")]),
        ("mul_then_real", "(torch.complex(x0, x1) * torch.complex(x1, x0)).real", [f(4, 4), f(4, 4)]),
    ])


def _part(name: str):
    fn = f"torch.{name}"
    return table(fn, [
        ("of_complex", f"{fn}(torch.complex(x0, x1))", [f(3, 8), f(3, 8)]),
        ("of_fft", f"{fn}(torch.fft.fft(x0))", [f(2, 16)], {"tol": _FFT_TOL}),
        ("of_view_as_complex", f"{fn}(torch.view_as_complex(x0))", [f(4, 13, 2)]),
        ("then_add", f"{fn}(torch.complex(x0, x1)) + x0", [f(1, 3, 4, 4), f(1, 3, 4, 4)]),
        ("method", f"torch.complex(x0, x1).{name}", [f(6), f(6)]),
    ] + ([("of_real_tensor", f"{fn}(x0)", [f(2, 5)])] if name == "real" else []))


family("torch.real")(lambda: _part("real"))


family("torch.imag")(lambda: _part("imag"))


@family("torch.view_as_complex")
def _view_as_complex():
    return table("torch.view_as_complex", [
        ("r3", "torch.view_as_complex(x0)", [f(4, 8, 2)]),
        ("r2", "torch.view_as_complex(x0)", [f(13, 2)]),
        ("r4", "torch.view_as_complex(x0)", [f(1, 3, 4, 2)]),
        ("abs", "torch.view_as_complex(x0).abs()", [f(2, 6, 2)]),
        ("rope_like", "torch.view_as_real(torch.view_as_complex(x0) * torch.view_as_complex(x1)).flatten(-2)",
         [f(2, 4, 8, 2), f(4, 8, 2)]),
    ])


@family("torch.view_as_real")
def _view_as_real():
    return table("torch.view_as_real", [
        ("of_complex", "torch.view_as_real(torch.complex(x0, x1))", [f(3, 8), f(3, 8)]),
        ("of_fft", "torch.view_as_real(torch.fft.rfft(x0))", [f(2, 16)], {"tol": _FFT_TOL}),
        ("r1", "torch.view_as_real(torch.complex(x0, x1))", [f(13), f(13)]),
        ("roundtrip", "torch.view_as_real(torch.view_as_complex(x0))", [f(4, 6, 2)]),
        ("then_flatten", "torch.view_as_real(torch.complex(x0, x1)).flatten(1)", [f(2, 5), f(2, 5)]),
    ])
