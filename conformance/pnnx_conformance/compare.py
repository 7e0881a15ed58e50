"""Comparing backend outputs with the oracle: metrics always, a verdict against a bound."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .results import Metrics
from .tolerances import Tolerance
from .tolerances import within as _elementwise  # the table's per-element rule


@dataclass
class Verdict:
    ok: bool
    metrics: Metrics
    message: str = ""


def _ordered_int(x: np.ndarray) -> np.ndarray:
    """float32 bits mapped to integers that are ordered like the floats (+0 == -0)."""
    i = x.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def max_ulp(a: np.ndarray, r: np.ndarray) -> float:
    finite = np.isfinite(a) & np.isfinite(r)
    if not finite.any():
        return 0.0
    return float(np.abs(_ordered_int(a[finite]) - _ordered_int(r[finite])).max())


def cosine(a: np.ndarray, r: np.ndarray) -> float:
    a = np.nan_to_num(a.astype(np.float64).ravel(), posinf=0, neginf=0)
    r = np.nan_to_num(r.astype(np.float64).ravel(), posinf=0, neginf=0)
    na, nr = np.linalg.norm(a), np.linalg.norm(r)
    if na == 0 or nr == 0:
        return 1.0 if na == nr else 0.0
    return float(np.dot(a, r) / (na * nr))


def _real_view(x: np.ndarray) -> np.ndarray:
    """A complex array as reals with a trailing (real, imaginary) axis, so both parts count."""
    return np.stack([x.real, x.imag], axis=-1)


def _bound_like(bound, r: np.ndarray, pairs: bool) -> np.ndarray:
    """A per-element bound shaped like the oracle output (for complex: shared by both parts)."""
    bound = np.asarray(bound, dtype=np.float64)
    return bound.reshape(r.shape[:-1])[..., None] if pairs else bound.reshape(r.shape)


def relative_l2(a: np.ndarray, r: np.ndarray) -> float:
    a = np.nan_to_num(a.astype(np.float64).ravel(), nan=np.inf)
    r = r.astype(np.float64).ravel()
    norm = np.linalg.norm(r)
    error = np.linalg.norm(a - r)
    return float(error / norm) if norm > 0 else (0.0 if error == 0 else float("inf"))


def _align(a: np.ndarray, r: np.ndarray, loose_rank: bool) -> np.ndarray | None:
    if a.shape == r.shape:
        return a
    squeezed = tuple(d for d in a.shape if d != 1) == tuple(d for d in r.shape if d != 1)
    if loose_rank and a.size == r.size and squeezed:
        return a.reshape(r.shape)
    return None


def compare(actual: list, expected: list, tol: Tolerance, extra_bound: list | None = None,
            loose_rank: bool = False) -> Verdict:
    """Outputs against the oracle. `extra_bound` is the K-scaled accumulation bound per
    output (None for none). `loose_rank` accepts shapes that differ only by size-1 axes."""
    # outputs that cannot be compared element by element have no error figures, not zero ones
    unmatched = Metrics(mismatch_pct=100.0, atol=tol.atol, rtol=tol.rtol)
    if len(actual) != len(expected):
        return Verdict(False, unmatched, f"output count mismatch: {len(actual)} outputs, the oracle has {len(expected)}")
    metrics = Metrics(max_abs=0.0, max_rel=0.0, cosine=1.0, mismatch_pct=0.0, atol=tol.atol, rtol=tol.rtol)
    bad_total, n_total, ulps, problems = 0, 0, [], []
    for i, (a, r) in enumerate(zip(actual, expected)):
        a, r = np.asarray(a), np.asarray(r)
        aligned = _align(a, r, loose_rank)
        if aligned is None:
            return Verdict(False, unmatched, f"shape mismatch: output {i} has shape {list(a.shape)}, "
                                             f"the oracle's {list(r.shape)}")
        a = aligned
        if tol.exact and a.dtype != r.dtype:
            return Verdict(False, unmatched, f"dtype mismatch: output {i} is {a.dtype}, the oracle's {r.dtype}")
        pairs = "c" in (a.dtype.kind, r.dtype.kind)
        if pairs:
            a, r = _real_view(a.astype(np.result_type(a.dtype, np.complex64))), _real_view(r)
        if r.dtype.kind in "biu" or tol.exact:
            equal = a == r
            if r.dtype.kind in "fc" and a.dtype.kind in "fc":
                equal = equal | (np.isnan(a) & np.isnan(r))
            bad = ~equal
            diff = np.abs(a.astype(np.float64) - r.astype(np.float64)) if r.size else np.zeros(0)
            diff = np.nan_to_num(diff, nan=0.0, posinf=np.inf)
            ref = np.abs(r.astype(np.float64))
        else:
            mag = None if extra_bound is None else _bound_like(extra_bound[i], r, pairs)
            bad, diff, ref = _elementwise(a, r, tol, mag)
            if tol.max_rel_l2 is not None:
                rel_l2 = relative_l2(a, r) if r.size else 0.0
                metrics.rel_l2 = max(metrics.rel_l2 or 0.0, rel_l2)
                bad = np.full(r.shape, rel_l2 > tol.max_rel_l2)
                if rel_l2 > tol.max_rel_l2:
                    problems.append(f"output {i}: relative L2 error {rel_l2:.3g} > {tol.max_rel_l2:g}")
        if r.size:
            metrics.max_abs = max(metrics.max_abs, float(diff.max()))
            rel = diff / np.maximum(ref, np.finfo(np.float32).tiny)
            metrics.max_rel = max(metrics.max_rel, float(np.nan_to_num(rel, posinf=np.finfo(np.float64).max).max()))
            metrics.cosine = min(metrics.cosine, cosine(a, r))
            if r.dtype == np.float32 and a.dtype.kind == "f":
                ulps.append(max_ulp(a.astype(np.float32), r))
        bad_total += int(bad.sum())
        n_total += r.size
        if bad.any() and tol.max_rel_l2 is None:
            problems.append(f"output {i}: {int(bad.sum())}/{r.size} elements out of tolerance")
    metrics.max_ulp = max(ulps) if ulps else None
    metrics.mismatch_pct = 100.0 * bad_total / n_total if n_total else 0.0
    if problems:
        msg = "; ".join(problems) + f" (max abs {metrics.max_abs:.3g}, max rel {metrics.max_rel:.3g})"
        return Verdict(False, metrics, msg)
    return Verdict(True, metrics)


def bitwise_equal(actual: list, expected: list) -> str:
    """'' when every output has the oracle's shape, dtype and values (NaN == NaN); else why."""
    if len(actual) != len(expected):
        return f"{len(actual)} outputs, the oracle has {len(expected)}"
    for i, (a, r) in enumerate(zip(actual, expected)):
        a, r = np.asarray(a), np.asarray(r)
        if a.shape != r.shape or a.dtype != r.dtype:
            return f"output {i}: {a.dtype}{list(a.shape)}, the oracle has {r.dtype}{list(r.shape)}"
        if not np.array_equal(a, r, equal_nan=r.dtype.kind in "fc"):
            same = a == r
            if r.dtype.kind in "fc":
                same |= np.isnan(a) & np.isnan(r)
            n = int((~same).sum())
            return f"output {i}: {n}/{r.size} elements differ"
    return ""
