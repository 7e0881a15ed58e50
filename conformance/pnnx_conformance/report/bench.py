"""The reports' benchmark section: per zoo model, ours against upstream `pnnx` (bench.json,
written by benchmarks/bench_zoo.py) and the suite's own wall time per run (the run.json of
each results folder), as HTML for the index page and as markdown for support_matrix.md.

The markdown is part of the committed support_matrix.md, so it is regenerated only from
files in the reports folder: `bench.json` and `suite_runs.json` (the run.json records the
report gathered, which it writes there).
"""
from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from ..runinfo import gather_run_infos
from .html import bar_chart

BENCH = "bench.json"
SUITE_RUNS = "suite_runs.json"
WHO = object()  # where a path takes the side ("ours", "upstream", ...)
OURS_UPSTREAM = ("ours", "upstream")
RATIO_NOTE = ("Ratios are ours / upstream `pnnx` (for onnxruntime: our pnnx.onnx / `torch.onnx.export`'s): "
              "below 1 means ours is faster. Conversion times are whole processes (model build and trace "
              "included), alternating runs; hover a time in the HTML report for the raw runs.")


@dataclass
class BenchData:
    bench: dict | None = None
    runs: list[dict] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.bench and not self.runs


@dataclass(frozen=True)
class Cell:
    text: str
    title: str = ""
    error: bool = False


DASH = Cell("-")


@dataclass(frozen=True)
class Measure:
    """One benchmark number for two sides. `split`: a column per side plus their ratio;
    otherwise one "a / b" column."""
    label: str
    path: tuple
    sides: tuple[str, str] = OURS_UPSTREAM
    unit: str = ".2f"
    runs: tuple | None = None
    split: bool = True


MEASURES = (
    Measure("convert s", ("convert", "median_s", WHO), unit=".1f", runs=("convert", "runs_s", WHO)),
    Measure("pnnx.param ops", ("pnnx_param_ops", WHO), unit="d", split=False),
    Measure("ncnn layers", ("ncnn_layers", WHO), unit="d", split=False),
    Measure("ncnn.bin", ("sizes", WHO, "ncnn.bin"), unit="KiB", split=False),
    Measure("pnnx.bin", ("sizes", WHO, "pnnx.bin"), unit="KiB", split=False),
    Measure("ncnn CPU ms", ("ncnn_cpu_ms", WHO)),
    Measure("onnxruntime ms", ("onnxruntime", "median_ms", WHO), sides=("pnnx.onnx", "torch.onnx")),
)
# suite runs: column -> its value in a run.json record (merged shards carry "shards", one run "shard")
RUN_COLUMNS = {"folder": lambda r: r.get("folder"), "suite": lambda r: r.get("suite"),
               "converters": lambda r: r.get("converters"), "tier": lambda r: r.get("tier"),
               "cases": lambda r: r.get("cases"), "jobs": lambda r: r.get("jobs"),
               "shard(s)": lambda r: r.get("shards", r.get("shard")), "wall s": lambda r: r.get("wall_s")}


def lookup(data, *keys):
    """data[k0][k1]...; None where a level is missing or not a dict."""
    for k in keys:
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return data


def _path(path: tuple, who: str) -> tuple:
    return tuple(who if k is WHO else k for k in path)


def fmt(value, unit: str) -> str:
    if unit == "KiB":
        return f"{value / 1024:,.0f} KiB"
    return format(value, unit)


def side_value(record: dict, m: Measure, who: str):
    value = lookup(record, *_path(m.path, who))
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def side_error(record: dict, m: Measure, who: str) -> str | None:
    """A failed step keeps `{"error": ...}`; a failed side, `{"errors": {side: ...}}`."""
    step = m.path[0]
    return lookup(record, step, "error") or lookup(record, step, "errors", who)


def side_title(record: dict, m: Measure, who: str, value) -> str:
    """The hover text: exact bytes of a size, the raw runs behind a median."""
    if m.unit == "KiB":
        return f"{value} bytes"
    runs = lookup(record, *_path(m.runs, who)) if m.runs else None
    return "runs: " + ", ".join(f"{r:{m.unit}}" for r in runs) + " s" if runs else ""


def side_cell(record: dict, m: Measure, who: str) -> Cell:
    value = side_value(record, m, who)
    if value is not None:
        return Cell(fmt(value, m.unit), side_title(record, m, who, value))
    error = side_error(record, m, who)
    return Cell(f"error: {error}", error=True) if error else DASH


def ratio(record: dict, m: Measure) -> float | None:
    a, b = (side_value(record, m, who) for who in m.sides)
    return a / b if a is not None and b else None


def ratio_cell(record: dict, m: Measure) -> Cell:
    r = ratio(record, m)
    return DASH if r is None else Cell(f"{r:.2f}", f"{m.sides[0]} / {m.sides[1]}")


def pair_cell(record: dict, m: Measure) -> Cell:
    cells = [side_cell(record, m, who) for who in m.sides]
    titles = "; ".join(f"{who}: {c.title}" for who, c in zip(m.sides, cells) if c.title)
    return Cell(" / ".join(c.text for c in cells), titles, any(c.error for c in cells))


def header() -> list[str]:
    heads = ["model"]
    for m in MEASURES:
        heads += ([f"{m.label} {who}" for who in m.sides] + [f"{m.label} ratio"]) if m.split \
            else [f"{m.label} {' / '.join(m.sides)}"]
    return heads


def row(record: dict) -> list[Cell]:
    cells = [Cell(str(record.get("model", "?")), str(record.get("case", "")))]
    for m in MEASURES:
        cells += ([side_cell(record, m, who) for who in m.sides] + [ratio_cell(record, m)]) if m.split \
            else [pair_cell(record, m)]
    return cells


def machine_line(bench: dict) -> str:
    m = bench.get("machine", {})

    def load(key):
        v = m.get(key)
        return "/".join(f"{x:.2f}" for x in v) if v else "-"

    versions = ", ".join(f"{k} {m[k]}" for k in ("python", "torch", "ncnn", "onnxruntime") if m.get(k))
    return (f"{m.get('cpus', '-')} CPUs; load average (1/5/15 min) {load('loadavg_1_5_15')} before, "
            f"{load('loadavg_after')} after; {versions}; {m.get('time_utc', '-')}; "
            f"{bench.get('repeat', '-')} conversions and {bench.get('runs', '-')} timed runs per model, "
            f"ncnn threads {bench.get('ncnn_threads', '-')}")


def run_cells(run: dict) -> list[Cell]:
    cells = []
    for column, get in RUN_COLUMNS.items():
        value = get(run)
        text = ",".join(value) if isinstance(value, list) else "-" if value is None else str(value)
        title = f"{run['busy_s']} s summed over the shards" if column == "wall s" and "busy_s" in run else ""
        cells.append(Cell(text, title))
    return cells


# ---- loading and saving ----

def _read_json(path: Path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable ({e})") from None


def load_bench(path: Path) -> dict:
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise ValueError(f"{path}: not a bench.json (no 'models' list)")
    return data


def load_bench_data(results_base: Path | None, reports_dir: Path, bench: Path | None = None) -> BenchData:
    """bench: `bench` (must exist) or REPORTS/bench.json (when present); suite runs: the
    run.json files under results_base, else REPORTS/suite_runs.json (the committed copy)."""
    bench_path = Path(bench) if bench is not None else Path(reports_dir) / BENCH
    if bench is not None and not bench_path.is_file():
        raise ValueError(f"{bench_path}: no such benchmark file")
    runs = gather_run_infos(results_base) if results_base is not None else []
    committed = Path(reports_dir) / SUITE_RUNS
    if not runs and committed.is_file():
        runs = _read_json(committed)
    return BenchData(load_bench(bench_path) if bench_path.is_file() else None, runs)


def save_bench_data(data: BenchData, reports_dir: Path, bench: Path | None = None) -> list[Path]:
    """Keep what the markdown section came from beside it, so `report --check` can regenerate it."""
    written = []
    if data.runs:
        path = Path(reports_dir) / SUITE_RUNS
        path.write_text(json.dumps(data.runs, indent=1, sort_keys=True) + "\n")
        written.append(path)
    target = Path(reports_dir) / BENCH
    if bench is not None and not (target.exists() and target.samefile(bench)):
        shutil.copyfile(bench, target)
        written.append(target)
    return written


# ---- markdown ----

def _md(cell: Cell) -> str:
    return cell.text.replace("|", "\\|").replace("\n", " ")


def _md_table(heads: list[str], rows: list[list[Cell]]) -> list[str]:
    return ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)] + \
           ["| " + " | ".join(_md(c) for c in cells) + " |" for cells in rows]


def bench_markdown(data: BenchData) -> str:
    """The "Benchmarks" section of support_matrix.md ("" when there is nothing to show)."""
    if data.empty:
        return ""
    parts = ["## Benchmarks", ""]
    if data.bench:
        parts += [f"Machine: {machine_line(data.bench)}.", "", RATIO_NOTE, ""]
        parts += _md_table(header(), [row(r) for r in data.bench["models"]]) + [""]
    if data.runs:
        parts += ["### Suite wall time", ""]
        parts += _md_table(list(RUN_COLUMNS), [run_cells(r) for r in data.runs]) + [""]
    return "\n".join(parts)


def with_benchmarks(matrix: str, data: BenchData) -> str:
    section = bench_markdown(data)
    return f"{matrix}\n{section}" if section else matrix


# ---- HTML ----

def _td(cell: Cell, numeric: bool = True) -> str:
    cls = "fail" if cell.error else "num" if numeric and cell.text != "-" else ""
    attrs = (f" class='{cls}'" if cls else "") + (f" title='{html.escape(cell.title)}'" if cell.title else "")
    return f"<td{attrs}>{html.escape(cell.text)}</td>"


def _html_table(table_id: str, heads: list[str], rows: list[list[Cell]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in heads)
    body = "".join("<tr>" + _td(cells[0], False) + "".join(_td(c) for c in cells[1:]) + "</tr>" for cells in rows)
    return f"<table id='{table_id}'><tr>{head}</tr>{body}</table>"


def ratio_color(value: float) -> str:
    return "#4caf50" if value <= 1.0 else "#ffb300" if value <= 1.5 else "#e53935"


def ratio_chart(records: list[dict]) -> str:
    items = [(f"{r.get('model', '?')} {m.label}", ratio(r, m)) for r in records for m in MEASURES if m.split]
    items = [(label, v) for label, v in items if v is not None]
    if not items:
        return "<p>No ratios: no model has numbers from both sides.</p>"
    scale = max(1.0, max(v for _, v in items)) * 1.1
    return bar_chart(items, "ours / upstream (dashed line: equal)", scale=scale, text=lambda v: f"{v:.2f}",
                     color=ratio_color, marker=1.0)


def bench_html(data: BenchData) -> str:
    """The index page's "Benchmarks" section ("" when there is nothing to show)."""
    if data.empty:
        return ""
    parts = ["<h2 id='benchmarks'>Benchmarks</h2>"]
    if data.bench:
        records = data.bench["models"]
        parts += [f"<p id='bench-machine'>{html.escape(machine_line(data.bench))}</p>",
                  f"<p>{html.escape(RATIO_NOTE.replace('`', ''))}</p>",
                  _html_table("bench", header(), [row(r) for r in records]), ratio_chart(records)]
    if data.runs:
        parts += ["<h3>Suite wall time</h3>",
                  _html_table("suite-runs", list(RUN_COLUMNS), [run_cells(r) for r in data.runs])]
    return "".join(parts)
