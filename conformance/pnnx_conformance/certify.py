"""`certify`, `verify-certificate` and `keygen`: run one backend on the certification tier
through the reference converter and issue a (signed) certificate; check one against its
signature, its own per-case results and today's cases, and audit it by re-running a random
sample of its cases with the certified backend (as MLPerf's compliance tests re-check a
submission).

Verifying never imports or runs what the certificate names: the case provider and the
backend it names are used only when the user names the same ones on the command line
(`--cases`, `--backend`), and only after the signature verified against a trusted key."""
from __future__ import annotations

import json
import os
import random
import re
import secrets
import tempfile
from importlib import metadata
from pathlib import Path

from .errors import HarnessError
from .report import certificate_html, certificate_schema
from .report.certificate import (FORMAT_VERSION, case_set_hash, case_set_problems, content_problems, environment_fingerprint,
                          load_private_key, load_public_key_fingerprint, make_certificate, new_key_pem,
                          precision_modes, signer, trust_problems)

CONVERTER = "reference"
PASSWORD_ENV = "PNNX_CERT_KEY_PASSWORD"   # the passphrase of an encrypted --key, if any
SUITE = "pnnx-conformance"  # the distribution of the suite (pyproject.toml)


def selected_cases(selection: dict) -> list:
    """The case set a certificate covers, re-selected from its selection. The caller has
    checked that the case provider, if any, is one the user named."""
    from .cases import select_cases, use_provider
    from .tiers import case_limit

    use_provider(selection.get("cases_provider"))
    try:
        if "converter" not in selection:   # format 1: a smoke run's budget subset unless filtered
            ops = selection.get("ops") or []
            return select_cases(selection["tier"], ops, None, None,
                                case_limit(selection["tier"], selection.get("max_cases"), bool(ops)))
        return select_cases(selection["tier"], selection["ops"], selection["tables"], selection["pattern"],
                            selection["max_cases"] or 0)
    except HarnessError:
        raise
    except Exception as e:  # a provider that fails or returns something else than cases
        raise HarnessError(f"the case provider {selection.get('cases_provider') or 'of the suite'} failed: "
                           f"{type(e).__name__}: {e}") from None


def load_key(path: Path | None):
    if path is None:
        return None
    password = os.environ.get(PASSWORD_ENV)
    try:
        return load_private_key(Path(path), password.encode() if password else None)
    except ValueError as e:
        raise HarnessError(f"--key {e}") from None


def certify(backend: str, out: Path, *, tier: str = "smoke", ops: list[str] | None = None,
            tables: list[str] | None = None, pattern: str | None = None,
            waivers: Path | None = None, max_cases: int | None = None, jobs: int = 2,
            cases_provider: str | None = None, progress: bool = False,
            key: Path | None = None, results: Path | None = None) -> tuple[dict, Path, Path]:
    """Run the selection (default: every case of the tier) and certify it, or with `results`
    certify an earlier run's records (merged shards, say) of that selection instead of running
    it again; signed with the Ed25519 key at `key` when given."""
    from .backends import load_backend

    private_key = load_key(key)  # a bad key fails before the long run, not after
    instance = load_backend(backend)
    identity = backend_identity(instance)
    compute = compute_types(instance)
    out = Path(out)
    selection = {"tier": tier, "converter": CONVERTER, "ops": sorted(ops or []), "tables": sorted(tables or []),
                 "pattern": pattern, "max_cases": max_cases or None, "cases_provider": cases_provider}
    cases = selected_cases(selection)
    if not cases:
        raise HarnessError("the selection holds no case: nothing to certify")
    selection.update(case_count=len(cases), case_set_hash=case_set_hash(cases))
    if results is None:
        records, env = _run(backend, out, selection, waivers, jobs, progress), None
    elif waivers is not None:
        raise HarnessError("certify --results takes the waivers its run applied; --waivers is for a new run")
    else:
        records, env = recorded(Path(results), {backend, instance.name}, tier, cases), _recorded_environment(Path(results))
    cert = make_certificate(records, backend=identity, precisions=precision_modes(instance.precisions, compute),
                            selection=selection, suite=suite_identity(),
                            environment=env or environment_fingerprint({instance.name: identity["described"]}),
                            key=private_key)
    problems = content_problems(cert)   # e.g. a case the run left without a record in some mode
    if problems:
        raise HarnessError(f"the records do not make a certificate that verifies: {'; '.join(problems)}")
    js, page = write_certificate(cert, out)
    return cert, js, page


def suite_identity() -> dict:
    from .environment import suite_commit

    return {"name": SUITE, "version": _version(SUITE) or "not installed", "commit": suite_commit()}


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


def distribution_of(module: str) -> dict | None:
    """The installed distribution that provides `module`'s top-level package, with its version
    (None: the module is not part of an installed distribution, e.g. on PYTHONPATH)."""
    top = module.split(".")[0]
    for dist in metadata.packages_distributions().get(top, []):
        if _version(dist):
            return {"distribution": dist, "version": _version(dist)}
    return None


def backend_identity(instance) -> dict:
    """What identifies the certified backend: its `name`, the plug-in's distribution (of the
    backend class's module) and the runtime's (`Backend.runtime`), read from the installed
    distributions, its device and what its describe() says."""
    try:
        described = instance.describe()
    except Exception as e:  # the plug-in's own bug: one line, before the long run
        raise HarnessError(f"backend {instance.name!r}: describe() failed: {type(e).__name__}: {e}") from None
    if not isinstance(described, dict):
        raise HarnessError(f"backend {instance.name!r}: describe() must return a dict, not {type(described).__name__}")
    runtime = None
    if instance.runtime:
        if not _version(instance.runtime):
            raise HarnessError(f"backend {instance.name!r} wraps the runtime distribution {instance.runtime!r}, "
                               "which is not installed")
        runtime = {"distribution": instance.runtime, "version": _version(instance.runtime)}
    try:
        described = json.loads(json.dumps(described))
    except (TypeError, ValueError) as e:
        raise HarnessError(f"backend {instance.name!r}: describe() must return JSON data ({e})") from None
    return {"name": instance.name, "plugin": distribution_of(type(instance).__module__), "runtime": runtime,
            "device": str(described.get("device") or instance.device or ""), "described": described}


def compute_types(instance) -> dict:
    """What each precision mode computes in, as the backend reports it."""
    try:
        compute = {m: instance.compute_type(m) for m in instance.precisions}
    except Exception as e:
        raise HarnessError(f"backend {instance.name!r}: compute_type() failed: {type(e).__name__}: {e}") from None
    odd = {m: c for m, c in compute.items() if c not in ("fp32", "fp16", "bf16")}
    if odd:
        raise HarnessError(f"backend {instance.name!r}: compute_type() must say fp32, fp16 or bf16, not {odd}")
    return compute


def _run(backend, out, selection, waivers, jobs, progress) -> list:
    from .runner import RunOptions, run

    opts = RunOptions(out=out / "run", tier=selection["tier"], ops=selection["ops"], tables=selection["tables"],
                      pattern=selection["pattern"], backends=[backend], converters=[CONVERTER], jobs=jobs,
                      waivers=waivers, max_cases=selection["max_cases"] or 0,
                      cases_provider=selection["cases_provider"], progress=progress)
    summary = run(opts)
    if summary.errors:
        raise HarnessError(f"certification run failed: {'; '.join(summary.errors)}")
    return [r for r in summary.results if r.check == "parity" and r.converter == CONVERTER]   # the one backend


def recorded(results: Path, names: set, tier: str, cases: list) -> list:
    """The backend's parity records through the reference converter in `results` (the backend
    recorded under any of `names`), which must be of `tier` and hold every case of the selection."""
    from .report.committed import load_any

    if not results.exists():
        raise HarnessError(f"{results}: no such results folder or file")
    mine = [r for r in load_any(results) if r.converter == CONVERTER and r.check == "parity"
            and r.backend in names and r.case in {c.id for c in cases}]
    tiers = {r.tier for r in mine}
    if tiers - {tier}:
        raise HarnessError(f"{results}: records of the {', '.join(sorted(tiers))} tier, not {tier}")
    missing = sorted({c.id for c in cases} - {r.case for r in mine})
    if missing:
        raise HarnessError(f"{results}: no {'/'.join(sorted(names))} parity record for {len(missing)} of the "
                           f"{len(cases)} selected case(s), e.g. {', '.join(missing[:3])}")
    return mine


def _recorded_environment(results: Path) -> dict | None:
    """The environment the results were made in (environment.json beside them), not this machine's."""
    path = (results if results.is_dir() else results.parent) / "environment.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except ValueError as e:
        raise HarnessError(f"{path}: unreadable ({e})") from None


def read_certificate(path: Path) -> dict:
    """The certificate at `path`, read with limits and checked against its schema; any
    refusal is one line naming the file."""
    try:
        return certificate_schema.read(Path(path))
    except ValueError as e:
        raise HarnessError(f"{path}: {e}") from None


def trusted_fingerprints(fingerprints=(), pubkeys=()) -> list[str]:
    """The signers a verifier pins: fingerprints as given, plus those of PEM key files."""
    found = list(fingerprints)
    for path in pubkeys:
        try:
            found.append(load_public_key_fingerprint(Path(path)))
        except ValueError as e:
            raise HarnessError(f"--pubkey {e}") from None
    return found


def _selection(cert: dict) -> dict:
    return cert["selection"]


def provider_problem(cert: dict, cases: str | None) -> str | None:
    """Why the certificate's case provider may not be used: it is used only when the user
    names the same one (`--cases`), never taken from the file."""
    named = _selection(cert)["cases_provider"]
    if named == cases:
        return None
    if named is None:
        return f"the certificate covers the suite's own cases, not --cases {cases}"
    return (f"the certificate's cases come from the provider {named!r}, which is not imported unless you "
            f"name it: pass --cases {named} to check against it (or --no-case-check)")


def verify_file(path: Path, *, check_cases: bool = True, trusted=(), allow_unsigned: bool = False,
                cases: str | None = None) -> list[str]:
    """Problems with the certificate at `path` (empty: it verifies). Raises HarnessError when
    the file is not a readable certificate."""
    cert = read_certificate(path)
    trust = trust_problems(cert, trusted, allow_unsigned)
    problems = trust + content_problems(cert)
    if check_cases and not trust:   # nothing is selected for a certificate not (yet) trusted
        refused = provider_problem(cert, cases)
        if refused:
            return problems + [refused]
        try:
            chosen = selected_cases(_selection(cert))
        except HarnessError as e:
            raise HarnessError(f"{path}: {e.message}") from None
        problems += case_set_problems(cert, case_set_hash(chosen), [c.id for c in chosen])
    return problems


# --- audit: re-run a random sample -----------------------------------------------------
def _consistent(certified: str, now: str) -> bool:
    """A waived failure (xfail) was some failure; the re-run applies no waivers."""
    from .runner import FAILURES

    if certified == "xfail":
        return now in FAILURES
    if certified == "xpass":
        return now == "pass"
    return certified == now


def version_problems(cert: dict, instance) -> list[str]:
    """The certified backend against the one installed now: the same `name`, plug-in and
    runtime distributions and versions."""
    signed, now = cert["backend"], backend_identity(instance)
    if now["name"] != signed["name"]:
        return [f"--backend is {now['name']!r}, the certificate certifies {signed['name']!r}"]
    problems = []
    for part, what in (("plugin", "plug-in"), ("runtime", "runtime")):
        if now[part] != signed[part]:
            problems.append(f"the installed {what} is {_said(now[part])}, the certificate's {_said(signed[part])}")
    return problems


def _said(dist) -> str:
    return "not an installed distribution" if dist is None else f"{dist['distribution']} {dist['version']}"


def rerun(path: Path, n: int, backend: str, *, seed: int | None = None, jobs: int = 2, progress: bool = False,
          cases: str | None = None) -> tuple[int, int, list[str]]:
    """Re-run `n` of the certificate's cases, drawn at random (`seed`; a fresh one when None),
    with `backend` (the user's, which must be the certified one in the same versions) through
    the reference converter. Returns (the seed, how many cases were re-run, the differences or
    why none was). The caller has verified the certificate's signature against a trusted key."""
    from .backends import load_backend
    from .runner import RunOptions, run

    cert = read_certificate(path)
    seed = secrets.randbelow(2 ** 32) if seed is None else seed
    if cert["format_version"] != FORMAT_VERSION:
        return seed, 0, [f"--rerun needs a format {FORMAT_VERSION} certificate (this is format {cert['format_version']})"]
    refused = provider_problem(cert, cases)
    if refused:
        return seed, 0, [refused]
    instance = load_backend(backend)
    changed = version_problems(cert, instance)
    if changed:
        return seed, 0, changed
    by_case: dict[str, list[dict]] = {}
    for r in cert["results"]:
        by_case.setdefault(r["case"], []).append(r)
    sample = random.Random(seed).sample(sorted(by_case), min(n, len(by_case)))
    if not sample:
        return seed, 0, ["the certificate has no results to re-run"]
    selection = _selection(cert)
    with tempfile.TemporaryDirectory(prefix="pnnx-rerun-") as scratch:
        no_waivers = Path(scratch) / "no-waivers.toml"
        no_waivers.write_text("")
        opts = RunOptions(out=Path(scratch) / "run", tier=selection["tier"], ids=sample,
                          backends=[backend], converters=[CONVERTER], jobs=jobs, waivers=no_waivers,
                          max_cases=0, cases_provider=cases, progress=progress)
        summary = run(opts)
    now = {(r.case, r.precision): r for r in summary.results
           if r.check == "parity" and r.backend == instance.name and r.converter == CONVERTER}
    problems = []
    for case in sample:
        for certified in by_case[case]:
            got = now.get((case, certified["precision"]))
            if got is None:
                problems.append(f"re-run of {case} ({certified['precision']}): no result "
                                "(the case or precision is gone)")
            elif not _consistent(certified["status"], got.status):
                problems.append(f"re-run of {case} ({certified['precision']}): certified "
                                f"{certified['status']}, now {got.status}" + (f" ({got.error})" if got.error else ""))
    return seed, len(sample), problems


def keygen(out: Path) -> tuple[Path, Path, str]:
    """Write a new Ed25519 private key (mode 0600) and its public key beside it."""
    out = Path(out)
    public_path = out.with_name(out.name[:-4] + ".pub.pem" if out.name.endswith(".pem") else out.name + ".pub.pem")
    for p in (out, public_path):
        if p.exists():
            raise HarnessError(f"{p}: exists; not overwriting a key")
    private, public, fp = new_key_pem()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(private)
        public_path.write_bytes(public)
    except OSError as e:
        raise HarnessError(f"{e.filename or out}: cannot write: {e.strerror or e}") from None
    return out, public_path, fp


__all__ = ["certify", "keygen", "rerun", "selected_cases", "signer", "trusted_fingerprints", "verify_file"]


def write_certificate(cert: dict, out_dir: Path) -> tuple[Path, Path]:
    """The certificate's JSON and HTML, both rendered before either is written, each written
    whole (a temporary file renamed): a failure leaves neither a partial nor a stale pair."""
    out_dir = Path(out_dir)
    stem = "certificate-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", cert["backend"]["name"])
    texts = {out_dir / f"{stem}.json": json.dumps(cert, indent=1, sort_keys=True) + "\n",
             out_dir / f"{stem}.html": certificate_html.certificate_html(cert)}
    out_dir.mkdir(parents=True, exist_ok=True)
    for path in texts:
        path.unlink(missing_ok=True)
    for path, text in texts.items():
        part = path.with_name(path.name + ".part")
        part.write_text(text)
        part.replace(path)
    js, page = texts
    return js, page
