"""pytest integration: one test per case x converter x check [x backend x precision].

    pnnx-conformance pytest --tier smoke -n 2 -k "ncnn-vulkan"      (the plug-in and suite preloaded)
    pytest -p pnnx_conformance.pytest_plugin --pyargs pnnx_conformance.suite --conformance-tier smoke

Test ids are the unit ids ("nn.Conv2d/k3::reference::parity::ncnn-cpu::fp32"), so -k, -x,
--lf and xdist's -n work (xdist hands out tests in order, so a case's tests mostly stay on one
xdist worker and are converted once). Each xdist worker owns one isolated conformance worker
and its own scratch folder.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from . import backends as backend_registry
from . import converters as converter_registry
from .cases import DEFAULT_PROVIDER, all_cases, provider, select_cases, use_provider
from .tiers import case_limit
from .units import plan
from .waivers import DEFAULT_FILE, apply_waivers, load_waivers
from .worker import Worker, WorkerConfig


def pytest_addoption(parser):
    g = parser.getgroup("pnnx-conformance")
    g.addoption("--conformance-tier", default="smoke", choices=("smoke", "full"))
    g.addoption("--conformance-op", action="append", default=[], help="operator pattern")
    g.addoption("--conformance-backend", action="append", default=[], help="backend (default: built-ins)")
    g.addoption("--conformance-converter", action="append", default=[], help="reference | upstream")
    g.addoption("--conformance-cases", default=None, help="case provider module:function")
    g.addoption("--conformance-waivers", default=None, help="waiver file")
    g.addoption("--conformance-timeout", type=float, default=120.0)
    g.addoption("--conformance-max-cases", type=int, default=None, help="cap (default: the tier's)")


def _opt(config, name):
    return config.getoption(f"--conformance-{name}")


def pytest_generate_tests(metafunc):
    if "conformance_unit" not in metafunc.fixturenames:
        return
    config = metafunc.config
    use_provider(_opt(config, "cases"))
    specs = _opt(config, "backend") or list(backend_registry.DEFAULT)
    backends = {spec: backend_registry.load_backend(spec) for spec in specs}
    converters = _opt(config, "converter") or list(converter_registry.DEFAULT)
    ops = _opt(config, "op") or None
    limit = case_limit(_opt(config, "tier"), _opt(config, "max-cases"), bool(ops))
    cases = select_cases(_opt(config, "tier"), ops, limit=limit)
    reexport = {n for n in converters
                if converter_registry.load_converter(n).in_process or _opt(config, "tier") == "full"}
    units = plan(cases, converters, backends, reexport)
    # no xdist_group marks: loadgroup rewrites node ids ("id@group") and --lf stops matching
    metafunc.parametrize("conformance_unit", [pytest.param(u, id=u.id) for u in units])


@pytest.fixture(scope="session")
def conformance_worker(request):
    config = request.config
    workroot = Path(tempfile.mkdtemp(prefix="pnnx-conformance-pytest-"))
    worker = Worker(WorkerConfig(str(workroot), _opt(config, "tier"), _opt(config, "cases"),
                                 _opt(config, "timeout")))
    yield worker
    worker.close()


@pytest.fixture(scope="session")
def conformance_waivers(request):
    # the committed waivers are about the default case set; a run of other cases names its own
    default = DEFAULT_FILE if DEFAULT_FILE.is_file() and provider() == DEFAULT_PROVIDER else None
    path = _opt(request.config, "waivers") or default
    return load_waivers(Path(path), [c.id for c in all_cases()]) if path else []


def check_unit(worker: Worker, unit, waivers) -> None:
    """Run one unit and turn its status into a pytest outcome."""
    result = worker.run(unit)
    apply_waivers([result], waivers)
    message = f"{result.status}: {result.error}".rstrip(": ")
    if result.status == "pass":
        return
    if result.status in ("skipped", "not-supported", "not-applicable"):
        pytest.skip(message)
    if result.status == "xfail":
        pytest.xfail(f"{result.error} (waived: {result.waiver})")
    pytest.fail(f"{message}\n{result.detail}", pytrace=False)
