"""Batch variants, derived from each table row's smoke case: the same model fed without a batch
axis and with a batch of 2 to 5, at each lower rank the operator accepts (the kind of inputs
ncnn users test with: [16], [2, 16], [3, 12, 16], [5, 7, 9, 11]).

The base case's batched inputs are those of rank >= 2 whose dim 0 is input 0's (a batch of 1
in most cases); the others (weights, indices, a second matmul operand) stay as they are. For
`core` = a batched input without its dim 0 and k = 0, 1, ... leading dims dropped from it:

    <id>-nobatch[-rank<r>]     the batched inputs are core[k:]        tag "unbatched"
    <id>-batch<B>[-rank<r>]    the batched inputs are (B, *core[k:])  tag "batched"

(r: the rank of input 0, given when k > 0; B = 2..5, fixed per variant by its id). A variant
exists only where PyTorch runs the model on it in eager mode; that verdict is cached on disk
per (source, inputs, torch version), so only the first case listing of a machine pays for it.
One variant per row joins the smoke tier (a batch variant or a no-batch one, alternating by
row). Case sources are the base's: only the inputs, the id, the tags and the weight seed
(derived from the id) differ.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import warnings
import zlib
from pathlib import Path
from typing import Iterable

from .case import REASON_TAGS, TIER_SMOKE, Case

TAG_BATCHED = "batched"
TAG_UNBATCHED = "unbatched"
# a variant of a case with these tags checks nothing new (random or eval-identity outputs)
SKIP_TAGS = REASON_TAGS | {"dynamic"}
MAX_RANK = 4  # input 0 of a no-batch variant keeps at most this rank (ncnn blobs: 4 dims)


def derive(cases: Iterable[Case]) -> list[Case]:
    """The batch variants of every row's smoke case that PyTorch accepts, one in smoke per row."""
    cases = list(cases)
    known = {c.id for c in cases}
    verdicts = _Verdicts()
    found: list[Case] = []
    for base in _bases(cases):
        accepted = [v for v in candidates(base) if v.id not in known and verdicts.runs(v)]
        found += _with_smoke_pick(base, accepted)
    verdicts.save()
    return found


def _bases(cases: list[Case]) -> list[Case]:
    """Per row, its first smoke case that has inputs and none of SKIP_TAGS (else its first
    such case of the full tier: a row whose smoke case is random or training-only); cases
    written about batches (tagged batched or unbatched) come last."""
    bases: dict[str, Case] = {}
    usable = [c for c in cases if c.inputs and not (c.tags & SKIP_TAGS)]
    for case in sorted(usable, key=lambda c: (c.tier != "smoke", bool(c.tags & {TAG_BATCHED, TAG_UNBATCHED}))):
        bases.setdefault(case.op, case)
    return list(bases.values())


def batched_inputs(case: Case) -> list[int]:
    """Inputs that carry the batch: rank >= 2 and input 0's dim 0."""
    first = case.inputs[0].shape
    if len(first) < 2:
        return []
    return [i for i, s in enumerate(case.inputs) if len(s.shape) >= 2 and s.shape[0] == first[0]]


_SUFFIX = re.compile(r"-(nobatch|batch\d+)(-rank\d+)?$")


def base_id(case_id: str) -> str:
    """The id of the case a variant was derived from (the id itself for any other case)."""
    return _SUFFIX.sub("", case_id)


def batch_size(variant_id: str) -> int:
    return 2 + zlib.crc32(variant_id.encode()) % 4


def candidates(base: Case) -> list[Case]:
    """Every variant to try, before PyTorch says which it runs."""
    batched = batched_inputs(base)
    if not batched:
        return []
    core_rank = len(base.inputs[batched[0]].shape) - 1
    found = []
    for k in range(core_rank):
        rank = core_rank - k
        if rank <= MAX_RANK:
            found.append(_variant(base, f"{base.id}-nobatch{f'-rank{rank}' if k else ''}", batched, k, None))
        suffix = f"-rank{rank + 1}" if k else ""
        size = batch_size(f"{base.id}-batch{suffix}")
        if size == base.inputs[batched[0]].shape[0]:  # not the base's own batch again
            size = size % 5 + 2
        found.append(_variant(base, f"{base.id}-batch{size}{suffix}", batched, k, size))
    return found


def _variant(base: Case, case_id: str, batched: list[int], drop: int, size: int | None) -> Case:
    inputs = list(base.inputs)
    for i in batched:
        core = inputs[i].shape[1 + drop:]
        inputs[i] = dataclasses.replace(inputs[i], shape=core if size is None else (size, *core))
    tags = (set(base.tags) - {TIER_SMOKE, TAG_UNBATCHED, TAG_BATCHED}) | {TAG_UNBATCHED if size is None else TAG_BATCHED}
    return dataclasses.replace(base, id=case_id, inputs=tuple(inputs), tags=frozenset(tags))


def _with_smoke_pick(base: Case, accepted: list[Case]) -> list[Case]:
    """One of the full-rank variants joins the smoke tier: a batched one for half of the rows,
    a batchless one for the other half (the other kind when the preferred one does not exist)."""
    full = [v for v in accepted if "-rank" not in v.id]
    prefer_batch = zlib.crc32(base.op.encode()) % 2 == 0
    full.sort(key=lambda v: (TAG_BATCHED in v.tags) != prefer_batch)
    pick = full[0].id if full else (accepted[0].id if accepted else None)
    return [dataclasses.replace(v, tags=v.tags | {TIER_SMOKE}) if v.id == pick else v for v in accepted]


# --- does PyTorch run it? ---------------------------------------------------------------
def eager_runs(case: Case) -> bool:
    """Whether the model runs on the variant's inputs in eager mode (a refusal is any error)."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            case.run_eager()
        except Exception:  # noqa: BLE001  (any refusal by PyTorch means no such variant)
            return False
    return True


def _cache_path() -> Path:
    import torch

    root = Path(os.environ.get("PNNX_CASES_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or
                                                            Path.home() / ".cache") / "pnnx_op_cases")
    return root / f"batch-variants-torch{torch.__version__}.json"


def _key(case: Case) -> str:
    text = json.dumps([case.source, [dataclasses.astuple(s) for s in case.inputs], case.id], sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()


class _Verdicts:
    """eager_runs per case, remembered in a JSON file (written atomically; a missing or
    unreadable file only means working them out again)."""

    def __init__(self) -> None:
        self.path = _cache_path()
        try:
            self.known: dict[str, bool] = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.known = {}
        self.changed = False

    def runs(self, case: Case) -> bool:
        key = _key(case)
        if key not in self.known:
            self.known[key] = eager_runs(case)
            self.changed = True
        return bool(self.known[key])

    def save(self) -> None:
        if not self.changed:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.known, sort_keys=True))
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only home: the verdicts are worked out again next time
