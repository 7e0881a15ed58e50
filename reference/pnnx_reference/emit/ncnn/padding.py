"""ncnn Padding layer params, shared by the pad family and convolutions with a non-zero
padding_mode."""
from __future__ import annotations

PAD_TYPE = {"constant": 0, "replicate": 1, "reflect": 2}

PAIR_KEYS = ((2, 3), (0, 1), (7, 8))  # (left,right), (top,bottom), (front,behind)


def padding_params(pairs, mode: str, value=0.0) -> dict:
    """Padding params for (before, after) pairs innermost first (w, h, then c or d); negative
    values count as 0 (the pad family cuts them with a Crop in front)."""
    p = {4: PAD_TYPE[mode]}
    for (before, after), keys in zip(pairs, PAIR_KEYS):
        p[keys[0]], p[keys[1]] = max(before, 0), max(after, 0)
    if mode == "constant":
        p[5] = float(value or 0.0)
    return p
