"""`run.json`: what a suite run was (suite, tier, converters, cases, jobs) and how long it
took, written into the run's output folder by `pnnx-conformance run` and
`python -m pnnx_model_zoo.run`, combined by `merge`, gathered by the report."""
from __future__ import annotations

import json
import time
from pathlib import Path

from .environment import suite_commit

RUN_INFO = "run.json"


def run_info(suite: str, tier: str, converters: list[str], cases: int, jobs: int, wall_s: float,
             commit: str | None = None, **extra) -> dict:
    """`commit`: the checkout the run was made on (environment.suite_commit), which the
    report's history (report/history.py) files the run's totals under."""
    return {"suite": suite, "tier": tier, "converters": sorted(converters), "cases": cases, "jobs": jobs,
            "wall_s": round(wall_s, 2), "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": suite_commit() if commit is None else commit, **extra}


def write_run_info(folder: Path, info: dict) -> Path:
    path = Path(folder) / RUN_INFO
    path.write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")
    return path


def read_run_info(path: Path) -> dict:
    try:
        info = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable run record ({e})") from None
    if not isinstance(info, dict) or "wall_s" not in info:
        raise ValueError(f"{path}: not a run record (no wall_s)")
    return info


def _joined(values) -> str:
    return ",".join(sorted({str(v) for v in values}))


def merge_run_infos(infos: list[dict]) -> dict:
    """Shards run side by side: the merged wall time is the longest shard's (busy_s sums
    them); cases add up, jobs is the most any shard used."""
    walls = [i["wall_s"] for i in infos]
    merged = run_info(_joined(i.get("suite", "") for i in infos), _joined(i.get("tier", "") for i in infos),
                      sorted({c for i in infos for c in i.get("converters", [])}),
                      sum(i.get("cases", 0) for i in infos), max(i.get("jobs", 0) for i in infos), max(walls),
                      shards=sum(i.get("shards", 1) for i in infos),
                      commit=_joined(i["commit"] for i in infos if i.get("commit")),
                      busy_s=round(sum(i.get("busy_s", i["wall_s"]) for i in infos), 2))
    return merged


def gather_run_infos(root: Path) -> list[dict]:
    """Every run.json under root (root's own included), each with its folder relative to root."""
    root = Path(root)
    if not root.is_dir():
        return []
    rows = []
    for path in sorted(root.rglob(RUN_INFO)):
        info = read_run_info(path)
        rows.append({**info, "folder": path.parent.relative_to(root).as_posix() or "."})
    return rows
