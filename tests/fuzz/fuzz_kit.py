"""Mutation fuzzing of the format readers: seed files written by the converter, mutated by
Hypothesis (byte flips, interesting bytes and tokens, deletions, duplications), fed to each
reader. A reader may accept the bytes or refuse them with one `PnnxError` line; any other
exception, or a message over several lines, is a crash.

Targets (`TARGETS`): what a user can point our commands at: the pnnx.param, pnnx.bin, ncnn.param
and ncnn.bin readers, `pnnx-validate`, and `pnnxref regenerate`."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from hypothesis import strategies as st

from pnnx_reference.emit.python.pnnx_py import regenerate
from pnnx_reference.errors import PnnxError
from pnnx_reference.formats import ncnn_param, pnnx_bin, pnnx_param
from pnnx_reference.formats.ncnn_bin import read_and_walk
from pnnx_reference.validate import validate

# text that readers have tripped over: digits int() refuses, separators, huge and odd numbers
TOKENS = ["³", "²", "٣", "\u2028", "\x85", "\x00", "\t", "\r", "\n", " ", "-", "-1", "0", "4294967296",
          "99999999999999999999", "1e999", "nan", "inf", "(", ")", "[", "]", "=", ",", "@", "@9", "#", "$",
          "?", "%", "\\", "'", '"', "f32", "i64", "c64", "7767517", "pnnx.Expression", "add(@0,@1)"]
BYTES = [0x00, 0x01, 0x0A, 0x0D, 0x20, 0x7F, 0x80, 0xC3, 0xE2, 0xFF]


class Seeds(nn.Module):
    """A small network that exercises every file kind: weights, an expression, a slice, a
    reshape, several outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(16, 5)

    def forward(self, x, y):
        a = F.relu(self.bn(self.conv(x)))
        b = (a[:, :2] * 2 + y[:, :2]).flatten(1)
        return self.fc(b[:, :16]), torch.cat([a, y], 1).mean(dim=(2, 3))


def write_seeds(out: Path) -> dict[str, Path]:
    from pnnx_reference import api

    torch.manual_seed(0)
    model = Seeds().eval()
    inputs = (torch.rand(1, 3, 4, 4), torch.rand(1, 4, 4, 4))
    result = api.export(model, inputs, out, "seed", optlevel=1, fp16=False)
    return {k: Path(v) for k, v in result.paths.items()}


@st.composite
def mutated(draw, data: bytes) -> bytes:
    raw = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["flip", "byte", "token", "delete", "duplicate"]))
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        if kind == "flip" and raw:
            raw[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte" and raw:
            raw[at] = draw(st.sampled_from(BYTES))
        elif kind == "token":
            token = draw(st.sampled_from(TOKENS)).encode()
            end = at + draw(st.integers(0, 3))
            raw[at:end] = token
        elif kind == "delete":
            del raw[at:at + draw(st.integers(1, 16))]
        elif kind == "duplicate":
            raw[at:at] = raw[at:at + draw(st.integers(1, 64))]
    return bytes(raw)


@dataclass(frozen=True)
class Target:
    name: str
    seed: str                                     # artefact key of the file that is mutated
    run: Callable[[Path, dict[str, Path]], object]  # (mutated file, the seeds) -> anything


def _validate(path: Path, seeds) -> list:
    weights = "pnnxbin" if path.name.endswith(".pnnx.param") else "ncnnbin"
    shutil.copyfile(seeds[weights], path.with_name(f"fuzz{SUFFIXES[weights]}"))  # the param's own weights beside it
    problems = validate(path)
    for problem in problems:
        assert "\n" not in str(problem), str(problem)
    return problems


def _regenerate(path: Path, seeds) -> None:
    out = path.with_name("fuzz_pnnx.py")
    regenerate(path, out, seeds["pnnxbin"])


TARGETS = {t.name: t for t in (
    Target("pnnx.param", "pnnxparam", lambda p, s: pnnx_param.load_text(p)),
    Target("pnnx.bin", "pnnxbin", lambda p, s: pnnx_bin.read_bin(p)),
    Target("ncnn.param", "ncnnparam", lambda p, s: ncnn_param.load(p)),
    Target("ncnn.bin", "ncnnbin", lambda p, s: read_and_walk(p, ncnn_param.load(s["ncnnparam"]).layers)),
    Target("validate-pnnx", "pnnxparam", _validate),
    Target("validate-ncnn", "ncnnparam", _validate),
    Target("regenerate", "pnnxparam", _regenerate),
)}
SUFFIXES = {"pnnxparam": ".pnnx.param", "pnnxbin": ".pnnx.bin", "ncnnparam": ".ncnn.param", "ncnnbin": ".ncnn.bin"}


def check(target: Target, data: bytes, workdir: Path, seeds: dict[str, Path]) -> str:
    """Run `target` on `data`: "accepted" or "refused"; AssertionError on a crash or a multi-line error."""
    for stale in workdir.glob("fuzz*"):  # a file left by another target would change what is read
        stale.unlink()
    path = workdir / f"fuzz{SUFFIXES[target.seed]}"
    path.write_bytes(data)
    try:
        result = target.run(path, seeds)
    except PnnxError as err:
        text = str(err)
        assert text and "\n" not in text and "\r" not in text and len(text.splitlines()) == 1, repr(text)
        return "refused"
    problems = result if isinstance(result, list) else getattr(result, "problems", None)
    return "refused" if problems else "accepted"  # a validator or walker lists problems instead of raising
