"""Merging shard result folders into one, as if one machine had run every case.

The merged folder holds results.jsonl, junit.xml, summary.json, run.json, environment.json
and the shards' repro bundles. Its records equal a single run's of the same cases record for
record except in `time_s` (`VOLATILE`): the only field that depends on when and where a unit
ran (a record names no worker or machine; scratch paths are written as <work>).
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

from .errors import HarnessError
from .junit import write_junit
from .results import Result, check_totals, read_results, write_results
from .runinfo import RUN_INFO, merge_run_infos, read_run_info, write_run_info

RESULTS = "results.jsonl"
SUMMARY = "summary.json"
ENVIRONMENT = "environment.json"
REPRO = "repro"
VOLATILE = ("time_s",)


def comparable(r: Result) -> dict:
    """A record without the fields that differ between two runs of the same unit."""
    return {k: v for k, v in asdict(r).items() if k not in VOLATILE}


def result_files(paths: list[Path]) -> list[Path]:
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(p.rglob(RESULTS))
        elif p.is_file():
            files.append(p)
        else:
            raise HarnessError(f"{p}: no such results file or folder")
    if not files:
        raise HarnessError(f"no {RESULTS} under {', '.join(map(str, paths))}")
    return files


def merge_results(paths: list[Path]) -> list[Result]:
    """All records; the same record (case, converter, check, backend, precision) in two
    files is an error: shards never overlap."""
    merged: dict[tuple, tuple[Result, Path]] = {}
    for f in result_files(paths):
        for r in read_results(f):
            if r.key in merged:
                raise HarnessError(f"{f}: record {'::'.join(map(str, r.key))} is also in {merged[r.key][1]}")
            merged[r.key] = (r, f)
    return [r for r, _ in merged.values()]


def _beside(paths: list[Path], name: str) -> list[Path]:
    return [f.parent / name for f in result_files(paths) if (f.parent / name).is_file()]


def merge_run_info(paths: list[Path]) -> dict | None:
    """The shards' run.json (beside each results file) as one record; None when no shard has one.
    Shards of one balanced plan must all be there, and of the same plan."""
    try:
        infos = [read_run_info(p) for p in _beside(paths, RUN_INFO)]
    except ValueError as e:
        raise HarnessError(str(e)) from None
    if not infos:
        return None
    check_plan(infos)
    merged = merge_run_infos(infos)
    plans = {i["plan"] for i in infos if "plan" in i}
    if plans:
        merged["plan"] = plans.pop()
    for key in ("worker_s", "predicted_worker_s"):  # every shard's, added up
        if any(key in i for i in infos):
            merged[key] = round(sum(i.get(key, 0) for i in infos), 1)
    return merged


def check_plan(infos: list[dict]) -> None:
    """Every shard K/N of a plan present once, all from the same plan (same cases, converters
    and cost file): otherwise the merge would silently lack cases."""
    planned = [i for i in infos if "plan" in i]
    if not planned:
        return
    plans = {(i["plan"], i["shard"].split("/")[1]) for i in planned}
    if len(plans) > 1:
        raise HarnessError("the shards come from different plans (a different case set, converters or cost "
                           f"file): {', '.join(sorted(p for p, _ in plans))}")
    n = int(plans.pop()[1])
    seen = sorted(int(i["shard"].split("/")[0]) for i in planned)
    missing = sorted(set(range(1, n + 1)) - set(seen))
    if missing or len(seen) != len(set(seen)):
        what = f"shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing" if missing else "a shard given twice"
        raise HarnessError(f"incomplete merge: {what}")


def merge_summary(paths: list[Path], results: list[Result], info: dict | None) -> dict:
    """summary.json as a single run would write it; wall_s is the longest shard's."""
    try:
        shards = [json.loads(p.read_text()) for p in _beside(paths, SUMMARY)]
    except ValueError as e:
        raise HarnessError(f"unreadable {SUMMARY}: {e}") from None
    first = shards[0] if shards else {}
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return {"tier": first.get("tier", info.get("tier") if info else ""), "shard": [1, 1],
            "shards": len(shards), "cases": len({r.case for r in results}),
            "case_limit": first.get("case_limit", 0), "records": len(results),
            "wall_s": max((s.get("wall_s", 0) for s in shards), default=0),
            "statuses": dict(sorted(counts.items())),
            "errors": [e for s in shards for e in s.get("errors", [])],
            "case_provider": first.get("case_provider", ""), "by_check": check_totals(results)}


def merge_folder(paths: list[Path], out: Path) -> list[Result]:
    """Write the merged folder `out` from shard folders (or results files)."""
    paths = [Path(p) for p in paths]
    results = merge_results(paths)
    info = merge_run_info(paths)
    out = Path(out)
    write_results(out / RESULTS, results)
    write_junit(out / "junit.xml", results)
    if info is not None:
        write_run_info(out, info)
    if _beside(paths, SUMMARY):
        (out / SUMMARY).write_text(json.dumps(merge_summary(paths, results, info), indent=1, sort_keys=True))
    envs = _beside(paths, ENVIRONMENT)
    if envs:  # the shards' environments; a shard that differs from the first is kept beside it
        first = json.loads(envs[0].read_text())
        others = [json.loads(p.read_text()) for p in envs[1:]]
        differing = [e for e in others if e != first]
        (out / ENVIRONMENT).write_text(json.dumps({**first, "other_shards": differing} if differing else first,
                                                  indent=1, sort_keys=True))
    for repro in sorted({f.parent / REPRO for f in result_files(paths)}):
        if repro.is_dir() and repro.resolve() != (out / REPRO).resolve():
            shutil.copytree(repro, out / REPRO, dirs_exist_ok=True)
    return results
