"""The one tolerance table: per backend and precision, overridable per operator and by a
case's ToleranceHint. Every entry carries its reason. The conformance harness judges
backends by it (`pnnx_conformance.tolerances` re-exports this module) and the converter's
self-check (`selfcheck.py`) judges the regenerated `_pnnx.py` by it.

An output element passes when

    |actual - expected| <= atol + rtol * |expected| + accum * K * unit * M

where, for accumulating operators only (convolutions, matmuls, reductions), K is the
number of accumulated terms and M = sum |a_i * b_i| (the oracle model with |weights| on
|inputs|): the bound grows with the work done instead of one global atol (TOSA's
DOT_PRODUCT bound). `unit` is the unit roundoff of the arithmetic: 2^-24 for fp32, 2^-11
for fp16.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace

FP32_U = 2.0 ** -24
FP16_U = 2.0 ** -11
BF16_U = 2.0 ** -8


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float
    reason: str
    accum: float = 1.0   # c in the K-scaled term; 0 turns it off
    unit: float = FP32_U
    exact: bool = False  # bit-for-bit (and same dtype) required
    # network level: each float output passes when ||actual - expected|| / ||expected|| is at
    # most this, instead of per-element bounds (whole networks in fp16)
    max_rel_l2: float | None = None


# (backend, precision) -> tolerance. "*" matches any backend (a plug-in's defaults).
TABLE: dict[tuple[str, str], Tolerance] = {
    ("torch", "fp32"): Tolerance(0.0, 0.0, "the oracle rebuilt from the same source and seeds must reproduce itself", exact=True),
    ("pnnx-python", "fp32"): Tolerance(
        1e-6, 1e-5, "same torch kernels; the generated code may fold or reorder expressions"),
    ("onnxruntime", "fp32"): Tolerance(
        1e-4, 1e-4, "independent fp32 kernels (pnnx's own tests use 1e-4); K-scaled for accumulations"),
    ("ncnn-cpu", "fp32"): Tolerance(
        1e-4, 1e-4, "fp32 storage and arithmetic, independent kernels and approximations (pnnx tests: 1e-4)"),
    ("ncnn-cpu", "default"): Tolerance(
        1e-2, 1e-2, "ncnn's default options store activations in fp16 (2^-11 per store, several stores per layer); "
                    "inputs and weights pre-rounded to fp16", unit=FP16_U),
    ("ncnn-vulkan", "fp32"): Tolerance(
        1e-3, 1e-3, "GPU shaders use the device's fp32 transcendental approximations (lavapipe: LLVM)"),
    ("ncnn-vulkan", "fp16"): Tolerance(
        5e-2, 5e-2, "fp16 storage and fp16 arithmetic: the degraded tier of the design note (5e-2..1e-1); "
                    "inputs and weights pre-rounded to fp16", unit=FP16_U),
    ("*", "fp32"): Tolerance(1e-4, 1e-4, "default for fp32 plug-in backends"),
    ("*", "fp16"): Tolerance(1e-2, 1e-2, "default for fp16 plug-in modes, on pre-rounded data", unit=FP16_U),
    ("*", "bf16"): Tolerance(8e-2, 8e-2, "default for bf16 plug-in modes, on data pre-rounded to bf16: the fp16 "
                                         "rows' ~20 unit roundoffs at bf16's 8 significant bits (2^-8)", unit=BF16_U),
    ("*", "default"): Tolerance(1e-2, 1e-2, "default for a runtime's own default mode", unit=FP16_U),
    ("*", "*"): Tolerance(1e-4, 1e-4, "fallback"),
}

# relative L2 error allowed for a whole network run in fp16 (see OP_OVERRIDES): the design note's
# degraded tier (5e-2). Measured on the zoo (lavapipe): 1e-5..4e-4 with ncnn's default options,
# 8e-4..2.6e-3 on Vulkan fp16 except vit_b_16 at 1.2e-2 (12 blocks of softmax and layer norm);
# a wrong network scores about 1 or more
NETWORK_FP16_REL_L2 = 5e-2

# (operator pattern, backend, precision) -> tolerance replacing the table entry.
OP_OVERRIDES: dict[tuple[str, str, str], Tolerance] = {
    # ONNX-table cases: the oracle is onnxruntime, so the generated `_pnnx.py` runs other fp32
    # kernels than the oracle's (PyTorch's), as every other backend does
    ("onnx.*", "pnnx-python", "fp32"): Tolerance(
        1e-4, 1e-4, "ONNX case: onnxruntime's kernels (the oracle) against PyTorch's (pnnx's own tests use 1e-4); "
                    "K-scaled for accumulations"),
    # Whole networks at optlevel 2: conv+bn fusion folds each batchnorm into its conv's weights,
    # which rounds differently in each of ~20 layers; measured resnet18 (norms re-randomised,
    # logits up to 10.8): 5.0e-6 absolute on near-zero logits.
    ("models.*", "pnnx-python", "fp32"): Tolerance(
        1e-5, 1e-5, "whole network at optlevel 2: conv+bn fusion changes rounding in every fused layer"),
    # Whole networks in fp16: tens of layers each store activations in fp16 (2^-11 relative per
    # store), so per-element bounds on near-zero logits say nothing; the deployment question is
    # whether the output vector is the same one.
    **{("models.*", backend, precision): Tolerance(
        0.0, 0.0, "whole network in fp16 storage/arithmetic: compared by relative L2 error per output "
                  "(per-element bounds are meaningless after tens of fp16 layers)",
        unit=FP16_U, max_rel_l2=NETWORK_FP16_REL_L2)
       for backend, precision in (("ncnn-cpu", "default"), ("ncnn-vulkan", "fp16"))},
}


# The ONNX route's screen of torch.onnx's own file: onnxruntime on the exported file against torch
# on the model, before our frontend reads it. A coarse bound on purpose: it separates an exporter
# that writes another computation (a wrong shape, a dropped abs(), truncating division) from
# rounding, which the parity checks judge at the table's bounds.
EXPORT_SCREEN = Tolerance(1e-2, 1e-2, "torch.onnx's file run by onnxruntime against torch: an exporter's "
                                      "mistake, not rounding (the parity checks bound that)", accum=0)


def export_screen(case) -> Tolerance:
    """EXPORT_SCREEN, widened further by the case's own onnxruntime bound where that is wider."""
    tol = tolerance_for(case, "onnxruntime", "fp32")
    return replace(EXPORT_SCREEN, atol=max(tol.atol, EXPORT_SCREEN.atol), rtol=max(tol.rtol, EXPORT_SCREEN.rtol))


# The self-check's second look when a whole network misses the bound above: deep networks (tens
# of conv+bn layers, inception, fcn, resnext) round more than 1e-5 in fp32 alone. The regenerated
# model then runs in fp64 too: |ours fp32 - ours fp64| is this network's own fp32 rounding, and
# the original's fp32 output must lie within this factor of it from the fp64 result (on top of
# the bound). Measured on the torchvision sweep: torch's own fp32 run is 0.8-1.6x as far from
# fp64 as ours (inception_v3 3.1e-4 against 2.5e-4, resnext50 6.3e-5 against 8.2e-5); a wrong
# conversion is off by far more than its rounding.
SELF_CHECK_ROUNDING_FACTOR = 4.0


def self_check_tolerance() -> Tolerance:
    """The bound of the converter's self-check (regenerated `_pnnx.py` against the original
    model, fp32, a whole user network): the pnnx-python entry for whole networks, since the
    optlevel-2 fusions change rounding in every fused layer as they do for the zoo."""
    return OP_OVERRIDES[("models.*", "pnnx-python", "fp32")]


def within(a, r, tol: Tolerance, mag=None):
    """The bound of the table for one float output, per element: NaN matches NaN, an
    infinity the same infinity, anything else passes when |a - r| <= atol + rtol * |r|
    (+ `mag`, the accumulation bound, when given). `a` and `r` are numpy arrays of one shape;
    returns (mismatch mask, |a - r|, |r|) with 0 where either side is not finite."""
    import numpy as np

    a64, r64 = a.astype(np.float64), r.astype(np.float64)
    same_nan = np.isnan(a64) & np.isnan(r64)
    same_inf = np.isinf(a64) & np.isinf(r64) & (np.sign(a64) == np.sign(r64))
    finite = np.isfinite(a64) & np.isfinite(r64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(finite, np.abs(a64 - r64), 0.0)
    bound = tol.atol + tol.rtol * np.abs(np.where(finite, r64, 0.0))
    if mag is not None:
        bound = bound + mag
    bad = ~(same_nan | same_inf | (finite & (diff <= bound)))
    return bad, diff, np.where(finite, np.abs(r64), 0.0)


def _weight_terms(subject) -> int:
    """Conv/linear: terms per output = the weight's elements per output channel."""
    shapes = [tuple(p.shape) for p in subject.model.parameters() if p.dim() >= 2]
    shapes += [tuple(x.shape) for x in subject.inputs[1:] if x.dim() >= 2]
    return max((_prod(s[1:]) for s in shapes), default=_last_dim_terms(subject))


def _last_dim_terms(subject) -> int:
    return max(1, int(subject.inputs[0].shape[-1])) if subject.inputs and subject.inputs[0].dim() else 1


def _reduced_terms(subject) -> int:
    n_in = max((x.numel() for x in subject.inputs), default=1)
    n_out = max(1, min((e.size for e in subject.expected), default=1))
    return max(1, n_in // n_out)


def _prod(shape) -> int:
    out = 1
    for d in shape:
        out *= int(d)
    return out


# operator pattern -> how many terms one output element accumulates
ACCUMULATING = {
    "nn.Conv*": _weight_terms, "F.conv*": _weight_terms, "nn.Linear": _weight_terms,
    "nn.Bilinear": _weight_terms, "F.linear": _weight_terms, "F.bilinear": _weight_terms,
    "torch.matmul": _last_dim_terms, "Tensor.matmul": _last_dim_terms, "torch.mm": _last_dim_terms,
    "torch.bmm": _last_dim_terms, "torch.addmm": _last_dim_terms, "torch.baddbmm": _last_dim_terms,
    "torch.einsum": _reduced_terms,
    "torch.sum": _reduced_terms, "Tensor.sum": _reduced_terms, "torch.mean": _reduced_terms,
    "Tensor.mean": _reduced_terms, "nn.AvgPool*": _reduced_terms, "F.avg_pool*": _reduced_terms,
    "nn.AdaptiveAvgPool*": _reduced_terms, "F.adaptive_avg_pool*": _reduced_terms,
    "onnx.Conv*": _weight_terms, "onnx.Gemm": _weight_terms, "onnx.MatMul": _weight_terms,
    "onnx.LSTM": _weight_terms, "onnx.GRU": _weight_terms, "onnx.RNN": _weight_terms,
    "onnx.Reduce*": _reduced_terms, "onnx.*AveragePool": _reduced_terms,
}


def accumulation(op: str):
    """The term-counting function for an accumulating operator, or None."""
    for pattern, fn in ACCUMULATING.items():
        if fnmatch.fnmatchcase(op, pattern):
            return fn
    return None


def _lookup(table: dict, *keys: str):
    return table.get(tuple(keys))


def tolerance_for(case, backend: str, precision: str, computes: str | None = None) -> Tolerance:
    """The bound for `case` on `backend` in mode `precision`: the backend's own row, else the
    "*" row of what the mode computes in (`computes`: fp32, fp16, bf16, as the backend reports
    it), else the "*" row of the mode's name, else the fallback; then operator overrides and
    the case's hint. A plug-in's "default" mode that computes in bf16 is judged as bf16."""
    tol = (_lookup(TABLE, backend, precision) or (computes and _lookup(TABLE, "*", computes))
           or _lookup(TABLE, "*", precision) or _lookup(TABLE, "*", "*"))
    for (pattern, be, prec), override in OP_OVERRIDES.items():
        if fnmatch.fnmatchcase(case.op, pattern) and be in (backend, "*") and prec in (precision, "*"):
            tol = override
    hint = getattr(case, "tolerance", None)
    if hint is not None and not tol.exact:
        tol = replace(tol, atol=max(tol.atol, hint.atol), rtol=max(tol.rtol, hint.rtol),
                      reason=f"{tol.reason}; case: {hint.reason}")
    return tol
