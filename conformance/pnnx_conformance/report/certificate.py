"""Vendor certificates: a signed record of one backend's results on a case set.

A certificate holds the environment fingerprint, the case-set hash, per-case results,
waivers (shown as waived, never as passed), pass rates per table, an Ed25519 signature by
the issuer's key (`certify --key`; the public key and its fingerprint are in the
certificate) and a sha256 digest, both over the canonical JSON of everything else.

`verify_certificate` checks the digest, the signature, that the signer is one the verifier
trusts (when given fingerprints to pin), the certificate's internal consistency (pass rates
and waivers recomputed from the per-case results, no duplicate results) and, given the
installed suite's case set, that its hash matches and every result names a case of it.

Trust model: the signature proves the certificate is unchanged since the holder of that
private key issued it. Anyone can make a key, so a verifier pins the issuers it trusts
(`--trust FINGERPRINT` / `--pubkey FILE.pem`); without pinning, verification says which key
signed and that it was not pinned. An unsigned certificate (format 1, or `certify` without a
key) verifies only with `allow_unsigned`: its digest proves nothing, since anyone who edits
it can recompute the digest.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
import platform
import re
from collections import defaultdict
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..environment import environment
from ..results import STATUSES, Result
from .summary import GOOD

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)   # 1: before signatures and per-result tables
SIGNATURE = "ed25519"


def case_set_hash(cases: Iterable) -> str:
    """sha256 over every case's id, source, inputs and tolerance hint, in id order."""
    h = hashlib.sha256()
    for case in sorted(cases, key=lambda c: c.id):
        record = {"id": case.id, "op": case.op, "source": case.source,
                  "inputs": [asdict(i) for i in case.inputs], "tags": sorted(case.tags),
                  "tolerance": asdict(case.tolerance) if case.tolerance else None}
        h.update(json.dumps(record, sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def vulkan_devices() -> list[str]:
    try:
        import ncnn

        return [ncnn.get_gpu_info(i).device_name() for i in range(ncnn.get_gpu_count())]
    except Exception as exc:  # no ncnn, or no Vulkan loader: record why
        return [f"unavailable: {exc}"]


def environment_fingerprint(backends: dict | None = None) -> dict:
    """The harness's environment record plus what a certificate adds: CPU model, Vulkan devices."""
    env = environment(backends or {}, {})
    env.update(machine=platform.machine(), cpu=_cpu_model(), vulkan_devices=vulkan_devices())
    return env


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def canonical(cert: dict) -> bytes:
    """What the digest and the signature cover: the certificate without its digest and
    without the signature value, as sorted compact JSON."""
    body = {k: v for k, v in cert.items() if k != "digest"}
    if isinstance(body.get("signature"), dict):
        body["signature"] = {k: v for k, v in body["signature"].items() if k != "value"}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def digest_of(cert: dict) -> str:
    return hashlib.sha256(canonical(cert)).hexdigest()


# --- keys and signatures ---------------------------------------------------------------
def fingerprint(public_raw: bytes) -> str:
    """`sha256:<hex>` of the raw 32-byte Ed25519 public key."""
    return "sha256:" + hashlib.sha256(public_raw).hexdigest()


def _raw_public(public_key) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def load_private_key(path: Path, password: bytes | None = None):
    """An Ed25519 private key from a PEM file (`pnnx-conformance keygen`, or
    `openssl genpkey -algorithm ed25519 -out key.pem`). Raises ValueError with the reason."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        key = serialization.load_pem_private_key(data, password=password)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a usable PEM private key ({e})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path}: an Ed25519 key is needed, this is {type(key).__name__}")
    return key


def load_public_key_fingerprint(path: Path) -> str:
    """The fingerprint of the Ed25519 public key in a PEM file (public or private)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise ValueError(f"{path}: cannot read: {e.strerror or e}") from None
    try:
        key = serialization.load_pem_public_key(data)
    except ValueError:
        try:
            key = serialization.load_pem_private_key(data, password=None).public_key()
        except (ValueError, TypeError) as e:
            raise ValueError(f"{path}: not a PEM Ed25519 key ({e})") from None
    if not isinstance(key, (Ed25519PublicKey, Ed25519PrivateKey)):
        raise ValueError(f"{path}: an Ed25519 key is needed, this is {type(key).__name__}")
    return fingerprint(_raw_public(key))


def new_key_pem() -> tuple[bytes, bytes, str]:
    """(private PEM, public PEM, fingerprint) of a fresh Ed25519 key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public, fingerprint(_raw_public(key.public_key()))


def sign_certificate(cert: dict, private_key) -> dict:
    """Sign `cert` in place with an Ed25519 private key; the digest is recomputed."""
    raw = _raw_public(private_key.public_key())
    cert["signature"] = {"algorithm": SIGNATURE, "public_key": base64.b64encode(raw).decode(),
                         "fingerprint": fingerprint(raw)}
    cert["signature"]["value"] = base64.b64encode(private_key.sign(canonical(cert))).decode()
    cert["digest"] = digest_of(cert)
    return cert


def signer(cert: dict) -> str | None:
    """The fingerprint of the key whose signature the certificate carries, if any."""
    sig = cert.get("signature")
    return sig.get("fingerprint") if isinstance(sig, dict) else None


def _signature_problems(cert: dict) -> list[str]:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    sig = cert["signature"]
    if not isinstance(sig, dict) or sig.get("algorithm") != SIGNATURE:
        return [f"unknown signature algorithm {sig.get('algorithm') if isinstance(sig, dict) else sig!r}"]
    try:
        raw = base64.b64decode(sig["public_key"], validate=True)
        value = base64.b64decode(sig["value"], validate=True)
        public = Ed25519PublicKey.from_public_bytes(raw)
    except (KeyError, TypeError, ValueError) as e:
        return [f"malformed signature ({type(e).__name__}: {e})"]
    problems = []
    if sig.get("fingerprint") != fingerprint(raw):
        problems.append("the signature's fingerprint is not that of its public key")
    try:
        public.verify(value, canonical(cert))
    except InvalidSignature:
        problems.append("bad signature: the certificate was changed after it was signed")
    return problems


def pass_rates(entries: Iterable[tuple[str, str]]) -> dict:
    """Per table: passed / waived / failed / total and the pass rate, from (table, status)."""
    per_table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for table, status in entries:
        bucket = "passed" if status in GOOD else "waived" if status == "xfail" else "failed"
        per_table[table][bucket] += 1
        per_table[table]["total"] += 1
    return {t: {**c, "pass_rate": round(c["passed"] / c["total"], 6)} for t, c in sorted(per_table.items())}


def _table_of(entry: dict) -> str:
    """A result's table (format 1 did not record it: the case id's operator prefix)."""
    return entry.get("table") or entry["case"].split("/")[0].split(".")[0]


def make_certificate(backend: str, results: list[Result], *, tier: str, case_hash: str,
                     environment: dict | None = None, selection: dict | None = None,
                     key=None) -> dict:
    """The certificate of `backend`'s parity results, signed with `key` (an Ed25519 private
    key) when given."""
    mine = [r for r in results if r.backend == backend and r.check == "parity"]
    if not mine:
        raise ValueError(f"no parity results for backend {backend!r}")
    rates = pass_rates((r.table, r.status) for r in mine)
    cert = {
        "format_version": FORMAT_VERSION,
        "backend": backend,
        "tier": tier,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "case_set_hash": case_hash,
        "selection": selection or {},
        "environment": environment if environment is not None else environment_fingerprint(),
        "pass_rates": rates,
        "waivers": sorted({(r.case, r.waiver) for r in mine if r.waiver}),
        "results": [{"case": r.case, "table": r.table, "converter": r.converter, "precision": r.precision,
                     "status": r.status, "waiver": r.waiver, "max_abs": r.metrics.max_abs if r.metrics else None}
                    for r in sorted(mine, key=lambda r: r.key)],
    }
    cert["waivers"] = [{"case": c, "reason": w} for c, w in cert["waivers"]]
    if key is not None:
        return sign_certificate(cert, key)
    cert["digest"] = digest_of(cert)
    return cert


def _counts(rates) -> dict:
    """Pass rates with absent buckets as 0 (a bucket no result fell in is not written)."""
    if not isinstance(rates, dict):
        return {}
    return {t: {k: c.get(k, 0) for k in ("passed", "waived", "failed", "total", "pass_rate")}
            if isinstance(c, dict) else c for t, c in rates.items()}


def consistency_problems(cert: dict) -> list[str]:
    """What the certificate says about itself that its per-case results contradict."""
    results = cert.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) and isinstance(r.get("case"), str)
                                                 for r in results):
        return ["malformed results: a list of per-case records is needed"]
    problems = []
    unknown = sorted({str(r.get("status")) for r in results} - set(STATUSES))
    if unknown:
        problems.append(f"unknown result status {', '.join(unknown)}")
    keys = [(r["case"], r.get("converter"), r.get("precision")) for r in results]
    duplicates = sorted({k for k in keys if keys.count(k) > 1}, key=str)
    if duplicates:
        problems.append(f"{len(duplicates)} case(s) recorded twice, e.g. {duplicates[0][0]}")
    recomputed = _counts(pass_rates((_table_of(r), r.get("status")) for r in results))
    claimed = _counts(cert.get("pass_rates"))
    if claimed != recomputed:
        differ = sorted(str(t) for t in set(recomputed) | set(claimed) if claimed.get(t) != recomputed.get(t))
        problems.append(f"pass rates disagree with the per-case results (table {', '.join(differ)})")
    waivers = [{"case": c, "reason": w} for c, w in sorted({(r["case"], r.get("waiver")) for r in results
                                                              if r.get("waiver")})]
    if cert.get("waivers") != waivers:
        problems.append("the waiver list disagrees with the per-case results")
    return problems


def verify_certificate(cert: dict, current_case_hash: str | None = None, *, case_ids=None,
                       trusted: Iterable[str] | None = None, allow_unsigned: bool = False) -> list[str]:
    """Problems found; an empty list means the certificate verifies. `current_case_hash` and
    `case_ids`: the case set the certificate's selection gives today (None: not checked).
    `trusted`: the fingerprints of the signers to accept (None or empty: any signer)."""
    problems = []
    if cert.get("format_version") not in READABLE_VERSIONS:
        return [f"unknown certificate format version {cert.get('format_version')!r}"]
    if cert.get("digest") != digest_of(cert):
        problems.append("digest mismatch: the certificate was modified after it was issued")
    if "signature" in cert:
        problems += _signature_problems(cert)
        if trusted and signer(cert) not in set(trusted):
            problems.append(f"signed by {signer(cert)}, which is not one of the trusted keys")
    elif not allow_unsigned:
        problems.append("not signed: anyone who edits it can recompute its digest (issue it with "
                        "certify --key KEY.pem)")
    elif trusted:
        problems.append("not signed, but a trusted signer was required")
    problems += consistency_problems(cert)
    if current_case_hash is not None and cert.get("case_set_hash") != current_case_hash:
        problems.append(f"case set changed: certificate {str(cert.get('case_set_hash', ''))[:12]}, "
                        f"current {current_case_hash[:12]}")
    if case_ids is not None and isinstance(cert.get("results"), list):
        known = set(case_ids)
        named = {r.get("case") for r in cert["results"] if isinstance(r, dict)}
        missing = sorted(str(c) for c in named - known)
        if missing:
            problems.append(f"{len(missing)} result(s) name a case that is not in the case set, "
                            f"e.g. {missing[0]}")
        absent = sorted(known - named)
        if absent:
            problems.append(f"{len(absent)} case(s) of the case set have no result, e.g. {absent[0]}")
    return problems


def certificate_html(cert: dict) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(t)}</td><td>{c['passed']}</td><td>{c.get('waived', 0)}</td><td>{c.get('failed', 0)}</td>"
        f"<td>{c['total']}</td><td>{c['pass_rate'] * 100:.2f}%</td></tr>" for t, c in cert["pass_rates"].items())
    env = html.escape(json.dumps(cert["environment"], indent=2))
    waivers = "".join(f"<li>{html.escape(w['case'])}: {html.escape(w['reason'])}</li>" for w in cert["waivers"])
    res = "".join(f"<tr><td>{html.escape(r['case'])}</td><td>{html.escape(r['converter'])}</td>"
                  f"<td>{html.escape(str(r['precision']))}</td><td>{html.escape(r['status'])}</td></tr>"
                  for r in cert["results"])
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Certificate: {html.escape(cert['backend'])}</title>"
            "<style>body{font-family:system-ui,sans-serif;margin:1.5em}td,th{border:1px solid #ccc;padding:.2em .5em}"
            "table{border-collapse:collapse}</style></head><body>"
            f"<h1>PNNX conformance certificate: {html.escape(cert['backend'])}</h1>"
            f"<p>tier {html.escape(cert['tier'])}, issued {html.escape(cert['created'])}</p>"
            f"<p>case set <code>{cert['case_set_hash']}</code><br>digest <code>{cert['digest']}</code><br>"
            f"signed by <code>{html.escape(signer(cert) or 'nobody (unsigned)')}</code></p>"
            "<h2>Pass rates per table</h2><table><tr><th>table</th><th>passed</th><th>waived</th><th>failed</th>"
            f"<th>total</th><th>rate</th></tr>{rows}</table>"
            f"<h2>Waivers</h2><ul>{waivers or '<li>none</li>'}</ul>"
            f"<h2>Environment</h2><pre>{env}</pre>"
            f"<h2>Results</h2><table><tr><th>case</th><th>converter</th><th>precision</th><th>status</th></tr>{res}</table>"
            "</body></html>\n")


def write_certificate(cert: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = "certificate-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", cert["backend"])
    js = out_dir / f"{stem}.json"
    js.write_text(json.dumps(cert, indent=1, sort_keys=True) + "\n")
    page = out_dir / f"{stem}.html"
    page.write_text(certificate_html(cert))
    return js, page
