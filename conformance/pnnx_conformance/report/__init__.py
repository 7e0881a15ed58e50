"""Reports from result records: support matrix (markdown), HTML report, error histogram,
the committed compact results, certificates, repro bundles and result diffs."""
from __future__ import annotations

from pathlib import Path

from .committed import COMPACT, MATRIX, load_any, write_compact
from .matrix import matrix_markdown, update_readme
from .summary import summarize


def build_reports(results_dir: Path, out_dir: Path, *, html_dir: Path | None = None,
                  readme: Path | None = None) -> dict[str, Path]:
    """Write `support_matrix.md` and `results.jsonl.gz` (small, committed) into out_dir and
    the HTML report (generated, not committed; default `<results>/html`)."""
    results = load_any(Path(results_dir))
    if not results:
        raise ValueError(f"{results_dir}: no result records (*.jsonl) found")
    summary = summarize(results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    matrix = out_dir / MATRIX
    matrix.write_text(matrix_markdown(summary))
    written["matrix"] = matrix
    written["results"] = write_compact(results, out_dir / COMPACT)
    from .html import write_html

    base = Path(results_dir) if Path(results_dir).is_dir() else Path(results_dir).parent
    written["html"] = write_html(summary, base, Path(html_dir or base / "html"))
    if readme is not None:
        update_readme(Path(readme), summary)
        written["readme"] = Path(readme)
    return written
