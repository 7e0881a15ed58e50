"""Reports from result records: support matrix (markdown), HTML report, error histogram."""
from __future__ import annotations

from pathlib import Path

from .matrix import matrix_markdown, update_readme
from .summary import load_results, summarize


def build_reports(results_dir: Path, out_dir: Path, *, html_dir: Path | None = None,
                  readme: Path | None = None) -> dict[str, Path]:
    """Write `support_matrix.md` (small, committed) and the HTML report (generated, not committed)."""
    results = load_results(Path(results_dir))
    if not results:
        raise ValueError(f"{results_dir}: no result records (*.jsonl) found")
    summary = summarize(results)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    matrix = out_dir / "support_matrix.md"
    matrix.write_text(matrix_markdown(summary))
    written["matrix"] = matrix
    from .html import write_html

    written["html"] = write_html(summary, Path(results_dir), Path(html_dir or Path(results_dir) / "html"))
    if readme is not None:
        update_readme(Path(readme), summary)
        written["readme"] = Path(readme)
    return written
