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
            cases_provider: str | None = None, progress: bool = False) -> tuple[dict, Path, Path]:
    from ..runner import RunOptions, run

    out = Path(out)
    opts = RunOptions(out=out / "run", tier=tier, ops=list(ops or []), backends=[backend],
                      converters=[CONVERTER], jobs=jobs, waivers=waivers, max_cases=max_cases,
                      cases_provider=cases_provider, progress=progress)
    summary = run(opts)
    if summary.errors:
        raise HarnessError(f"certification run failed: {'; '.join(summary.errors)}")
    selection = {"tier": tier, "ops": sorted(ops or []), "max_cases": max_cases, "cases_provider": cases_provider}
    cert = make_certificate(backend, summary.results, tier=tier, case_hash=case_set_hash(selected_cases(selection)),
                            environment=environment_fingerprint({backend: _describe(backend)}),
                            selection=selection)
    js, page = write_certificate(cert, out)
    return cert, js, page


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
