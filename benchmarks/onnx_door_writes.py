"""What our ONNX door writes for the table rows `pnnx-cases where` finds no ONNX place for: each
case of the row is exported as the `reference-onnx` route exports it (torch.onnx, TorchScript-based,
opset 18), converted by the ONNX door in process (`api.export_onnx`, self-check on), its `_pnnx.py`
run against torch eager, and the operators of its pnnx.param recorded, less the ones the Python
door writes for the same case beside the row itself (a case's own scaffolding) and, in a
non-contiguous case, the transpose that makes its input so (`x.t()` there, a Transpose here); where
the Python door renames the row itself (Tensor.add is a pnnx.Expression there too) only the latter.

    .tox/env/bin/python benchmarks/onnx_door_writes.py [--op PATTERN ...] [--tier smoke|full]
        [--all] [--check] [--json out.json] [--replay out.json] [--write]

One line per row, its verdict:
  spelled F.x            a case comes back as the row's own operator under another name, alone:
                         `where` shows the rule writing F.x (op_cases/pnnx_op_cases/where.py
                         ONNX_SPELLINGS)
  written as A + B or C  the operators each case comes back as (one set per kind of case)
  no usable export: ...  torch.onnx gives no file (or a wrong one) for any case
  written under its own name   no gap: the rule writing it must name it in its produces= trait
                         (`--all --check` lists the rows `where` shows an ONNX place for that
                         torch.onnx's files of their cases come back otherwise: the rule serves
                         other graphs (Gelu at opset 20; Swish, opset 24, writes F.silu and
                         torch.sigmoid), or its trait names what it does not write)
and "; BUG case: ..." where a conversion of a usable file fails or its `_pnnx.py` computes otherwise.
Other verdicts are the reasons of the ONNX door's rows in op_cases/pnnx_op_cases/where_gaps.tsv (below its
"measured" line). `--check` exits 1 where a verdict differs from that data; `--write` rewrites the
data (every row: no --op); `--replay` takes the outcomes of an earlier `--json` instead of measuring.
The full tier takes about 30 minutes on a loaded 2-core machine.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAPS = ROOT / "op_cases" / "pnnx_op_cases" / "where_gaps.tsv"
DOOR = ".onnx"
# gaps of the ONNX door that no conversion can close, listed by hand with their reason
NOT_MEASURED = ("an inference export holds no dropout", "a lazy module is its materialized",
                "the in-place form")
MARK = "# the ONNX door, measured: benchmarks/onnx_door_writes.py --write rewrites the rows below"
# a row some case comes back as: no gap (`where` finds the rule by its produces= trait)
OWN_NAME = "written under its own name"
NONCONTIGUOUS = frozenset({"Tensor.transpose", "Tensor.permute"})  # what makes a case's input non-contiguous
LONG = 120  # a longer list of the kinds of cases is summed up as one set
_IO = frozenset({"pnnx.Input", "pnnx.Output", "pnnx.Attribute"})


@dataclass
class Outcome:
    case: str
    converted: bool = False
    written: tuple[str, ...] = ()   # the operators the door wrote for the row (scaffolding removed)
    nodes: tuple[str, ...] = ()     # the op types of torch.onnx's file
    exporter: str = ""              # why torch.onnx gave no usable file
    bug: str = ""                   # our conversion failed on a usable file, or computes otherwise


@dataclass
class Finding:
    op: str
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def kinds(self) -> list[tuple[str, ...]]:
        """The distinct sets of operators the door wrote, one per converted case."""
        return sorted({o.written for o in self.outcomes if o.converted})

    @property
    def bugs(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.bug]

    @property
    def rules(self) -> tuple[str, ...]:
        """The ONNX rules writing the spelling: of the nodes of the cases that came back as it
        alone, those whose produces= trait names it; else (a node our fusions made, such as
        pnnx:LogSigmoid from Log(Sigmoid)) every rule that names it."""
        from pnnx_reference.frontends.onnx import RULES

        def writes(rule) -> bool:
            return rule is not None and self.spelled in rule.traits.get("produces", ())

        nodes = {n for o in self.outcomes if o.converted and o.written == (self.spelled,) for n in o.nodes}
        keys = {n for n in nodes if writes(RULES.lookup(n))} or {r.key for r in RULES.rules() if writes(r)}
        return tuple(sorted(keys))

    @property
    def spelled(self) -> str | None:
        """The row's own operator under another name (nn.AvgPool2d -> F.avg_pool2d, torch.relu ->
        F.relu), when the door writes it alone for a case (other cases may take other rules:
        MaxPool2d's return_indices=True)."""
        alone = {kind[0] for kind in self.kinds if len(kind) == 1 and same_operator(self.op, kind[0])}
        return alone.pop() if len(alone) == 1 else None

    def verdict(self) -> str:
        """spelled F.x | written as A + B or C | no usable export: why; then "; BUG case: why" per bug."""
        bugs = "".join(f"; BUG {o.case}: {o.bug}" for o in self.bugs)
        if any(self.op in kind for kind in self.kinds) and not bugs:
            return OWN_NAME
        if self.spelled and not bugs:
            return f"spelled {self.spelled} by {', '.join(self.rules) or '(no rule names it)'}"
        if self.kinds:
            return f"written as {self._written()}{bugs}"
        reasons = sorted({_short(o.exporter) for o in self.outcomes if o.exporter})
        return (f"no usable export: {reasons[0]}" if reasons else "nothing converts") + bugs


    def _written(self) -> str:
        """A + B (every case); A or B + C (kinds of cases); past LONG: the operators of all cases."""
        text = " or ".join(" + ".join(kind) or "nothing" for kind in self.kinds)
        if len(text) <= LONG:
            return text
        return "some of " + ", ".join(sorted({op for kind in self.kinds for op in kind}))


def same_operator(op: str, other: str) -> bool:
    """Spellings of one operator: the same name once namespace, case and underscores are dropped."""
    def base(name: str) -> str:
        return name.split(".", 1)[1].replace("_", "").lower()
    return op != other and base(op) == base(other)


def gap_rows() -> list[tuple[str, str]]:
    """(operator pattern, reason) of the ONNX door's gaps that a measurement decides."""
    rows = [line.split("\t") for line in GAPS.read_text().splitlines() if _measured_row(line) and line != MARK]
    return [(pattern, reason) for pattern, _, reason in rows]


def measure_case(case, workdir: Path) -> Outcome:
    import onnx
    import torch

    from pnnx_conformance.backends.pnnx_python import load_generated_model
    from pnnx_conformance.compare import compare
    from pnnx_conformance.converters import reference_onnx
    from pnnx_conformance.errors import NotSupported
    from pnnx_conformance.oracle import to_numpy
    from pnnx_op_cases.case import TAG_RANDOM
    from pnnx_reference import api
    from pnnx_reference.errors import PnnxError
    from pnnx_reference.tolerances import tolerance_for

    model, inputs = case.make_model(), case.make_inputs()
    path = workdir / "case.onnx"
    try:
        reference_onnx.export_torch(model, inputs, path, dynamo=False)
    except Exception as e:
        return Outcome(case.id, exporter=f"torch.onnx.export: {_line(e)}")
    try:
        reference_onnx._check_inputs_kept(path, len(inputs))
    except NotSupported as e:
        return Outcome(case.id, exporter=str(e).removeprefix("unsupported: "))
    unfaithful = reference_onnx.unfaithful_export(case, model, inputs, path)
    if unfaithful:
        return Outcome(case.id, exporter=f"torch.onnx.export wrote {unfaithful}")
    try:
        result = api.export_onnx(str(path), workdir, "case", inputs=[x.clone() for x in inputs], fp16=False)
    except PnnxError as e:
        unusable = reference_onnx.unusable_export(path, inputs)
        if unusable:
            return Outcome(case.id, exporter=f"torch.onnx.export wrote {unusable}")
        return Outcome(case.id, bug="conversion fails: " + _line(e).replace(str(path), "case.onnx"))
    written = _types(result.graph)
    python = _types(api.capture(case.make_model(), case.make_inputs()))
    if case.op in python:  # the rest is the case's scaffolding (a row the Python door renames keeps it)
        written -= python - {case.op}
    if "noncontiguous" in case.tags and not _transposes(case.op):  # x.t() there, a Transpose here
        written -= NONCONTIGUOUS
    nodes = tuple(sorted({n.op_type for n in onnx.load(str(path), load_external_data=False).graph.node}))
    outcome = Outcome(case.id, converted=True, written=tuple(sorted(written)), nodes=nodes)
    if TAG_RANDOM not in case.tags:
        with torch.no_grad():
            got = to_numpy(load_generated_model(result.paths["pnnxpy"])(*[x.clone() for x in inputs]))
            expected = to_numpy(model(*[x.clone() for x in inputs]))
        verdict = compare(got, expected, tolerance_for(case, "pnnx-python", "fp32"))
        if not verdict.ok:
            outcome.bug = f"_pnnx.py computes otherwise: {verdict.message}"
    return outcome


def _transposes(op: str) -> bool:
    return op.endswith(".t") or any(same_operator(op, n) or op == n for n in NONCONTIGUOUS)


def _short(message: str) -> str:
    """An exporter's message without torch's boilerplate and the graph it dumps."""
    for tail in (" Please feel free", "  [Caused by"):
        message = message.split(tail)[0]
    return message


def _types(graph) -> set[str]:
    return {op.type for op in graph.ops} - _IO


def _line(error: Exception) -> str:
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    return (lines[0] if lines else type(error).__name__)[:200]


def measure(op: str, tier: str = "full") -> Finding:
    from pnnx_op_cases import registry

    finding = Finding(op)
    for case in registry.select(op=op, tier=tier):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                finding.outcomes.append(measure_case(case, Path(tmp)))
            except Exception as e:  # a crash of the measurement itself is a finding too
                finding.outcomes.append(Outcome(case.id, bug=f"{type(e).__name__}: {_line(e)}"))
    return finding


def expected(op: str) -> str:
    """The verdict where_gaps.tsv and ONNX_SPELLINGS hold for `op`."""
    from pnnx_op_cases import where

    if op in where.ONNX_SPELLINGS:
        spelling, *rules = where.ONNX_SPELLINGS[op]
        return f"spelled {spelling} by {', '.join(rules)}"
    hand = [ln.split("\t") for ln in GAPS.read_text().splitlines() if ln.count("\t") == 2 and not ln.startswith("#")]
    for pattern, reason in gap_rows() + [(row[0], row[2]) for row in hand if row[1] == DOOR]:
        if fnmatch.fnmatchcase(op, pattern):
            return reason
    return OWN_NAME  # neither listed nor spelled: `where` shows a place (test_op_cases_where.py)


def ops_to_measure(patterns: list[str], every: bool = False) -> list[str]:
    from pnnx_op_cases import tables, where

    listed = [pattern for pattern, _ in gap_rows()]
    rows = [r.op for r in tables.all_rows() if not r.op.startswith("onnx.")]
    ops = [op for op in rows if every or op in where.ONNX_SPELLINGS
           or any(fnmatch.fnmatchcase(op, p) for p in listed)]
    return [op for op in ops if not patterns or any(fnmatch.fnmatchcase(op, p) for p in patterns)]


def gap_lines(findings: list[Finding]) -> list[str]:
    """The ONNX door's measured rows of where_gaps.tsv: one per row not spelled, rows of one
    pattern (nn.ConstantPad?d) merged where every row it matches measured the same."""
    from pnnx_op_cases import tables

    reasons = {f.op: f.verdict() for f in findings if not f.verdict().startswith(("spelled ", OWN_NAME))}
    rows = [r.op for r in tables.all_rows()]
    lines, done = [], set()
    for op in [r for r in rows if r in reasons]:
        if op in done:
            continue
        pattern = re.sub(r"\d", "?", op)
        matched = [r for r in rows if fnmatch.fnmatchcase(r, pattern)]
        if len(matched) < 2 or any(reasons.get(r) != reasons[op] for r in matched):
            pattern, matched = op, [op]
        done.update(matched)
        lines.append(f"{pattern}\t{DOOR}\t{reasons[op]}")
    return lines


def write_data(findings: list[Finding]) -> None:
    """Rewrite the measured rows of where_gaps.tsv and the ONNX_SPELLINGS table of where.py."""
    from pnnx_op_cases import where

    kept = [ln for ln in GAPS.read_text().splitlines() if not _measured_row(ln)]
    GAPS.write_text("\n".join(kept + [MARK] + gap_lines(findings)) + "\n")
    spelled = [f for f in findings if f.verdict().startswith("spelled ")]
    entries = [f'"{f.op}": {(f.spelled, *f.rules)!r},'.replace("'", '"') for f in spelled]
    body, line = [], "   "
    for entry in entries:
        if len(line) + len(entry) > 110:
            body.append(line)
            line = "   "
        line += " " + entry
    body.append(line)
    source = Path(where.__file__)
    text = re.sub(r"(^ONNX_SPELLINGS: dict\[.*?\] = \{\n).*?(^\})", lambda m: m[1] + "\n".join(body) + "\n" + m[2],
                  source.read_text(), flags=re.S | re.M)
    source.write_text(text)


def _measured_row(line: str) -> bool:
    parts = line.split("\t")
    return line == MARK or (len(parts) == 3 and parts[1] == DOOR and not parts[2].startswith(NOT_MEASURED))


def _quiet():
    """torch.onnx and onnxruntime print to the file descriptors; the findings go to a copy of stdout."""
    out = os.fdopen(os.dup(1), "w")
    sys.stderr = os.fdopen(os.dup(2), "w")  # our own errors still show
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    return out


def _replay(path: Path) -> dict[str, Finding]:
    data = json.loads(path.read_text())
    return {op: Finding(op, [Outcome(**{**case, "written": tuple(case["written"]), "nodes": tuple(case["nodes"])}) for case in entry["cases"]])
            for op, entry in data.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--op", nargs="*", default=[], help="fnmatch patterns of rows (default: every listed row)")
    parser.add_argument("--tier", choices=("smoke", "full"), default="full")
    parser.add_argument("--check", action="store_true", help="exit 1 where the data says otherwise")
    parser.add_argument("--write", action="store_true",
                        help="rewrite the data from the measurement (every row: no --op)")
    parser.add_argument("--all", action="store_true", help="every row of the tables, also those `where` shows an "
                        "ONNX place for (with --check: those not coming back under their own name)")
    parser.add_argument("--json", type=Path, help="write the per-case outcomes there")
    parser.add_argument("--replay", type=Path, help="take the outcomes from an earlier --json instead of measuring")
    args = parser.parse_args(argv)
    if args.write and (args.op or args.all):
        parser.error("--write re-derives every listed row: give no --op nor --all")
    findings, differ = [], 0
    out = _quiet()
    replayed = _replay(args.replay) if args.replay else {}
    for op in ops_to_measure(args.op, args.all):
        finding = replayed[op] if args.replay else measure(op, args.tier)
        findings.append(finding)
        verdict, listed = finding.verdict(), expected(op)
        mark = "" if verdict == listed or not args.check else f"   (listed: {listed})"
        differ += bool(mark)
        print(f"{op}\t{verdict}{mark}", file=out, flush=True)
    if args.json:
        args.json.write_text(json.dumps({f.op: {"verdict": f.verdict(), "cases": [o.__dict__ for o in f.outcomes]}
                                         for f in findings}, indent=1))
    if args.write:
        write_data(findings)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
