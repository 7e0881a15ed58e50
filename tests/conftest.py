"""Loaded before every test module: selects the Hypothesis profile (see tests/common/profiles.py)
and gives every test the default case provider (an in-process `pnnx-conformance run` with
`--cases` switches the process-wide provider, which would leak into the next test)."""
import coverage_sample
import profiles  # noqa: F401  (registers and loads the profile)
import pytest

from pnnx_conformance.cases import DEFAULT_PROVIDER, provider, use_provider


@pytest.fixture(autouse=True)
def _default_case_provider():
    if provider() != DEFAULT_PROVIDER:  # switching back reloads the cases: only when needed
        use_provider(None)
    yield


def pytest_collection_modifyitems(config, items):
    """The op-case sweeps measure coverage on a sample of their cases (coverage_sample.py)."""
    coverage_sample.sample(items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with coverage_sample.paused(item):
        yield
