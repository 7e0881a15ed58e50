"""A certificate's HTML page: everything the signature covers, in the order a reader asks."""
from __future__ import annotations

import json
from html import escape

from .certificate import signer

STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5em}td,th{border:1px solid #ccc;padding:.2em .5em}"
         "table{border-collapse:collapse}th{text-align:left}")
COUNT_COLUMNS = ("passed", "waived", "failed", "total", "not_applicable")
COUNT_HEADS = [c.replace("_", " ") for c in COUNT_COLUMNS]


def _e(value) -> str:
    return escape("" if value is None else str(value))


def _rate(c: dict) -> str:
    return "n/a" if c["pass_rate"] is None else f"{c['pass_rate'] * 100:.2f}%"


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{h}</th>" for h in head)
    return f"<table><tr>{th}</tr>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                                            for row in rows) + "</table>"


def _dist(d) -> str:
    return "not recorded" if d is None else f"{_e(d['distribution'])} {_e(d['version'])}"


def _what(cert: dict) -> str:
    b, s = cert["backend"], cert["selection"]
    rows = [["backend (identity)", f"<b>{_e(b['name'])}</b>"], ["plug-in package", _dist(b["plugin"])],
            ["runtime", _dist(b["runtime"])], ["device", _e(b["device"] or "not stated")],
            ["suite", f"{_e(cert['suite']['name'])} {_e(cert['suite']['version'])} ({_e(cert['suite']['commit'])})"],
            ["tier", _e(s["tier"])], ["route", _e(s["converter"])],
            ["operators", _e(", ".join(s["ops"]) or "all")], ["tables", _e(", ".join(s["tables"]) or "all")],
            ["case-id pattern", _e(s["pattern"] or "none")],
            ["case cap", _e("none" if not s["max_cases"] else s["max_cases"])],
            ["case provider", _e(s["cases_provider"] or "the suite's registry")],
            ["cases", _e(s["case_count"])], ["case-set hash", f"<code>{_e(s['case_set_hash'])}</code>"],
            ["issued", _e(cert["created"])], ["digest", f"<code>{_e(cert['digest'])}</code>"],
            ["signed by", f"<code>{_e(signer(cert) or 'nobody (unsigned)')}</code>"]]
    return _table(["", ""], [[f"<b>{k}</b>", v] for k, v in rows])


def certificate_html(cert: dict) -> str:
    name = _e(cert["backend"]["name"])
    modes = _table(["mode", "pre-rounding", "runtime computes in", "meaning"],
                   [[_e(m), _e(p["rounding"]), _e(p["compute"]), _e(p["meaning"])]
                    for m, p in cert["precisions"].items()])
    summary = _table(["mode", *COUNT_HEADS, "pass rate"],
                     [[_e(m), *(str(c[k]) for k in COUNT_COLUMNS), _rate(c)] for m, c in cert["summary"].items()])
    tables = _table(["mode", "table", *COUNT_HEADS, "pass rate"],
                    [[_e(m), _e(t), *(str(c[k]) for k in COUNT_COLUMNS), _rate(c)]
                     for m, s in cert["summary"].items() for t, c in s["tables"].items()])
    waivers = "".join(f"<li>{_e(w['case'])} ({_e(w['precision'])}): {_e(w['reason'])}</li>" for w in cert["waivers"])
    na = sorted({(r["case"], r["reason"]) for r in cert["results"] if r["status"] in ("not-applicable", "skipped")})
    na_list = "".join(f"<li>{_e(c)}: {_e(why)}</li>" for c, why in na)
    results = _table(["case", "precision", "status", "stage", "reason", "max abs"],
                     [[_e(r["case"]), _e(r["precision"]), _e(r["status"]), _e(r["stage"]), _e(r["reason"] or r["waiver"]),
                       _e(r["max_abs"])] for r in cert["results"]])
    env = _e(json.dumps({"described by the backend": cert["backend"]["described"],
                         "environment": cert["environment"]}, indent=2, sort_keys=True))
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Certificate: {name}</title>"
            f"<style>{STYLE}</style></head><body>"
            f"<h1>PNNX conformance certificate: {name}</h1>"
            f"<h2>What was certified</h2>{_what(cert)}"
            f"<h2>Precision modes</h2>{modes}"
            "<h2>Pass rates per precision mode (cases; not-applicable cases are outside the rate)</h2>"
            f"{summary}<h2>Per table</h2>{tables}"
            f"<h2>Waivers</h2><ul>{waivers or '<li>none</li>'}</ul>"
            f"<h2>Not applicable to this route</h2><ul>{na_list or '<li>none</li>'}</ul>"
            f"<h2>Results</h2>{results}<h2>Environment</h2><pre>{env}</pre></body></html>\n")
