"""Vendor certificates: a signed-by-digest record of one backend's results on a case set.

A certificate holds the environment fingerprint, the case-set hash, per-case results,
waivers (shown as waived, never as passed), pass rates per table and a sha256 digest over
its canonical JSON. `verify` recomputes the digest and the current case-set hash.
"""
from __future__ import annotations

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
from ..results import Result
from .summary import GOOD

FORMAT_VERSION = 1


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


def digest_of(cert: dict) -> str:
    body = {k: v for k, v in cert.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def make_certificate(backend: str, results: list[Result], *, tier: str, case_hash: str,
                     environment: dict | None = None, selection: dict | None = None) -> dict:
    mine = [r for r in results if r.backend == backend and r.check == "parity"]
    if not mine:
        raise ValueError(f"no parity results for backend {backend!r}")
    per_table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in mine:
        bucket = "passed" if r.status in GOOD else "waived" if r.status == "xfail" else "failed"
        per_table[r.table][bucket] += 1
        per_table[r.table]["total"] += 1
    rates = {t: {**c, "pass_rate": round(c["passed"] / c["total"], 6)} for t, c in sorted(per_table.items())}
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
        "results": [{"case": r.case, "converter": r.converter, "precision": r.precision, "status": r.status,
                     "waiver": r.waiver, "max_abs": r.metrics.max_abs if r.metrics else None}
                    for r in sorted(mine, key=lambda r: r.key)],
    }
    cert["waivers"] = [{"case": c, "reason": w} for c, w in cert["waivers"]]
    cert["digest"] = digest_of(cert)
    return cert


def verify_certificate(cert: dict, current_case_hash: str | None = None) -> list[str]:
    """Problems found; an empty list means the certificate verifies."""
    problems = []
    if cert.get("format_version") != FORMAT_VERSION:
        problems.append(f"unknown certificate format version {cert.get('format_version')!r}")
    if cert.get("digest") != digest_of(cert):
        problems.append("digest mismatch: the certificate was modified after it was issued")
    if current_case_hash is not None and cert.get("case_set_hash") != current_case_hash:
        problems.append(f"case set changed: certificate {cert.get('case_set_hash', '')[:12]}, "
                        f"current {current_case_hash[:12]}")
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
            f"<p>case set <code>{cert['case_set_hash']}</code><br>digest <code>{cert['digest']}</code></p>"
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
