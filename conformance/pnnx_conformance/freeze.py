"""A frozen corpus: each case's source, weights, inputs and expected outputs written out
with a manifest and one sha256 over the whole case set, so that the reference changes only
when the corpus is regenerated on purpose (a torch upgrade cannot move it silently).

Hashes cover array names, dtypes, shapes and bytes, not the npz containers (zip headers
carry timestamps)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .cases import select_cases, use_provider
from .errors import HarnessError
from .oracle import Subject

MANIFEST = "manifest.json"


def arrays_sha256(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _case_files(case) -> dict[str, dict[str, np.ndarray]]:
    subject = Subject(case)
    return {
        "inputs": {f"in{i}": x.numpy() for i, x in enumerate(subject.inputs)},
        "expected": {f"out{i}": y for i, y in enumerate(subject.expected)},
        "weights": {k: v.detach().numpy() for k, v in subject.model.state_dict().items()},
    }


def freeze_case(case, folder: Path) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "source.py").write_text(case.source)
    entry = {"id": case.id, "op": case.op, "folder": folder.name, "tags": sorted(case.tags),
             "reasons": dict(sorted(case.reasons.items())),
             "inputs": [[list(s.shape), s.dtype, s.low, s.high] for s in case.inputs],
             "weight_seed": case.weight_seed,
             "source_sha256": hashlib.sha256(case.source.encode()).hexdigest()}
    for name, arrays in _case_files(case).items():
        np.savez(folder / f"{name}.npz", **arrays)
        entry[f"{name}_sha256"] = arrays_sha256(arrays)
    return entry


def case_set_sha256(entries: list[dict]) -> str:
    h = hashlib.sha256()
    for e in sorted(entries, key=lambda e: e["id"]):
        h.update(json.dumps({k: v for k, v in e.items() if k != "folder"}, sort_keys=True).encode())
    return h.hexdigest()


def freeze(out: Path, tier: str = "smoke", ops: list[str] | None = None, provider: str | None = None) -> dict:
    import torch

    use_provider(provider)
    cases = select_cases(tier, ops)
    if not cases:
        raise HarnessError(f"no cases in tier {tier!r}" + (f" for {', '.join(ops)}" if ops else ""))
    entries = [freeze_case(c, out / c.safe_name) for c in cases]
    manifest = {"tier": tier, "torch": torch.__version__, "numpy": np.__version__,
                "cases": entries, "sha256": case_set_sha256(entries)}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    return manifest


def load_manifest(folder: Path) -> dict:
    try:
        return json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise HarnessError(f"{folder}: not a frozen corpus ({e})") from None


def verify(folder: Path) -> list[str]:
    """Differences between a frozen corpus and what the current cases and torch produce."""
    manifest = load_manifest(folder)
    from .cases import load_case

    problems = []
    entries = []
    for old in manifest["cases"]:
        try:
            case = load_case(old["id"])
        except HarnessError as e:
            problems.append(str(e.message))
            continue
        entry = {"id": case.id, "source_sha256": hashlib.sha256(case.source.encode()).hexdigest()}
        entry.update({f"{k}_sha256": arrays_sha256(v) for k, v in _case_files(case).items()})
        entries.append(entry)
        for key, value in entry.items():
            if old.get(key) != value:
                problems.append(f"{case.id}: {key.replace('_sha256', '')} changed")
    return problems
