"""Merging shard result files into one result set."""
from __future__ import annotations

from pathlib import Path

from .errors import HarnessError
from .results import Result, read_results
from .runinfo import RUN_INFO, merge_run_infos, read_run_info

RESULTS = "results.jsonl"


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


def merge_run_info(paths: list[Path]) -> dict | None:
    """The shards' run.json (beside each results file) as one record; None when no shard has one."""
    try:
        infos = [read_run_info(f.parent / RUN_INFO) for f in result_files(paths) if (f.parent / RUN_INFO).is_file()]
    except ValueError as e:
        raise HarnessError(str(e)) from None
    return merge_run_infos(infos) if infos else None
