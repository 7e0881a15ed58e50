"""A runtime's run, kept under reports/runtimes/<backend>/ (its parity records through the
reference converter, compact, and the run's own run/summary/environment files), and its
totals per precision mode filed in the scoreboard's history."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..artefacts import safe
from ..errors import HarnessError
from ..report.committed import load_any, read_compact, write_compact
from . import CONVERTER

HISTORY = "history.json"
# not results.jsonl.gz: that name marks a folder of `report`'s, with a support matrix beside it
RECORDS = "parity.jsonl.gz"
# the run's files kept, by the name they are kept under: not run.json, which `report` gathers
# from every folder under reports/ into its suite-time table
KEPT = {"run.json": "run_info.json", "summary.json": "summary.json", "environment.json": "environment.json"}
NOT_JUDGED = ("not-applicable", "skipped")   # listed apart, never in a rate
KEEP = 50


def runtime_records(records) -> list:
    return [r for r in records if r.check == "parity" and r.converter == CONVERTER and r.backend]


def mode_totals(records) -> dict[str, list[int]]:
    """precision mode -> [cases passed, cases judged] (not-applicable and skipped left out)."""
    out: dict[str, list[int]] = {}
    for r in records:
        slot = out.setdefault(r.precision, [0, 0])
        if r.status in NOT_JUDGED:
            continue
        slot[1] += 1
        slot[0] += r.status == "pass"
    return dict(sorted(out.items()))


def collect(run_dir: Path, out: Path) -> tuple[str, Path]:
    """Keep the run at `run_dir` under `out`; returns its backend and folder."""
    run_dir, out = Path(run_dir), Path(out)
    records = runtime_records(load_any(run_dir)) if run_dir.exists() else []
    backends = sorted({r.backend for r in records})
    if len(backends) != 1:
        raise HarnessError(f"{run_dir}: expected the parity records of one backend through the {CONVERTER} "
                           f"converter, found {', '.join(backends) or 'none'}")
    backend = backends[0]
    dest = out / safe(backend)
    dest.mkdir(parents=True, exist_ok=True)
    write_compact(records, dest / RECORDS)
    for name, kept in KEPT.items():
        if (run_dir / name).is_file():
            shutil.copyfile(run_dir / name, dest / kept)
    run = _json(run_dir / "run.json")
    file_totals(out / HISTORY, backend, run, mode_totals(records))
    return backend, dest


def load_runtime(folder: Path) -> list:
    return read_compact(Path(folder) / RECORDS)


def file_totals(path: Path, backend: str, run: dict, totals: dict[str, list[int]]) -> list[dict]:
    """history.json: one entry per commit and tier, {"runtimes": {"<backend> <mode>": [passed,
    judged]}} (the shape report/history.py charts), each runtime's run filed into its commit's."""
    entries = json.loads(path.read_text()) if path.is_file() else []
    commit, tier = run.get("commit", "unknown"), run.get("tier", "smoke")
    entry = next((e for e in entries if (e["commit"], e["tier"]) == (commit, tier)), None)
    if entry is None:
        entry = {"commit": commit, "date": run.get("finished_utc", ""), "tier": tier, "totals": {"runtimes": {}}}
        entries.append(entry)
    modes = entry["totals"]["runtimes"]
    for key in [k for k in modes if k.split(" ")[0] == backend]:
        del modes[key]
    modes.update({f"{backend} {mode}": pair for mode, pair in totals.items()})
    entry["totals"]["runtimes"] = dict(sorted(modes.items()))
    entry["date"] = max(entry["date"], run.get("finished_utc", ""))
    entries.sort(key=lambda e: (e["date"], e["commit"]))
    path.write_text(json.dumps(entries[-KEEP:], indent=1, sort_keys=True) + "\n")
    return entries


def _json(path: Path) -> dict:
    try:
        return json.loads(path.read_text()) if path.is_file() else {}
    except ValueError as e:
        raise HarnessError(f"{path}: unreadable ({e})") from None
