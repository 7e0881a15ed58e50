"""`certify` and `verify-certificate`: run one backend on the certification tier through the
reference converter, issue a certificate; check one against its digest and today's cases."""
from __future__ import annotations

import json
from pathlib import Path

from ..errors import HarnessError
from .certificate import case_set_hash, environment_fingerprint, make_certificate, verify_certificate, \
    write_certificate

CONVERTER = "reference"


def selected_cases(selection: dict) -> list:
    """The case set a certificate covers, re-selected from its recorded selection."""
    from ..cases import select_cases, use_provider
    from ..tiers import case_limit

    use_provider(selection.get("cases_provider"))
    ops = selection.get("ops") or []
    limit = case_limit(selection["tier"], selection.get("max_cases"), bool(ops))
    return select_cases(selection["tier"], ops, None, None, limit)


def certify(backend: str, out: Path, *, tier: str = "smoke", ops: list[str] | None = None,
            waivers: Path | None = None, max_cases: int | None = None, jobs: int = 2,
            cases_provider: str | None = None, progress: bool = False,
            results: Path | None = None) -> tuple[dict, Path, Path]:
    """Run the selection and certify it, or with `results` certify an earlier run's records
    (merged shards, say) of that selection instead of running it again."""
    out = Path(out)
    selection = {"tier": tier, "ops": sorted(ops or []), "max_cases": max_cases, "cases_provider": cases_provider}
    cases = selected_cases(selection)
    if results is None:
        records, env = _run(backend, out, tier, ops, waivers, max_cases, jobs, cases_provider, progress), None
    elif waivers is not None:
        raise HarnessError("certify --results takes the waivers its run applied; --waivers is for a new run")
    else:
        records, env = recorded(Path(results), backend, tier, cases), _recorded_environment(Path(results))
    cert = make_certificate(backend, records, tier=tier, case_hash=case_set_hash(cases),
                            environment=env or environment_fingerprint({backend: _describe(backend)}),
                            selection=selection)
    js, page = write_certificate(cert, out)
    return cert, js, page


def _run(backend, out, tier, ops, waivers, max_cases, jobs, cases_provider, progress) -> list:
    from ..runner import RunOptions, run

    opts = RunOptions(out=out / "run", tier=tier, ops=list(ops or []), backends=[backend],
                      converters=[CONVERTER], jobs=jobs, waivers=waivers, max_cases=max_cases,
                      cases_provider=cases_provider, progress=progress)
    summary = run(opts)
    if summary.errors:
        raise HarnessError(f"certification run failed: {'; '.join(summary.errors)}")
    return summary.results


def recorded(results: Path, backend: str, tier: str, cases: list) -> list:
    """The backend's parity records through the reference converter in `results`, which must
    be of `tier` and hold every case of the selection."""
    from .committed import load_any

    if not results.exists():
        raise HarnessError(f"{results}: no such results folder or file")
    mine = [r for r in load_any(results) if r.converter == CONVERTER and r.check == "parity"
            and r.backend == backend and r.case in {c.id for c in cases}]
    tiers = {r.tier for r in mine}
    if tiers - {tier}:
        raise HarnessError(f"{results}: records of the {', '.join(sorted(tiers))} tier, not {tier}")
    missing = sorted({c.id for c in cases} - {r.case for r in mine})
    if missing:
        raise HarnessError(f"{results}: no {backend} parity record for {len(missing)} of the {len(cases)} "
                           f"selected case(s), e.g. {', '.join(missing[:3])}")
    return mine


def _recorded_environment(results: Path) -> dict | None:
    """The environment the results were made in (environment.json beside them), not this machine's."""
    path = (results if results.is_dir() else results.parent) / "environment.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except ValueError as e:
        raise HarnessError(f"{path}: unreadable ({e})") from None


def _describe(backend: str):
    from ..backends import load_backend

    return load_backend(backend).describe()


def verify_file(path: Path, *, check_cases: bool = True) -> list[str]:
    """Problems with the certificate at `path` (empty: it verifies)."""
    try:
        cert = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise HarnessError(f"{path}: not a readable certificate: {e}") from None
    if not isinstance(cert, dict) or "digest" not in cert:
        raise HarnessError(f"{path}: not a certificate (no digest)")
    current = None
    if check_cases:
        selection = cert.get("selection") or {"tier": cert.get("tier", "smoke")}
        current = case_set_hash(selected_cases(selection))
    return verify_certificate(cert, current)
