"""Vendor certificates: a signed record of one backend's results on a case set.

A certificate (format 3) states what was certified: the backend by its `name`, the plug-in's
and the runtime's distributions and versions (read from the installed distributions), the
device, each precision mode with what it means, the selection (tier, operator patterns,
tables, case count, case-set hash), the suite's version, the environment, per-case results
(with the failing stage and reason), waivers (shown as waived, never as passed) and a summary
per precision mode counting cases; then an Ed25519 signature by the issuer's key (`certify
--key`; the public key and its fingerprint are in the certificate) and a sha256 digest, both
over the canonical JSON of everything else. Every summary figure is derived from the signed
results, and nothing is stated twice.

Verifying is in three steps that import and run nothing the certificate names:
`certificate_schema.read` (size, nesting, duplicate keys, exact types), `trust_problems`
(digest, signature, signer among the keys the user trusts), `content_problems` (the summary,
waivers and case count re-derived from the results). `certify.verify_file` then compares
with today's case set, using a case provider the certificate names only when the user names
the same one.

Trust model: the signature proves the certificate is unchanged since the holder of that
private key issued it. Anyone can make a key, so a verifier pins the issuers it trusts
(`--trust FINGERPRINT` / `--pubkey FILE.pem`); a signed certificate verifies only against a
pinned key. An unsigned one (format 1, or `certify` without a key) verifies only with
`allow_unsigned`: its digest proves nothing, since anyone who edits it can recompute it.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import platform
import sys
from collections import Counter, defaultdict
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from ..environment import environment
from ..results import STATUSES, Result

FORMAT_VERSION = 3          # 1: unsigned, rates per table (the committed device runs); 2: retired
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

        with _stderr_silenced():  # ncnn's C++ prints a device report on its first Vulkan use
            count = ncnn.get_gpu_count()
        return [ncnn.get_gpu_info(i).device_name() for i in range(count)]
    except Exception as exc:  # no ncnn, or no Vulkan loader: record why
        return [f"unavailable: {exc}"]


@contextlib.contextmanager
def _stderr_silenced():
    """File descriptor 2 to /dev/null meanwhile (what a C library prints, not only Python)."""
    sys.stderr.flush()
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


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


# --- what a certificate states, derived from its per-case results -----------------------
GOOD = {"pass", "xpass"}            # xpass: the runtime passed; only the waiver was stale
WAIVED = {"xfail"}
NOT_APPLICABLE = {"not-applicable", "skipped"}   # the route cannot run the case, or it has no oracle
ROUNDING_MEANING = {
    "none": "weights and inputs as generated (fp32), judged by the fp32 oracle",
    "fp16": "weights and inputs pre-rounded to fp16, judged by the oracle on the same rounded values",
    "bf16": "weights and inputs pre-rounded to bf16, judged by the oracle on the same rounded values",
}


def bucket(status: str) -> str:
    if status in GOOD:
        return "passed"
    if status in WAIVED:
        return "waived"
    return "not_applicable" if status in NOT_APPLICABLE else "failed"


def _counts(buckets: list[str]) -> dict:
    found = Counter(buckets)
    c = {k: found[k] for k in ("passed", "waived", "failed", "not_applicable")}
    c["total"] = c["passed"] + c["waived"] + c["failed"]
    c["pass_rate"] = round(c["passed"] / c["total"], 6) if c["total"] else None
    return c


def summarize(results: list[dict], modes: Iterable[str]) -> dict:
    """Per precision mode: cases passed / waived / failed / not applicable, the total the rate
    counts (not-applicable cases are outside it) and the pass rate; the same per table."""
    buckets = defaultdict(lambda: defaultdict(list))   # mode -> table -> buckets
    for r in results:
        buckets[r["precision"]][r["table"]].append(bucket(r["status"]))
    return {mode: {**_counts([b for t in sorted(buckets[mode]) for b in buckets[mode][t]]),
                   "tables": {t: _counts(buckets[mode][t]) for t in sorted(buckets[mode])}}
            for mode in sorted(modes)}


def waiver_list(results: list[dict]) -> list[dict]:
    return [{"case": r["case"], "precision": r["precision"], "reason": r["waiver"]}
            for r in sorted(results, key=lambda r: (r["case"], r["precision"])) if r["waiver"]]


def precision_modes(rounding: dict, compute: dict) -> dict:
    """Each mode with its pre-rounding, the type the runtime computes in (as the backend
    reports it: a "default" mode resolved) and what that means."""
    out = {}
    for mode, r in sorted(rounding.items()):
        r = r or "none"
        out[mode] = {"rounding": r, "compute": compute[mode],
                     "meaning": f"{ROUNDING_MEANING.get(r, r)}; the runtime computes in {compute[mode]}"}
    return out


def result_record(r: Result) -> dict:
    return {"case": r.case, "table": r.table, "precision": r.precision or "", "status": r.status,
            "stage": getattr(r, "stage", "") or "", "reason": r.error, "waiver": r.waiver,
            "max_abs": r.metrics.max_abs if r.metrics else None}


def make_certificate(records: list[Result], *, backend: dict, precisions: dict, selection: dict,
                     environment: dict, suite: dict, key=None) -> dict:
    """The certificate of one backend's parity records through the certification route.
    `backend`: name, plugin and runtime distributions, device, what describe() said;
    `precisions`: precision_modes(); `selection`: what was selected, with its case count and
    case-set hash. Signed with `key` (an Ed25519 private key) when given."""
    if not records:
        raise ValueError(f"no parity results for backend {backend['name']!r}")
    results = sorted((result_record(r) for r in records), key=lambda r: (r["case"], r["precision"]))
    cert = {
        "format_version": FORMAT_VERSION,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "suite": suite,
        "backend": backend,
        "precisions": precisions,
        "selection": selection,
        "environment": environment,
        "summary": summarize(results, precisions),
        "waivers": waiver_list(results),
        "results": results,
    }
    if key is not None:
        return sign_certificate(cert, key)
    cert["digest"] = digest_of(cert)
    return cert


# --- verification: nothing here imports or runs anything the certificate names ------------
def trust_problems(cert: dict, trusted: Iterable[str] = (), allow_unsigned: bool = False) -> list[str]:
    """The digest, the signature and whether its signer is one the user trusts."""
    problems = []
    if cert.get("digest") != digest_of(cert):
        problems.append("digest mismatch: the certificate was modified after it was issued")
    trusted = set(trusted or ())
    if "signature" in cert:
        problems += _signature_problems(cert)
        if not trusted and not allow_unsigned:
            problems.append(f"signed by {signer(cert)}, but no key is trusted: pass --trust {signer(cert)} "
                            "or --pubkey FILE.pem if you trust this signer")
        elif trusted and signer(cert) not in trusted:
            problems.append(f"signed by {signer(cert)}, which is not one of the trusted keys")
    elif trusted:
        problems.append("not signed, but a trusted signer was required")
    elif not allow_unsigned:
        problems.append("not signed: anyone who edits it can recompute its digest (issue it with "
                        "certify --key KEY.pem)")
    return problems


def content_problems(cert: dict) -> list[str]:
    """What the certificate states that its own per-case results and selection contradict
    (format 3; the schema has already been checked)."""
    if cert["format_version"] == 1:
        return legacy_problems(cert)
    results, selection, backend = cert["results"], cert["selection"], cert["backend"]
    problems = []
    unknown = sorted({r["status"] for r in results} - set(STATUSES))
    if unknown:
        problems.append(f"unknown result status {', '.join(unknown)}")
    counted = Counter((r["case"], r["precision"]) for r in results)
    twice = sorted(k for k, n in counted.items() if n > 1)
    if twice:
        problems.append(f"{len(twice)} result(s) recorded twice, e.g. {twice[0][0]} ({twice[0][1]})")
    modes = set(cert["precisions"])
    stray = sorted({r["precision"] for r in results} - modes)
    if stray:
        problems.append(f"results in precision mode(s) {', '.join(stray)} the certificate does not declare")
    modes_of = defaultdict(set)
    for case, mode in counted:
        modes_of[case].add(mode)
    cases = sorted(modes_of)
    incomplete = [c for c in cases if modes_of[c] != modes]
    if incomplete:
        problems.append(f"{len(incomplete)} case(s) lack a result in some declared precision mode, "
                        f"e.g. {incomplete[0]}")
    if selection["case_count"] != len(cases):
        problems.append(f"the selection counts {selection['case_count']} case(s), the results hold {len(cases)}")
    derived = summarize(results, modes)
    if cert["summary"] != derived:
        differ = sorted(m for m in modes | set(cert["summary"]) if cert["summary"].get(m) != derived.get(m))
        problems.append(f"the summary disagrees with the per-case results (precision {', '.join(differ)})")
    if cert["waivers"] != waiver_list(results):
        problems.append("the waiver list disagrees with the per-case results")
    said = backend["described"] if isinstance(backend["described"], dict) else {}
    for field in ("name", "device"):
        if field in said and said[field] != backend[field]:
            problems.append(f"the backend's {field} is {backend[field]!r}, its description says {said[field]!r}")
    for mode, p in cert["precisions"].items():
        if p["rounding"] not in ROUNDING_MEANING:
            problems.append(f"precision {mode}: unknown rounding {p['rounding']!r}")
    return problems


def case_set_problems(cert: dict, current_hash: str, case_ids: Iterable[str]) -> list[str]:
    """The certificate against the case set its selection gives today."""
    signed = cert["case_set_hash"] if cert["format_version"] == 1 else cert["selection"]["case_set_hash"]
    problems = []
    if signed != current_hash:
        problems.append(f"case set changed: certificate {signed[:12]}, current {current_hash[:12]}")
    known = set(case_ids)
    named = {r["case"] for r in cert["results"]}
    missing = sorted(named - known)
    if missing:
        problems.append(f"{len(missing)} result(s) name a case that is not in the case set, e.g. {missing[0]}")
    absent = sorted(known - named)
    if absent:
        problems.append(f"{len(absent)} case(s) of the case set have no result, e.g. {absent[0]}")
    return problems


# --- format 1 (unsigned, pass rates per table counting records) ----------------------------
def pass_rates(entries: Iterable[tuple[str, str]]) -> dict:
    per_table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for table, status in entries:
        per_table[table]["passed" if status == "pass" else "waived" if status == "xfail" else "failed"] += 1
        per_table[table]["total"] += 1
    return {t: {**c, "pass_rate": round(c["passed"] / c["total"], 6)} for t, c in sorted(per_table.items())}


def _filled(rates: dict) -> dict:
    return {t: {k: c.get(k, 0) for k in ("passed", "waived", "failed", "total", "pass_rate")}
            for t, c in rates.items()}


def legacy_problems(cert: dict) -> list[str]:
    results = cert["results"]
    problems = []
    if cert["tier"] != cert["selection"]["tier"]:
        problems.append(f"tier {cert['tier']!r} but the selection's tier is {cert['selection']['tier']!r}")
    keys = [(r["case"], r["converter"], r["precision"]) for r in results]
    if len(set(keys)) != len(keys):
        problems.append("a case recorded twice")
    recomputed = pass_rates((r["case"].split("/")[0].split(".")[0], r["status"]) for r in results)
    if _filled(cert["pass_rates"]) != _filled(recomputed):
        problems.append("pass rates disagree with the per-case results")
    waivers = [{"case": c, "reason": w} for c, w in sorted({(r["case"], r["waiver"]) for r in results if r["waiver"]})]
    if cert["waivers"] != waivers:
        problems.append("the waiver list disagrees with the per-case results")
    return problems
