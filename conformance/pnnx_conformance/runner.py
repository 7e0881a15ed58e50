"""A conformance run: select cases, plan units, run them isolated, apply waivers, check the
floor, write results.jsonl, junit.xml, environment.json, summary.json and run.json."""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from . import backends as backend_registry
from . import converters as converter_registry
from .cases import DEFAULT_PROVIDER, all_cases, provider, select_cases, use_provider
from .environment import environment
from .errors import HarnessError
from .junit import write_junit
from .pool import Stream, run_streams
from .progress import Progress
from .results import Result, check_totals, write_results
from .runinfo import run_info, write_run_info
from .shards import costly_first, shard_of
from .tiers import TIERS, case_limit, executed_cases, floor_for
from .units import plan
from .waivers import DEFAULT_FILE, apply_waivers, load_waivers
from .worker import WorkerConfig

RESULTS = "results.jsonl"
JUNIT = "junit.xml"
ENVIRONMENT = "environment.json"
SUMMARY = "summary.json"
ERRORS = {"xpass", "harness-error"}
FAILURES = {"fail-numeric", "fail-format", "fail-convert", "fail-runtime", "crash", "timeout", "oom"}


@dataclass
class RunOptions:
    out: Path
    tier: str = "smoke"
    ops: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    pattern: str | None = None
    ids: list[str] = field(default_factory=list)   # exactly these case ids (verify-certificate --rerun)
    backends: list[str] = field(default_factory=lambda: list(backend_registry.DEFAULT))
    converters: list[str] = field(default_factory=lambda: list(converter_registry.DEFAULT))
    shard: tuple[int, int] = (1, 1)
    costs: Path | None = None      # the case costs shards are balanced by (None: shards.COSTS_FILE)
    jobs: int = 2
    timeout_s: float = 120.0
    memory_mb: int = 12288
    cases_provider: str | None = None
    waivers: Path | None = None
    keep_artefacts: bool = False
    progress: bool = True
    max_cases: int | None = None   # None: the tier's default (tiers.MAX_CASES) unless filtered

    @property
    def filtered(self) -> bool:
        return bool(self.ops or self.tables or self.pattern or self.ids)

    @property
    def limit(self) -> int:
        return case_limit(self.tier, self.max_cases, self.filtered)


@dataclass
class RunSummary:
    results: list[Result]
    errors: list[str]
    wall_s: float
    cases: int

    @property
    def counts(self) -> Counter:
        return Counter(r.status for r in self.results)


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise HarnessError(f"--shard must be K/N, got {text!r}") from None
    if not 1 <= k <= n:
        raise HarnessError(f"--shard {text}: need 1 <= K <= N")
    return k, n


def _fill(result: Result, cases: dict) -> Result:
    case = cases.get(result.case)
    if case is not None and not result.op:
        result.op, result.table = case.op, case.table
    return result


def run(opts: RunOptions, before: list[Stream] = ()) -> RunSummary:
    """`before`: other streams of units (the model zoo's) that share this run's `jobs` worker
    slots and are handed out first."""
    began = time.monotonic()
    if opts.tier not in TIERS:
        raise HarnessError(f"unknown tier {opts.tier!r} (known: {', '.join(TIERS)})")
    use_provider(opts.cases_provider)
    backends = {spec: backend_registry.load_backend(spec) for spec in opts.backends}
    named = backend_names(backends)
    converters = {name: converter_registry.load_converter(name) for name in opts.converters}
    # the committed waivers are about the default case set; a run of other cases names its own
    default_waivers = DEFAULT_FILE.is_file() and provider() == DEFAULT_PROVIDER
    waivers = load_waivers(opts.waivers or DEFAULT_FILE, [c.id for c in all_cases()]) \
        if (opts.waivers or default_waivers) else []
    selected = select_cases(opts.tier, opts.ops, opts.tables, opts.pattern, opts.limit, ids=opts.ids)
    cases, planned = shard_of(selected, opts.shard, list(converters), opts.costs) if opts.shard[1] > 1 \
        else (selected, {})
    reexport = {n for n, c in converters.items() if c.in_process or opts.tier == "full"}
    units = plan(costly_first(cases, list(converters), opts.costs), list(converters), backends, reexport)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    workroot = out / "artefacts" if opts.keep_artefacts else Path(tempfile.mkdtemp(prefix="pnnx-conformance-"))
    config = WorkerConfig(str(workroot), opts.tier, opts.cases_provider, opts.timeout_s, opts.memory_mb)
    by_id = {c.id: c for c in cases}
    results: list[Result] = []
    progress = Progress(len(units), enabled=opts.progress)
    start = time.monotonic()

    def collect(result: Result) -> None:
        result.backend = named.get(result.backend, result.backend)   # a backend is known by its name
        results.append(_fill(result, by_id))
        progress.update(result)

    repro_error = None
    try:
        run_streams([*before, Stream(units, config, collect)], opts.jobs)
        wall = time.monotonic() - start
        apply_waivers(results, waivers)
        try:
            _repro_bundles(out, results, by_id, workroot, {named[s]: b for s, b in backends.items()})
        except OSError as e:  # a full disk must not lose the run's results, which are written next
            repro_error = f"repro bundles not written under {out / 'repro'}: {e.strerror or e}"
    finally:
        progress.close()
        if not opts.keep_artefacts:
            shutil.rmtree(workroot, ignore_errors=True)
    errors = _run_errors(results, opts, len(cases)) + ([repro_error] if repro_error else [])
    summary = RunSummary(results, errors, wall, len(cases))
    _write(out, summary, opts, {named[s]: b for s, b in backends.items()}, converters)
    write_run_info(out, run_info("conformance", opts.tier, list(converters), summary.cases, opts.jobs,
                                 time.monotonic() - began, shard="/".join(map(str, opts.shard)),
                                 worker_s=round(sum(r.time_s for r in results), 1), **planned))
    return summary


def backend_names(backends: dict) -> dict[str, str]:
    """Each backend as the command line named it (an entry point, module:Class) -> its `name`,
    which results carry; two backends of one name cannot share a run."""
    named = {spec: b.name for spec, b in backends.items()}
    twice = sorted({n for n in named.values() if list(named.values()).count(n) > 1})
    if twice:
        raise HarnessError(f"backends {', '.join(s for s, n in named.items() if n == twice[0])} are all named "
                           f"{twice[0]!r}: a run tells backends apart by their name")
    return named


def _repro_bundles(out: Path, results, cases, workroot: Path, backends) -> None:
    """A repro bundle per failure, built before the scratch artefacts are removed."""
    from .report.repro import write_bundles

    env = environment({k: b.describe() for k, b in backends.items()}, {})
    write_bundles(out, results, cases, workroot=workroot, backends=backends, environment=env)


def _run_errors(results, opts: RunOptions, n_cases: int) -> list[str]:
    errors = []
    floor = floor_for(opts.tier, opts.shard[1], opts.filtered, opts.limit)
    executed = len(executed_cases(results))
    if executed < floor:
        errors.append(f"only {executed} of {n_cases} cases executed; the {opts.tier} tier's floor is {floor}")
    counts = Counter(r.status for r in results)
    for status in sorted(ERRORS):
        if counts[status]:
            errors.append(f"{counts[status]} result(s) with status {status}")
    return errors


def _write(out: Path, summary: RunSummary, opts: RunOptions, backends, converters) -> None:
    write_results(out / RESULTS, summary.results)
    write_junit(out / JUNIT, summary.results)
    env = environment({k: b.describe() for k, b in backends.items()},
                      {k: c.describe() for k, c in converters.items()})
    (out / ENVIRONMENT).write_text(json.dumps(env, indent=1, sort_keys=True))
    data = {"tier": opts.tier, "shard": list(opts.shard), "cases": summary.cases, "case_limit": opts.limit,
            "records": len(summary.results), "wall_s": round(summary.wall_s, 2),
            "statuses": dict(sorted(summary.counts.items())), "errors": summary.errors,
            "case_provider": provider(), "by_check": check_totals(summary.results)}
    (out / SUMMARY).write_text(json.dumps(data, indent=1, sort_keys=True, default=dict))
