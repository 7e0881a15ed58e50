"""The README's operator support table: one compact table, a row per operator (every row of
the operator tables, then every zoo network), a cell per converter route that sums up all its
checks and backends as one mark plus the short codes of the columns that do not pass.

The full per-backend matrix is `reports/support_matrix.md` (matrix.py) and the HTML report;
this table only says where to look. Routes are whatever converters the results hold, ordered
by `summary.converter_order` (the reference routes first, upstream last).
"""
from __future__ import annotations

from pathlib import Path

from pnnx_op_cases.tables import all_rows

from .matrix import GENERATED_HEADER, falls_short, model_rows
from .summary import Column, Summary, converter_order, mode_key

README_BEGIN = "<!-- support-matrix:begin -->"
README_END = "<!-- support-matrix:end -->"

# short codes of the checks and backends; one not listed (a plug-in's) is written in full
CODES = {"convert": "cv", "format": "fm", "roundtrip": "rt", "reexport": "rx",
         "torch": "th", "pnnx-python": "py", "onnxruntime": "ort", "ncnn-cpu": "nc", "ncnn-vulkan": "nv"}
PRECISION_CODES = {"fp32": "32", "fp16": "16", "default": "d"}
PRECISION_NAMES = {"fp32": "fp32", "fp16": "fp16", "default": "the runtime's default options, fp16 where it can"}
MARKS = (("✅", "every case passes every check and backend"),
         ("🟡", "cases fail in the columns the codes name, each of which passes some"),
         ("❌", "as 🟡, but a named column passes none"),
         ("⚪", "nothing fails, and the codes name where cases are waived or skipped (reasons in the full report)"),
         ("·", "not run"),
         ("=", "the same as the first route's cell"))
SKIPPED = ("xfail", "skipped")


def what(col: Column) -> str:
    """The check, or the backend of a parity column."""
    return col.backend if col.check == "parity" else col.check


def code(col: Column, with_precision: bool) -> str:
    base = CODES.get(what(col), what(col))
    if with_precision and col.precision:
        return base + PRECISION_CODES.get(col.precision, f"/{col.precision}")
    return base


def failing(cell) -> int:
    return cell.total - cell.passed - sum(cell.statuses[s] for s in SKIPPED)


def codes(cols: list[Column], named: list[Column]) -> str:
    """Codes of `named` (a subset of `cols`, the route's columns that ran for the row): a
    backend's bare code when all its modes are named, else one code per named mode."""
    out = []
    for col in named:
        modes = [c for c in cols if what(c) == what(col)]
        if len(modes) == 1 or all(m in named for m in modes):
            if code(col, False) not in out:
                out.append(code(col, False))
        else:
            out.append(code(col, True))
    return ",".join(out)


def route_cell(summary: Summary, op: str, cols: list[Column]) -> str:
    ran = [c for c in cols if summary.cell(op, c).total]
    if not ran:
        return "·"
    bad = [c for c in ran if failing(summary.cell(op, c))]
    if bad:
        mark = "❌" if any(summary.cell(op, c).passed == 0 for c in bad) else "🟡"
        convert = [c for c in bad if c.check == "convert" and summary.cell(op, c).passed == 0]
        return f"{mark} {codes(ran, convert or bad)}"
    waived = [c for c in ran if summary.cell(op, c).passed < summary.cell(op, c).total]
    return f"⚪ {codes(ran, waived)}" if waived else "✅"


def route_cells(summary: Summary, op: str, convs: list[str], cols: dict) -> list[str]:
    """One cell per route; a later route's cell equal to the first route's is written "=" (five
    routes that mostly agree stay readable, and within the README's byte budget)."""
    cells = [route_cell(summary, op, cols[conv]) for conv in convs]
    return cells[:1] + ["=" if c == cells[0] and c != "·" else c for c in cells[1:]]


def routes(summary: Summary) -> list[str]:
    return sorted({c.converter for c in summary.columns}, key=converter_order)


def claims(op_row) -> str:
    """Upstream's own claims: p = pnnx converts it, n = its ncnn export supports it (n* partly)."""
    return ("p" if op_row.upstream_supported else "") + {"1": "n", "star": "n*"}.get(op_row.upstream_ncnn, "")


def support_table(summary: Summary) -> str:
    convs = routes(summary)
    cols = {conv: [c for c in summary.columns if c.converter == conv] for conv in convs}
    # no outer pipes, no padding: 440 rows, each byte saved is 440 bytes of README
    lines = ["|".join(["operator", "upstream claims"] + convs), "|".join(["---"] * (2 + len(convs)))]
    for row in pytorch_rows() + tuple(model_rows(summary)):
        short = falls_short(summary, row.op, row.upstream_supported, row.upstream_ncnn)
        name = row.op + (" ⚠️" if short else "") + (" (ours)" if row.ours else "")
        lines.append("|".join([name, claims(row)] + route_cells(summary, row.op, convs, cols)))
    return "\n".join(lines)


def totals_table(summary: Summary) -> str:
    """Cases passing / run, a row per check or backend mode, a column per route."""
    convs = routes(summary)
    totals = summary.column_totals()
    rows = sorted({(c.check, c.backend, c.precision) for c in summary.columns},
                  key=lambda k: mode_key(Column("", *k)))
    lines = ["| check / backend | code | " + " | ".join(convs) + " |", "|---|---|" + "---|" * len(convs)]
    for check, backend, precision in rows:
        col = Column("", check, backend, precision)
        cells = []
        for conv in convs:
            t = totals.get(Column(conv, check, backend, precision))
            cells.append(f"{t.passed}/{t.total}" if t and t.total else "·")
        label = what(col) + (f" {precision}" if precision else "")
        single = sum(1 for k in rows if k[:2] == (check, backend)) == 1
        lines.append(f"| {label} | {code(col, not single)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def legend(summary: Summary) -> str:
    marks = "; ".join(f"{m} {text}" for m, text in MARKS)
    precisions = sorted({c.precision for c in summary.columns if c.precision})
    suffixes = "; ".join(f"{PRECISION_CODES.get(p, '/' + p)} = {PRECISION_NAMES.get(p, p)}" for p in precisions)
    return (f"A cell sums up one converter route over all its checks and backends: {marks}. "
            "Codes are those of the totals above (cv alone: no case converts, so nothing after it runs); "
            "a backend's code alone means all its modes that ran, "
            f"a suffix one mode ({suffixes}). Upstream claims: p = upstream PNNX converts the operator, "
            "n = its ncnn export supports it (n* partly); ⚠️ = claimed, and the `reference` route does "
            "not pass every case; (ours) = a row upstream's tables do not have.")


def pytorch_rows() -> tuple:
    """The rows the README lists: the PyTorch-level operators. The `onnx` table (ONNX operators
    as input, the ONNX route's) stays in `reports/support_matrix.md`: the README's byte budget."""
    return tuple(row for row in all_rows() if row.table != "onnx")


def readme_section(summary: Summary) -> str:
    table_ops = {row.op for row in pytorch_rows()}
    ran = len({r.op for r in summary.results} & table_ops)
    models = len(model_rows(summary))
    return "\n".join([
        GENERATED_HEADER, "",
        f"{ran} of {len(table_ops)} table rows have results"
        + (f", plus {models} whole networks (the `models.` rows)" if models else "") + ". "
        "Per-backend counts (ONNX operators too): `reports/support_matrix.md`; every case: the HTML report.",
        "", "Cases passing / run, per check or backend (with its code) and route:", "",
        totals_table(summary), "", legend(summary), "", support_table(summary), ""])


def with_section(text: str, summary: Summary, where: str = "README") -> str:
    """`text` with the part between the support-matrix markers regenerated."""
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{where}: markers {README_BEGIN} / {README_END} not found")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    return f"{head}{README_BEGIN}\n{readme_section(summary)}{README_END}{tail}"


def update_readme(readme: Path, summary: Summary) -> bool:
    """Replace the text between the support-matrix markers. Returns True if it changed."""
    text = Path(readme).read_text()
    new = with_section(text, summary, str(readme))
    if new != text:
        Path(readme).write_text(new)
        return True
    return False
