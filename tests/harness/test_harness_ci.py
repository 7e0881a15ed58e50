"""The ready-made CI workflows under conformance/ci/: every pnnx-conformance command they run
parses with today's command line, the shard count agrees everywhere, and the jobs hang
together (shards upload what the report job downloads and merges)."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pnnx_conformance import cli

CI = Path(__file__).resolve().parents[2] / "conformance" / "ci"
GITHUB, GITLAB = CI / "github-actions.yml", CI / "gitlab-ci.yml"
# Flags the workflows use that another branch adds (the signing of certificates); this test
# fails once they exist, so that the entry is dropped.


def _shards(path: Path) -> int:
    text = path.read_text()
    if path == GITHUB:
        n = int(re.search(r"^  SHARDS: (\d+)$", text, re.M).group(1))
        assert re.search(r"^        shard: \[(.*)\]$", text, re.M).group(1) == ", ".join(map(str, range(1, n + 1)))
        return n
    return int(re.search(r"^  parallel: (\d+)$", text, re.M).group(1))


def _commands(path: Path) -> list[list[str]]:
    """Every `pnnx-conformance ...` command line, with the workflow's variables given values."""
    n = str(_shards(path))
    values = {"${{ matrix.shard }}": "1", "$SHARDS": n, "$CI_NODE_INDEX": "1", "$CI_NODE_TOTAL": n,
              "$backend": "torch", '"${key[@]}"': "--key k.pem"}
    commands = []
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#"):
            continue
        for found in re.findall(r"pnnx-conformance ([^;&#\n]+)", line):
            for name, value in values.items():
                found = found.replace(name, value)
            assert "$" not in found, f"{path.name}: a variable this test gives no value: {found}"
            commands.append(shlex.split(found))
    return commands


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=["github", "gitlab"])
def test_every_command_the_workflow_runs_parses(path):
    commands = _commands(path)
    assert {c[0] for c in commands} == {"plan", "run", "merge", "report", "certify"}
    for argv in commands:
        try:
            cli.parser().parse_args(argv)
        except SystemExit:
            pytest.fail(f"{path.name}: pnnx-conformance {shlex.join(argv)} does not parse")


@pytest.mark.parametrize("path", [GITHUB, GITLAB], ids=["github", "gitlab"])
def test_the_shard_count_agrees_across_the_workflow(path):
    n = _shards(path)
    runs = [c for c in _commands(path) if c[0] == "run"]
    assert len(runs) == 1 and "--tier" in runs[0] and runs[0][runs[0].index("--tier") + 1] == "full"
    assert runs[0][runs[0].index("--shard") + 1] == f"1/{n}"
    plans = [c for c in _commands(path) if c[0] == "plan"]
    assert plans and all(c[c.index("--shards") + 1] == str(n) for c in plans)
    assert all(c[c.index("--tier") + 1] == "full" for c in plans + [c for c in _commands(path) if c[0] == "certify"])


def _yaml(path: Path) -> dict:
    yaml = pytest.importorskip("yaml", reason="PyYAML is not in requirements/test.txt: the job graph is checked "
                                              "only where it is installed")
    return yaml.safe_load(path.read_text())


def _steps_text(job: dict) -> str:
    return "\n".join(str(s.get("run", "")) for s in job["steps"])


def test_github_job_graph_caching_and_artefacts():
    wf = _yaml(GITHUB)
    shard, report = wf["jobs"]["shard"], wf["jobs"]["report"]
    n = int(wf["env"]["SHARDS"])
    assert shard["strategy"]["matrix"]["shard"] == list(range(1, n + 1)) and shard["strategy"]["fail-fast"] is False
    assert report["needs"] == "shard" and "cancelled()" in report["if"]
    for job in (shard, report):
        cache = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@"))
        assert "hashFiles('requirements/*.txt'" in cache["with"]["key"] and ".venv-ci" in cache["with"]["path"]
    assert "libvulkan1" in _steps_text(shard) and "mesa-vulkan-drivers" in _steps_text(shard)
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == upload["with"]["path"] == "shard-${{ matrix.shard }}"
    assert '--out "shard-${{ matrix.shard }}"' in _steps_text(shard)
    download = next(s for s in report["steps"] if s.get("uses", "").startswith("actions/download-artifact@"))
    assert download["with"]["pattern"] == "shard-*"
    assert f"merge {download['with']['path']}/shard-* --out merged" in _steps_text(report)
    certify = next(s for s in report["steps"] if "certify" in str(s.get("run", "")))
    assert certify["env"]["PNNX_CERT_KEY"] == "${{ secrets.PNNX_CERT_KEY }}"


def test_gitlab_job_graph_caching_and_artefacts():
    ci = _yaml(GITLAB)
    shard, report, env = ci["shard"], ci["report"], ci[".pinned-environment"]
    assert ci["stages"] == ["shards", "report"] and (shard["stage"], report["stage"]) == ("shards", "report")
    assert shard["extends"] == report["extends"] == ".pinned-environment"
    assert report["needs"] == [{"job": "shard", "artifacts": True}] and report["when"] == "always"
    assert "requirements/runtime.txt" in env["cache"]["key"]["files"] and ".venv-ci" in env["cache"]["paths"]
    assert any("libvulkan1" in s and "mesa-vulkan-drivers" in s for s in env["before_script"])
    assert shard["artifacts"]["paths"] == ["shard-$CI_NODE_INDEX/"] and shard["artifacts"]["when"] == "always"
    assert any('--out "shard-$CI_NODE_INDEX"' in s for s in shard["script"])
    assert any(s.startswith("pnnx-conformance merge shard-*/ --out merged") for s in report["script"])
