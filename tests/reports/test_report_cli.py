"""The report, diff, certify and verify-certificate subcommands, through the CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pnnx_conformance.cli import main
from pnnx_conformance.report.committed import COMPACT, read_compact
from pnnx_conformance.report.readme import README_BEGIN, README_END
from pnnx_conformance.results import Metrics, Result, write_results

ROOT = Path(__file__).resolve().parents[2]


def rec(case, status, check="parity", backend="ncnn-cpu", error="", detail=""):
    op = case.split("/")[0]
    return Result(case=case, op=op, table=op.split(".")[0], converter="reference", check=check, status=status,
                  backend=backend if check == "parity" else None, precision="fp32" if check == "parity" else None,
                  metrics=Metrics(max_abs=0.0 if status == "pass" else 0.5), error=error, detail=detail)


def make_run(folder: Path, records) -> Path:
    write_results(folder / "results.jsonl", records)
    return folder


@pytest.fixture
def run_dir(tmp_path):
    return make_run(tmp_path / "run", [
        rec("nn.ReLU/a", "pass"), rec("nn.ReLU/a", "pass", check="convert"),
        rec("nn.Conv2d/k5", "fail-numeric", error="max abs 0.5 > 1e-4", detail="x" * 5000),
        rec("nn.Conv2d/k5", "pass", check="convert")])


def test_report_writes_matrix_compact_results_html_and_readme(tmp_path, run_dir):
    readme = tmp_path / "README.md"
    readme.write_text(f"top\n{README_BEGIN}\nOLD-SECTION\n{README_END}\n")
    assert main(["report", "--results", str(run_dir), "--out", str(tmp_path / "reports"),
                 "--readme", str(readme)]) == 0
    matrix = (tmp_path / "reports" / "support_matrix.md").read_text()
    assert matrix.startswith("<!-- auto-generated") and "| `nn.Conv2d` ⚠️ |" in matrix
    compact = read_compact(tmp_path / "reports" / COMPACT)
    assert len(compact) == 4 and all(r.detail == "" for r in compact)
    assert {r.error for r in compact} >= {"max abs 0.5 > 1e-4"}
    assert (run_dir / "html" / "index.html").is_file()          # default: beside the results
    assert "\nnn.ReLU|pn|✅\n" in readme.read_text() and "OLD-SECTION" not in readme.read_text()
    assert "\nnn.Conv2d ⚠️|pn|❌ nc\n" in readme.read_text()


def test_report_without_out_goes_under_the_results_folder(tmp_path, run_dir, monkeypatch):
    """Not into the reports/ of whatever checkout the command runs in (issue 20, item 5)."""
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "support_matrix.md").write_text("the committed matrix\n")
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--results", str(run_dir)]) == 0
    assert (run_dir / "report" / "support_matrix.md").is_file()
    assert (tmp_path / "reports" / "support_matrix.md").read_text() == "the committed matrix\n"
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["support_matrix.md"]


def test_compact_results_are_byte_stable(tmp_path, run_dir):
    for out in ("a", "b"):
        assert main(["report", "--results", str(run_dir), "--out", str(tmp_path / out),
                     "--html", str(tmp_path / out / "html")]) == 0
    assert (tmp_path / "a" / COMPACT).read_bytes() == (tmp_path / "b" / COMPACT).read_bytes()


def test_check_passes_when_up_to_date_and_fails_with_a_diff(tmp_path, run_dir, capsys):
    reports = tmp_path / "reports"
    assert main(["report", "--results", str(run_dir), "--out", str(reports)]) == 0
    assert main(["report", "--check", "--out", str(reports)]) == 0
    matrix = reports / "support_matrix.md"
    matrix.write_text(matrix.read_text().replace("❌ 0/1", "✅ 1/1", 1))
    capsys.readouterr()
    assert main(["report", "--check", "--out", str(reports)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("---") and "-| `nn.Conv2d` ⚠️ |" in out and "+| `nn.Conv2d` ⚠️ |" in out


def test_check_with_readme_fails_on_a_stale_section(tmp_path, run_dir, capsys):
    reports, readme = tmp_path / "reports", tmp_path / "README.md"
    readme.write_text(f"top\n{README_BEGIN}\n{README_END}\nend\n")
    assert main(["report", "--results", str(run_dir), "--out", str(reports), "--readme", str(readme)]) == 0
    assert main(["report", "--check", "--out", str(reports), "--readme", str(readme)]) == 0
    readme.write_text(readme.read_text().replace("nn.ReLU|pn|✅", "nn.ReLU|pn|❌ nc"))
    capsys.readouterr()
    assert main(["report", "--check", "--out", str(reports), "--readme", str(readme)]) == 1
    captured = capsys.readouterr()
    assert "-nn.ReLU|pn|❌ nc" in captured.out and "+nn.ReLU|pn|✅" in captured.out
    assert "README.md differs from what the committed results give" in captured.err
    assert "support_matrix.md: up to date" in captured.err


def test_check_without_committed_results_is_one_clear_error(tmp_path, capsys):
    assert main(["report", "--check", "--out", str(tmp_path)]) == 2
    assert "no committed results" in capsys.readouterr().err


def test_diff_lists_changes_and_fails_only_on_new_failures(tmp_path, capsys):
    old = make_run(tmp_path / "old", [rec("nn.ReLU/a", "pass"), rec("nn.Tanh/a", "fail-numeric")])
    fixed = make_run(tmp_path / "fixed", [rec("nn.ReLU/a", "pass"), rec("nn.Tanh/a", "pass")])
    broken = make_run(tmp_path / "broken", [rec("nn.ReLU/a", "crash", error="SIGSEGV"),
                                            rec("nn.Tanh/a", "fail-numeric")])
    assert main(["diff", str(old), str(fixed), "--fail-on-new-failures"]) == 0
    assert "newly passing: 1" in capsys.readouterr().out
    assert main(["diff", str(old), str(broken)]) == 0
    assert main(["diff", str(old), str(broken), "--fail-on-new-failures"]) == 1
    out = capsys.readouterr().out
    assert "newly failing: 1" in out and "nn.ReLU/a [reference parity ncnn-cpu fp32]: pass -> crash" in out
    assert main(["diff", str(old), str(tmp_path / "nowhere")]) == 2


def test_verify_certificate_rejects_a_non_certificate(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    assert main(["verify-certificate", str(bad)]) == 2
    assert f"error: {bad}: unknown certificate format version None" in capsys.readouterr().err


def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "conformance" / "examples" / "ort_noopt_backend"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "pnnx_conformance.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=500)


def test_certify_example_vendor_backend_then_tamper(tmp_path):
    """One small real run: two cases and their smoke batch variants through the example vendor backend (by module:Class),
    signed with a key made by keygen; an edited and re-hashed copy is a forgery."""
    from pnnx_conformance.report.certificate import digest_of, summarize

    keys = _cli("keygen", "--out", str(tmp_path / "vendor.pem"), cwd=tmp_path)
    assert keys.returncode == 0, keys.stderr
    fingerprint = keys.stderr.split("fingerprint: ")[1].split()[0]
    assert oct((tmp_path / "vendor.pem").stat().st_mode & 0o777) == "0o600"
    proc = _cli("certify", "--backend", "ort_noopt_backend:OrtNoOptBackend", "--op", "F.relu,nn.ReLU",
                "--key", str(tmp_path / "vendor.pem"), "--out", str(tmp_path / "cert"), "-q",
                "--jobs", "1", cwd=tmp_path)  # one worker process: four small cases need no second
    assert proc.returncode == 0, proc.stderr[-3000:]
    js = next((tmp_path / "cert").glob("certificate-*.json"))
    cert = json.loads(js.read_text())
    assert [r["status"] for r in cert["results"]] == ["pass"] * 4
    assert cert["signature"]["fingerprint"] == fingerprint
    assert cert["backend"]["name"] == "onnxruntime-noopt"   # its name, not the module:Class it was given as
    assert cert["environment"]["packages"]["torch"] and cert["environment"]["cpu"]
    assert "<h1>PNNX conformance certificate" in js.with_suffix(".html").read_text()
    good = _cli("verify-certificate", str(js), "--trust", fingerprint, cwd=tmp_path)
    assert good.returncode == 0 and f"signed by {fingerprint} (trusted)" in good.stderr, good.stderr
    assert _cli("verify-certificate", str(js), "--pubkey", str(tmp_path / "vendor.pub.pem"),
                cwd=tmp_path).returncode == 0
    cert["results"][0]["status"] = "fail-numeric"
    cert["summary"] = summarize(cert["results"], cert["precisions"])
    cert["digest"] = digest_of(cert)  # edited and re-hashed: only the signature can tell
    js.write_text(json.dumps(cert))
    proc = _cli("verify-certificate", str(js), "--trust", fingerprint, cwd=tmp_path)
    assert proc.returncode == 1 and "bad signature" in proc.stderr and "digest" not in proc.stderr
