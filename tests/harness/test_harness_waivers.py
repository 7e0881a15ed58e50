"""Waiver file validation and application."""
from __future__ import annotations

import pytest

from pnnx_conformance.errors import HarnessError
from pnnx_conformance.results import Result
from pnnx_conformance.waivers import apply_waivers, load_waivers

IDS = ["nn.Conv2d/k3", "F.relu/r4"]
ENTRY = """
[[waiver]]
case = "nn.Conv2d/*"
backend = "ncnn-vulkan"
converter = "*"
reason = "lavapipe rounds differently"
link = "https://example.org/issue/1"
"""


def _write(tmp_path, text):
    p = tmp_path / "waivers.toml"
    p.write_text(text)
    return p


def _result(status, backend="ncnn-vulkan", case="nn.Conv2d/k3"):
    return Result(case=case, op="nn.Conv2d", table="nn", converter="reference", check="parity",
                  status=status, backend=backend, precision="fp32")


def test_waived_failure_is_xfail_and_waived_pass_is_xpass(tmp_path):
    waivers = load_waivers(_write(tmp_path, ENTRY), IDS)
    rs = [_result("fail-numeric"), _result("pass"), _result("pass", backend="ncnn-cpu"), _result("not-supported")]
    apply_waivers(rs, waivers)
    assert [r.status for r in rs] == ["xfail", "xpass", "pass", "not-supported"]
    assert rs[0].waiver == "lavapipe rounds differently" and "example.org" in rs[1].error


@pytest.mark.parametrize("text, message", [
    (ENTRY.replace('case = "nn.Conv2d/*"', 'case = "nn.Nothing/*"'), "matches no case"),
    (ENTRY.replace('link = "https://example.org/issue/1"', ""), "missing link"),
    (ENTRY.replace('link = "https://example.org/issue/1"', 'link = "soon"'), "must be a URL"),
    (ENTRY + 'colour = "red"\n', "unknown field colour"),
    ("[[waiver]\n", "waivers.toml"),
])
def test_bad_waiver_files_are_one_clear_error(tmp_path, text, message):
    with pytest.raises(HarnessError, match=message):
        load_waivers(_write(tmp_path, text), IDS)


def test_the_shipped_waiver_file_is_valid():
    from pnnx_conformance.cases import use_provider, all_cases
    from pnnx_conformance.waivers import DEFAULT_FILE

    use_provider(None)
    load_waivers(DEFAULT_FILE, [c.id for c in all_cases()])
