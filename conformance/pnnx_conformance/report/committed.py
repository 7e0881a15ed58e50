"""The committed, compact form of a run's results and the CI check against it.

`reports/results.jsonl.gz` holds every record without its long `detail` text, gzipped
deterministically (no timestamp), so the same results always give the same bytes.
`check_matrix` regenerates the matrix from it (and its benchmark section from the
bench.json / suite_runs.json beside it) in memory and diffs the committed one.
"""
from __future__ import annotations

import difflib
import gzip
import io
import json
from dataclasses import asdict
from pathlib import Path

from ..results import Result
from .bench import load_bench_data, with_benchmarks
from .matrix import matrix_markdown
from .readme import with_section
from .summary import load_results, summarize

COMPACT = "results.jsonl.gz"
MATRIX = "support_matrix.md"
DROPPED = ("detail",)  # long tracebacks: in the full results, not the committed copy


def compact_bytes(results: list[Result]) -> bytes:
    lines = []
    for r in sorted(results, key=lambda r: r.key):
        d = asdict(r)
        for k in DROPPED:
            d[k] = ""
        lines.append(json.dumps(d, sort_keys=True, separators=(",", ":")))
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as f:
        f.write(("\n".join(lines) + "\n").encode())
    return buf.getvalue()


def write_compact(results: list[Result], path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(compact_bytes(results))
    return path


def read_compact(path: Path) -> list[Result]:
    with gzip.open(path, "rt") as f:
        return [Result.from_dict(json.loads(line)) for line in f if line.strip()]


def load_any(path: Path) -> list[Result]:
    """A results folder (every *.jsonl under it) or a compact `results.jsonl.gz`; a folder
    with no *.jsonl but a compact file reads that."""
    path = Path(path)
    if path.is_file():
        return read_compact(path) if path.suffix == ".gz" else load_results_file(path)
    results = load_results(path) if path.is_dir() else []
    if not results and (path / COMPACT).is_file():
        return read_compact(path / COMPACT)
    return results


def compact_source(path: Path) -> Path | None:
    """The committed compact file `load_any(path)` reads, if it reads one."""
    path = Path(path)
    if path.is_file():
        return path if path.suffix == ".gz" else None
    if path.is_dir() and (path / COMPACT).is_file() and not any(path.glob("**/*.jsonl")):
        return path / COMPACT
    return None


def load_results_file(path: Path) -> list[Result]:
    from ..results import read_results

    return list(read_results(path))


def committed_records(reports_dir: Path, results: Path | None = None) -> tuple[Path, list[Result]]:
    source = Path(results) if results is not None else Path(reports_dir) / COMPACT
    if not source.exists():
        raise ValueError(f"{source}: no committed results to check against")
    records = load_any(source)
    if not records:
        raise ValueError(f"{source}: no result records")
    return source, records


def _diff(path: Path, committed: str, expected: str, source: Path) -> str:
    if committed == expected:
        return ""
    return "".join(difflib.unified_diff(committed.splitlines(True), expected.splitlines(True),
                                        f"{path} (committed)", f"{path} (from {source})"))


def check_matrix(reports_dir: Path, results: Path | None = None) -> str:
    """A unified diff between the committed matrix and the one the committed results give
    ("" when they agree)."""
    reports_dir = Path(reports_dir)
    source, records = committed_records(reports_dir, results)
    base = source if source.is_dir() else source.parent
    expected = with_benchmarks(matrix_markdown(summarize(records)), load_bench_data(base, reports_dir))
    matrix = reports_dir / MATRIX
    return _diff(matrix, matrix.read_text() if matrix.is_file() else "", expected, source)


def check_readme(readme: Path, reports_dir: Path, results: Path | None = None) -> str:
    """The same for a README's support-matrix section."""
    source, records = committed_records(reports_dir, results)
    text = Path(readme).read_text()
    return _diff(Path(readme), text, with_section(text, summarize(records), str(readme)), source)
