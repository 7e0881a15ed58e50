"""`certify`, `verify-certificate` and `keygen`: run one backend on the certification tier
through the reference converter and issue a (signed) certificate; check one against its
signature, its own per-case results and today's cases, and audit it by re-running a random
sample of its cases with the certified backend (as MLPerf's compliance tests re-check a
submission)."""
from __future__ import annotations

import json
import os
import random
import secrets
import tempfile
from pathlib import Path

from ..errors import HarnessError
from .certificate import (case_set_hash, environment_fingerprint, load_private_key, load_public_key_fingerprint,
                          make_certificate, new_key_pem, signer, verify_certificate, write_certificate)

CONVERTER = "reference"
PASSWORD_ENV = "PNNX_CERT_KEY_PASSWORD"   # the passphrase of an encrypted --key, if any


def selected_cases(selection: dict) -> list:
    """The case set a certificate covers, re-selected from its recorded selection."""
    from ..cases import select_cases, use_provider
    from ..tiers import case_limit

    use_provider(selection.get("cases_provider"))
    ops = selection.get("ops") or []
    limit = case_limit(selection["tier"], selection.get("max_cases"), bool(ops))
    return select_cases(selection["tier"], ops, None, None, limit)


def load_key(path: Path | None):
    if path is None:
        return None
    password = os.environ.get(PASSWORD_ENV)
    try:
        return load_private_key(Path(path), password.encode() if password else None)
    except ValueError as e:
        raise HarnessError(f"--key {e}") from None


def certify(backend: str, out: Path, *, tier: str = "smoke", ops: list[str] | None = None,
            waivers: Path | None = None, max_cases: int | None = None, jobs: int = 2,
            cases_provider: str | None = None, progress: bool = False,
            key: Path | None = None) -> tuple[dict, Path, Path]:
    """Run, then write the certificate (signed with the Ed25519 key at `key` when given)."""
    from ..runner import RunOptions, run

    private_key = load_key(key)  # a bad key fails before the long run, not after
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
                            selection=selection, key=private_key)
    js, page = write_certificate(cert, out)
    return cert, js, page


def _describe(backend: str):
    from ..backends import load_backend

    return load_backend(backend).describe()


def read_certificate(path: Path) -> dict:
    try:
        cert = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HarnessError(f"{path}: not a readable certificate: {e}") from None
    if not isinstance(cert, dict) or "digest" not in cert:
        raise HarnessError(f"{path}: not a certificate (no digest)")
    return cert


def trusted_fingerprints(fingerprints=(), pubkeys=()) -> list[str]:
    """The signers a verifier pins: fingerprints as given, plus those of PEM key files."""
    found = list(fingerprints)
    for path in pubkeys:
        try:
            found.append(load_public_key_fingerprint(Path(path)))
        except ValueError as e:
            raise HarnessError(f"--pubkey {e}") from None
    return found


def verify_file(path: Path, *, check_cases: bool = True, trusted=(), allow_unsigned: bool = False) -> list[str]:
    """Problems with the certificate at `path` (empty: it verifies)."""
    cert = read_certificate(path)
    current = ids = None
    if check_cases:
        cases = selected_cases(_selection(cert))
        current, ids = case_set_hash(cases), [c.id for c in cases]
    return verify_certificate(cert, current, case_ids=ids, trusted=list(trusted), allow_unsigned=allow_unsigned)


def _selection(cert: dict) -> dict:
    selection = cert.get("selection")
    if not isinstance(selection, dict) or selection.get("tier") not in ("smoke", "full"):
        return {"tier": cert.get("tier") if cert.get("tier") in ("smoke", "full") else "smoke"}
    return selection


# --- audit: re-run a random sample -----------------------------------------------------
def _consistent(certified: str, now: str) -> bool:
    """A waived failure (xfail) was some failure; the re-run applies no waivers."""
    from ..runner import FAILURES

    if certified == "xfail":
        return now in FAILURES
    if certified == "xpass":
        return now == "pass"
    return certified == now


def rerun(path: Path, n: int, *, seed: int | None = None, jobs: int = 2, progress: bool = False) -> tuple[int, list[str]]:
    """Re-run `n` of the certificate's cases, drawn at random (`seed`; a fresh one when None),
    with its backend through the reference converter. Returns (the seed, the differences)."""
    from ..runner import RunOptions, run

    cert = read_certificate(path)
    seed = secrets.randbelow(2 ** 32) if seed is None else seed
    selection = _selection(cert)
    by_case: dict[str, list[dict]] = {}
    for r in cert.get("results") or []:
        if isinstance(r, dict) and isinstance(r.get("case"), str):
            by_case.setdefault(r["case"], []).append(r)
    sample = random.Random(seed).sample(sorted(by_case), min(n, len(by_case)))
    if not sample:
        return seed, ["the certificate has no results to re-run"]
    with tempfile.TemporaryDirectory(prefix="pnnx-rerun-") as scratch:
        no_waivers = Path(scratch) / "no-waivers.toml"
        no_waivers.write_text("")
        opts = RunOptions(out=Path(scratch) / "run", tier=selection["tier"], ids=sample,
                          backends=[cert["backend"]], converters=[CONVERTER], jobs=jobs, waivers=no_waivers,
                          max_cases=0, cases_provider=selection.get("cases_provider"), progress=progress)
        summary = run(opts)
    now = {(r.case, r.converter, r.precision): r for r in summary.results
           if r.check == "parity" and r.backend == cert["backend"]}
    problems = []
    for case in sample:
        for certified in by_case[case]:
            got = now.get((case, certified.get("converter"), certified.get("precision")))
            if got is None:
                problems.append(f"re-run of {case} ({certified.get('precision')}): no result "
                                "(the case or precision is gone)")
            elif not _consistent(certified.get("status"), got.status):
                problems.append(f"re-run of {case} ({certified.get('precision')}): certified "
                                f"{certified.get('status')}, now {got.status}" + (f" ({got.error})" if got.error else ""))
    return seed, problems


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
