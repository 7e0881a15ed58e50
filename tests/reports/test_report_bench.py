"""The reports' benchmark section (issue 9): bench.json per model and the suite's wall time per
run, in the HTML index and in support_matrix.md; run.json from real runs, merge and the zoo."""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pnnx_conformance.cli import main
from pnnx_conformance.results import Metrics, Result, write_results
from pnnx_conformance.runinfo import RUN_INFO
from pnnx_model_zoo import run as zoo_run
from pnnx_model_zoo.zoo import zoo_cases
from script_modules import benchmark

MACHINE = {"cpus": 2, "loadavg_1_5_15": [1.5, 1.25, 1.0], "loadavg_after": [2.0, 1.5, 1.0], "python": "3.11.7",
           "torch": "2.14.1", "ncnn": "1.0.2", "onnxruntime": "1.31.1", "time_utc": "2026-11-23T01:45:43Z"}
NET_A = {"model": "netA", "case": "models.netA/x",
         "convert": {"runs_s": {"ours": [3.0, 2.0, 4.0], "upstream": [5.0, 4.0, 6.0]},
                     "median_s": {"ours": 3.0, "upstream": 5.0}, "ratio_ours_over_upstream": 0.6, "errors": {}},
         "sizes": {"ours": {"ncnn.bin": 2048, "pnnx.bin": 10240}, "upstream": {"ncnn.bin": 4096, "pnnx.bin": 10240}},
         "pnnx_param_ops": {"ours": 12, "upstream": 14}, "ncnn_layers": {"ours": 9, "upstream": 9},
         "ncnn_cpu_ms": {"ours": 1.5, "upstream": 3.0},
         "onnxruntime": {"median_ms": {"pnnx.onnx": 2.0, "torch.onnx": 1.6},
                         "nodes": {"pnnx.onnx": 5, "torch.onnx": 6}}}
# upstream's conversion failed, its ncnn model could not load, onnxruntime failed, no op counts
NET_B = {"model": "netB", "case": "models.netB/x",
         "convert": {"runs_s": {"ours": [7.0], "upstream": []}, "median_s": {"ours": 7.0, "upstream": None},
                     "ratio_ours_over_upstream": None, "errors": {"upstream": "SystemExit: pnnx: unsupported op"}},
         "sizes": {"ours": {"ncnn.bin": 1024}, "upstream": {}},
         "ncnn_cpu_ms": {"ours": 1.0, "errors": {"upstream": "RuntimeError: a|b"}},
         "onnxruntime": {"error": "InvalidGraph: bad"}}
BENCH = {"machine": MACHINE, "repeat": 3, "runs": 20, "ncnn_threads": 1, "models": [NET_A, NET_B]}
ROW_A = "| netA | 3.0 | 5.0 | 0.60 | 12 / 14 | 9 / 9 | 2 KiB / 4 KiB | 10 KiB / 10 KiB | 1.50 | 3.00 | 0.50 | " \
        "2.00 | 1.60 | 1.25 |"
ROW_B = "| netB | 7.0 | error: SystemExit: pnnx: unsupported op | - | - / - | - / - | 1 KiB / - | - / - | 1.00 | " \
        "error: RuntimeError: a\\|b | - | error: InvalidGraph: bad | error: InvalidGraph: bad | - |"


class Tables(HTMLParser):
    """Every <table id=...>: rows of (text, attributes) cells."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: dict[str, list[list[tuple[str, dict]]]] = {}
        self._table = self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(attrs.get("id", ""), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = ["", attrs]
            self._table[-1].append(self._cell)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[0] += data


def row_of(table, first: str) -> dict[str, tuple[str, dict]]:
    heads = [text for text, _ in table[0]]
    rows = [r for r in table[1:] if r[0][0] == first]
    assert len(rows) == 1, f"no single row {first!r}"
    return dict(zip(heads, rows[0]))


def results_folder(folder: Path, run_info: dict | None = None) -> Path:
    write_results(folder / "results.jsonl", [
        Result(case="nn.ReLU/a", op="nn.ReLU", table="nn", converter="reference", check="parity", status="pass",
               backend="torch", precision="fp32", metrics=Metrics(max_abs=0.0))])
    if run_info is not None:
        (folder / RUN_INFO).write_text(json.dumps(run_info))
    return folder


def report(results: Path, out: Path, *extra: str) -> tuple[str, str]:
    assert main(["report", "--results", str(results), "--out", str(out), "--html", str(out / "html"), *extra]) == 0
    return (out / "support_matrix.md").read_text(), (out / "html" / "index.html").read_text()


@pytest.fixture
def reports(tmp_path):
    out = tmp_path / "reports"
    out.mkdir()
    (out / "bench.json").write_text(json.dumps(BENCH))
    results_folder(tmp_path / "results" / "reference",
                   {"suite": "conformance", "tier": "smoke", "converters": ["reference"], "cases": 3, "jobs": 2,
                    "wall_s": 12.5, "shard": "1/1"})
    return out


def test_html_index_has_the_benchmark_table_chart_and_machine_line(tmp_path, reports):
    _, index = report(tmp_path / "results", reports)
    tables = Tables(index).tables
    a = row_of(tables["bench"], "netA")
    assert [a[h][0] for h in ("convert s ours", "convert s upstream", "convert s ratio", "ncnn CPU ms ratio",
                              "onnxruntime ms ratio", "pnnx.param ops ours / upstream")] == \
        ["3.0", "5.0", "0.60", "0.50", "1.25", "12 / 14"]
    assert a["convert s ours"][1]["title"] == "runs: 3.0, 2.0, 4.0 s"     # raw runs on hover
    assert a["ncnn.bin ours / upstream"][1]["title"] == "ours: 2048 bytes; upstream: 4096 bytes"
    assert "load average (1/5/15 min) 1.50/1.25/1.00 before, 2.00/1.50/1.00 after" in index
    assert "torch 2.14.1, ncnn 1.0.2, onnxruntime 1.31.1; 2026-11-23T01:45:43Z" in index
    chart = index[index.index("<svg role='img' aria-label='ours / upstream"):]
    chart = chart[:chart.index("</svg>")]
    assert ">netA convert s<" in chart and ">0.60<" in chart and ">1.25<" in chart and "stroke-dasharray" in chart
    assert ">netB convert s<" not in chart                                  # no ratio without both sides


def test_html_shows_errors_as_text_and_missing_numbers_as_dashes(tmp_path, reports):
    _, index = report(tmp_path / "results", reports)
    b = row_of(Tables(index).tables["bench"], "netB")
    assert b["convert s upstream"] == ["error: SystemExit: pnnx: unsupported op", {"class": "fail"}]
    assert b["ncnn CPU ms upstream"][0] == "error: RuntimeError: a|b"
    assert b["onnxruntime ms torch.onnx"][0] == "error: InvalidGraph: bad"
    assert [b[h][0] for h in ("convert s ratio", "pnnx.param ops ours / upstream", "ncnn.bin ours / upstream")] == \
        ["-", "- / -", "1 KiB / -"]


def test_markdown_section_ends_the_support_matrix(tmp_path, reports):
    matrix, _ = report(tmp_path / "results", reports)
    head, section = matrix.split("\n## Benchmarks\n", 1)
    assert "## torch.nn\n" in head and "## " not in section.replace("### ", "")
    lines = section.splitlines()
    assert ROW_A in lines and ROW_B in lines
    assert "Machine: 2 CPUs; load average (1/5/15 min) 1.50/1.25/1.00 before, 2.00/1.50/1.00 after;" in section
    assert "| reference | conformance | reference | smoke | 3 | 2 | 1/1 | 12.5 |" in lines


def test_no_bench_and_no_run_records_means_no_section(tmp_path):
    matrix, index = report(results_folder(tmp_path / "results"), tmp_path / "reports")
    assert "Benchmarks" not in matrix and "Benchmarks" not in index
    assert not (tmp_path / "reports" / "suite_runs.json").exists()


def test_check_regenerates_the_section_from_the_files_beside_the_matrix(tmp_path, reports, capsys):
    report(tmp_path / "results", reports)
    assert json.loads((reports / "suite_runs.json").read_text())[0]["wall_s"] == 12.5
    assert main(["report", "--check", "--out", str(reports)]) == 0     # from results.jsonl.gz + suite_runs.json
    changed = copy.deepcopy(BENCH)
    changed["models"][0]["ncnn_cpu_ms"]["ours"] = 2.5
    (reports / "bench.json").write_text(json.dumps(changed))
    capsys.readouterr()
    assert main(["report", "--check", "--out", str(reports)]) == 1
    assert "+| netA | 3.0 | 5.0 | 0.60 | 12 / 14 | 9 / 9 | 2 KiB / 4 KiB | 10 KiB / 10 KiB | 2.50 |" \
        in capsys.readouterr().out


def test_bench_option_copies_the_file_beside_the_matrix(tmp_path):
    bench = tmp_path / "elsewhere.json"
    bench.write_text(json.dumps(BENCH))
    matrix, _ = report(results_folder(tmp_path / "results"), tmp_path / "reports", "--bench", str(bench))
    assert ROW_A in matrix.splitlines()
    assert json.loads((tmp_path / "reports" / "bench.json").read_text()) == BENCH


@pytest.mark.parametrize("content, message", [(None, "no such benchmark file"), ("{", "unreadable"),
                                              ('{"machine": {}}', "not a bench.json")])
def test_a_bad_bench_file_is_one_clear_error(tmp_path, capsys, content, message):
    bench = tmp_path / "bench.json"
    if content is not None:
        bench.write_text(content)
    code = main(["report", "--results", str(results_folder(tmp_path / "results")), "--out", str(tmp_path / "r"),
                 "--bench", str(bench)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: report: ") and message in err[0]


def test_a_real_run_records_its_wall_time_and_the_report_shows_it(tmp_path):
    out = tmp_path / "results" / "reference"
    cmd = [sys.executable, "-m", "pnnx_conformance.cli", "run", "--op", "nn.ReLU", "--max-cases", "1",
           "--converter", "reference", "--backend", "torch", "--jobs", "1", "--quiet", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    info = json.loads((out / RUN_INFO).read_text())
    assert {k: info[k] for k in ("suite", "tier", "converters", "cases", "jobs", "shard")} == \
        {"suite": "conformance", "tier": "smoke", "converters": ["reference"], "cases": 1, "jobs": 1, "shard": "1/1"}
    assert 0 < info["wall_s"] < 300
    matrix, index = report(tmp_path / "results", tmp_path / "reports")
    assert f"| reference | conformance | reference | smoke | 1 | 1 | 1/1 | {info['wall_s']} |" in matrix.splitlines()
    runs = row_of(Tables(index).tables["suite-runs"], "reference")
    assert runs["wall s"][0] == str(info["wall_s"]) and runs["tier"][0] == "smoke"


def test_merge_takes_the_longest_shard_and_sums_cases_and_busy_time(tmp_path):
    shards = [results_folder(tmp_path / f"s{k}", {"suite": "conformance", "tier": "full", "converters": [conv],
                                                   "cases": cases, "jobs": jobs, "wall_s": wall, "shard": f"{k}/2"})
              for k, conv, cases, jobs, wall in ((1, "reference", 3, 2, 10.0), (2, "upstream", 4, 4, 30.0))]
    second = shards[1] / "results.jsonl"
    second.write_text(second.read_text().replace("nn.ReLU/a", "nn.ReLU/b"))   # shards never share a record
    assert main(["merge", *map(str, shards), "--out", str(tmp_path / "merged")]) == 0
    info = json.loads((tmp_path / "merged" / RUN_INFO).read_text())
    assert {k: info[k] for k in ("tier", "converters", "cases", "jobs", "wall_s", "busy_s", "shards")} == \
        {"tier": "full", "converters": ["reference", "upstream"], "cases": 7, "jobs": 4, "wall_s": 30.0,
         "busy_s": 40.0, "shards": 2}
    matrix, _ = report(tmp_path / "merged", tmp_path / "reports")
    assert "| . | conformance | reference,upstream | full | 7 | 4 | 2 | 30.0 |" in matrix.splitlines()


def test_the_zoo_run_records_its_wall_time(tmp_path, monkeypatch):
    monkeypatch.setattr(zoo_run, "run_streams", lambda streams, jobs: None)
    cases = zoo_run.select("resnet18,vit_b_16")
    zoo_run.run_zoo(cases, tmp_path / "models", upstream=False, onnx=False, jobs=3)
    info = json.loads((tmp_path / "models" / RUN_INFO).read_text())
    assert {k: info[k] for k in ("suite", "tier", "converters", "cases", "jobs")} == \
        {"suite": "model_zoo", "tier": "full", "converters": ["reference", "reference-export", "reference-pt"], "cases": 2,
         "jobs": 3}
    assert zoo_run.tier_of(zoo_run.select("resnet18")) == "smoke"


@pytest.fixture
def bench_zoo():
    return benchmark("bench_zoo")


def test_bench_zoo_takes_every_zoo_model_by_default(bench_zoo, tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(bench_zoo, "bench_all", lambda cases, *rest: seen.extend(cases) or [])
    monkeypatch.setattr(bench_zoo, "machine", lambda: dict(MACHINE))
    assert bench_zoo.main(["--out", str(tmp_path / "bench.json")]) == 0
    assert [c.id for c in seen] == [c.id for c in zoo_cases()]
    assert bench_zoo.main(["--models", "resnet18", "--out", str(tmp_path / "bench.json")]) == 0
    assert seen[-1].id == "models.resnet18/random_init" and len(seen) == len(zoo_cases()) + 1


def test_bench_zoo_prints_progress_with_elapsed_seconds(bench_zoo, capsys):
    cases = zoo_run.select("resnet18,mobilenet_v2")
    records = bench_zoo.bench_all(cases, 1, 1, 1, bench=lambda case, *rest: {"model": case.id})
    err = capsys.readouterr().err.splitlines()
    assert [r["model"] for r in records] == [c.id for c in cases]
    assert err[0] == f"[1/2] {cases[0].id} ..." and err[1].startswith(f"[1/2] {cases[0].id} done in ")
    assert err[3].endswith(" s elapsed)") and err[3].startswith(f"[2/2] {cases[1].id} done in ")
