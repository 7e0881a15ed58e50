"""The result record: one per case x converter x check x backend x precision.

This is the contract between the harness (which writes records as JSON lines) and the
reports (which only read them). Add fields; never change the meaning of one.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

# Every status a record can have. A crash or a timeout is never mapped to "skipped".
STATUSES = (
    "pass",            # the check passed
    "fail-numeric",    # ran, but outputs differ from the oracle beyond tolerance
    "fail-format",     # an artefact is invalid (validator or loader rejected it)
    "fail-convert",    # the converter failed on a supported operator
    "fail-runtime",    # the backend raised an error running the artefact
    "crash",           # the worker died (segfault, abort)
    "timeout",         # the worker exceeded its time limit
    "oom",             # the worker exceeded its memory limit
    "not-supported",   # the converter or emitter cleanly reported "unsupported: reason"
    "not-applicable",  # the check has no meaning for this converter and case (reports: n/a)
    "xfail",           # failed, and a waiver expects it to
    "xpass",           # passed, but a waiver expects a failure (an error in CI)
    "skipped",         # not applicable, with a reason (e.g. random output)
    "harness-error",   # a bug in the suite itself
)
PASSING = {"pass", "xfail", "skipped", "not-supported", "not-applicable"}

CHECKS = ("convert", "format", "roundtrip", "reexport", "parity")


@dataclass
class Metrics:
    max_abs: float | None = None
    max_rel: float | None = None
    max_ulp: float | None = None       # fp32 outputs only
    cosine: float | None = None
    mismatch_pct: float | None = None  # % of elements outside tolerance
    atol: float | None = None          # the bound applied, for re-deriving thresholds
    rtol: float | None = None
    rel_l2: float | None = None        # max over outputs of ||actual - expected|| / ||expected||


@dataclass
class Result:
    case: str                     # case id, e.g. "nn.Conv2d/k3_s2"
    op: str                       # table row, e.g. "nn.Conv2d"
    table: str                    # nn | F | Tensor | torch | models
    converter: str                # "reference" | "upstream" | a plug-in name
    check: str                    # one of CHECKS
    status: str                   # one of STATUSES
    backend: str | None = None    # torch | pnnx-python | onnxruntime | ncnn-cpu | ncnn-vulkan | plug-in
    precision: str | None = None  # fp32 | fp16 | default
    metrics: Metrics | None = None
    time_s: float = 0.0
    sizes: dict[str, int] = field(default_factory=dict)  # artefact -> bytes
    error: str = ""               # one line (the first line of the failure), full text in `detail`
    detail: str = ""
    device: str = ""              # e.g. the Vulkan device name
    waiver: str = ""              # reason of the waiver that applied, if any
    tier: str = "smoke"
    stage: str = ""               # where a failure happened: convert | load | compile | run | mismatch (stages.py)

    @property
    def key(self) -> tuple:
        return (self.case, self.converter, self.check, self.backend or "", self.precision or "")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_dict(cls, d: dict) -> "Result":
        d = dict(d)
        if d.get("metrics") is not None:
            d["metrics"] = Metrics(**d["metrics"])
        return cls(**d)


def write_results(path: Path, results: Iterable[Result]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as f:
        for r in sorted(results, key=lambda r: r.key):
            f.write(r.to_json() + "\n")
    tmp.replace(path)


def read_results(path: Path) -> Iterator[Result]:
    with open(path) as f:
        for line in f:
            if line.strip():
                yield Result.from_dict(json.loads(line))


def check_totals(results: Iterable[Result]) -> dict:
    """summary.json's "by_check": per converter/check[/backend/precision], the statuses and
    the time the records took."""
    totals: dict = {}
    for r in sorted(results, key=lambda r: r.key):
        key = f"{r.converter}/{r.check}" + (f"/{r.backend}/{r.precision}" if r.backend else "")
        slot = totals.setdefault(key, {"time_s": 0.0, "statuses": Counter()})
        slot["time_s"] = round(slot["time_s"] + r.time_s, 3)
        slot["statuses"][r.status] += 1
    return {k: {"time_s": v["time_s"], "statuses": dict(sorted(v["statuses"].items()))} for k, v in sorted(totals.items())}
