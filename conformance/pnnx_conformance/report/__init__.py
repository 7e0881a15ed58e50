"""Reports from result records: support matrix (markdown), HTML report, error histogram,
the committed compact results, certificates, repro bundles and result diffs."""
from __future__ import annotations

from pathlib import Path

from .bench import bench_html, load_bench_data, save_bench_data, with_benchmarks
from .committed import COMPACT, MATRIX, compact_source, load_any, write_compact
from .history import HISTORY, record_run, run_tier, trend_html
from .matrix import matrix_markdown
from .readme import update_readme
from .summary import summarize


def build_reports(results_dir: Path, out_dir: Path, *, html_dir: Path | None = None,
                  readme: Path | None = None, bench: Path | None = None) -> dict[str, Path]:
    """Write `support_matrix.md` and `results.jsonl.gz` (small, committed) into out_dir, add
    the run's totals to its `history.json` (history.py), and write the HTML report (generated,
    not committed; default `<results>/html`) with their trend. A benchmark
    (`bench`, default `<out>/bench.json` when present) and the runs' wall times (run.json)
    add a "Benchmarks" section to both; their data is kept in out_dir (bench.py)."""
    results = load_any(Path(results_dir))
    if not results:
        raise ValueError(f"{results_dir}: no result records (*.jsonl) found")
    summary = summarize(results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    base = Path(results_dir) if Path(results_dir).is_dir() else Path(results_dir).parent
    benchmarks = load_bench_data(base, out_dir, bench)
    history = record_run(out_dir, summary, benchmarks.runs, compact_source(results_dir))
    written = {"history": out_dir / HISTORY}
    matrix = out_dir / MATRIX
    matrix.write_text(with_benchmarks(matrix_markdown(summary), benchmarks))
    written["matrix"] = matrix
    written["results"] = write_compact(results, out_dir / COMPACT)
    for path in save_bench_data(benchmarks, out_dir, bench):
        written[path.stem] = path
    from .html import write_html

    written["html"] = write_html(summary, base, Path(html_dir or base / "html"), bench_html(benchmarks),
                                 trend_html(history, run_tier(summary)))
    if readme is not None:
        update_readme(Path(readme), summary)
        written["readme"] = Path(readme)
    return written
