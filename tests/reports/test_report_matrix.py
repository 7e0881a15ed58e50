"""The support matrix and HTML report render what the result records say."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pnnx_conformance.report import build_reports
from pnnx_conformance.report.matrix import matrix_markdown
from pnnx_conformance.report.readme import README_BEGIN, README_END, update_readme
from pnnx_conformance.report.summary import error_histogram, summarize
from pnnx_conformance.results import Metrics, Result, write_results


def rec(case, status, check="parity", backend="ncnn-cpu", precision="fp32", converter="reference", error=""):
    op = case.split("/")[0]
    table = "torch" if op.startswith("torch.") else op.split(".")[0]
    return Result(case=case, op=op, table=table, converter=converter, check=check, status=status,
                  backend=backend if check == "parity" else None, precision=precision if check == "parity" else None,
                  metrics=Metrics(max_abs=1e-6 if status == "pass" else 0.5, max_rel=1e-6), error=error)


@pytest.fixture
def results():
    return [
        rec("nn.ReLU/a", "pass"), rec("nn.ReLU/b", "pass"),
        rec("nn.Conv2d/k3", "pass"), rec("nn.Conv2d/k5", "fail-numeric", error="max abs 0.5 > 1e-4"),
        rec("F.relu/x", "crash", error="worker died: SIGSEGV"),
        rec("nn.ReLU/a", "pass", check="convert"), rec("nn.ReLU/b", "pass", check="convert"),
        rec("nn.Conv2d/k3", "pass", check="convert"), rec("nn.Conv2d/k5", "pass", check="convert"),
        rec("F.relu/x", "fail-convert", check="convert", error="cannot trace /tmp/x/y.py line 3"),
    ]


def test_cells_count_passing_cases(results):
    s = summarize(results)
    col = next(c for c in s.columns if c.backend == "ncnn-cpu")
    assert s.cell("nn.ReLU", col).text() == "2/2" and s.cell("nn.ReLU", col).state == "pass"
    assert s.cell("nn.Conv2d", col).text() == "1/2" and s.cell("nn.Conv2d", col).state == "partial"
    assert s.cell("F.relu", col).state == "fail"


def test_matrix_lists_every_row_and_flags_shortfalls(results):
    md = matrix_markdown(summarize(results))
    assert md.startswith("<!-- auto-generated")
    assert "| `nn.ReLU` | ✔ | ✔ | ✅ 2/2 | ✅ 2/2 |" in md
    # upstream claims F.relu, we fail it: flagged
    assert "`F.relu` ⚠️" in md
    # rows that never ran are present, not hidden
    assert "`nn.Bilinear`" in md and "`torch.cat`" in md


def test_error_histogram_groups_numbers_and_paths(results):
    extra = [rec("F.relu/y", "fail-convert", check="convert", error="cannot trace /other/z.py line 9")]
    hist = error_histogram(results + extra)
    top = hist[0]
    assert top[0] == "cannot trace <path> line N" and top[1] == 2


def test_readme_section_is_replaced_between_markers(tmp_path, results):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{README_BEGIN}\nOLD-CONTENT\n{README_END}\noutro\n")
    assert update_readme(readme, summarize(results))
    text = readme.read_text()
    assert "OLD-CONTENT" not in text and text.startswith("intro\n") and text.endswith("outro\n")
    assert "\nnn.Conv2d ⚠️|pn|🟡 nc\n" in text
    assert not update_readme(readme, summarize(results))  # idempotent


def test_build_reports_refuses_empty_results(tmp_path):
    with pytest.raises(ValueError, match="no result records"):
        build_reports(tmp_path, tmp_path / "out")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(chromium() is None, reason="Debian's chromium is not installed (run.sh installs it)")
def test_html_report_shows_numbers_in_headless_chromium(tmp_path, results):
    write_results(tmp_path / "res" / "results.jsonl", results)
    written = build_reports(tmp_path / "res", tmp_path / "reports", html_dir=tmp_path / "html")
    dom = render_dom(written["html"], tmp_path)
    assert "5 cases, 3 operators, 10 results." in dom
    assert "reference: ncnn-cpu fp32" in dom
    op_page = tmp_path / "html" / "ops" / "nn.Conv2d.html"
    dom = render_dom(op_page, tmp_path)
    assert "fail-numeric" in dom and "max abs 0.5 &gt; 1e-4" in dom


def render_dom(path: Path, tmp_path: Path) -> str:
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp_path / 'chrome-profile'}", "--dump-dom", path.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_a_backend_not_run_for_a_row_does_not_mark_it_short():
    """A run of one backend (a device run of ncnn-vulkan alone) leaves the other columns
    empty for the row; only a failing or partial cell marks the row ⚠️."""
    from pnnx_conformance.report.matrix import falls_short

    vulkan_only = summarize([rec("nn.ReLU/a", "pass", backend="ncnn-vulkan"),
                             rec("nn.Conv2d/k3", "pass", backend="ncnn-cpu"),
                             rec("nn.Conv2d/k3", "pass", check="convert")])
    assert falls_short(vulkan_only, "nn.ReLU", True, "1") == []
    failing = summarize([rec("nn.ReLU/a", "pass", backend="ncnn-vulkan"),
                         rec("nn.ReLU/a", "fail-numeric", backend="ncnn-cpu")])
    assert falls_short(failing, "nn.ReLU", True, "1") == ["ncnn"]
