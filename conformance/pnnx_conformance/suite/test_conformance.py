"""One test per conformance unit; parametrised by pnnx_conformance.pytest_plugin."""
from pnnx_conformance.pytest_plugin import check_unit


def test_conformance(conformance_unit, conformance_worker, conformance_waivers):
    check_unit(conformance_worker, conformance_unit, conformance_waivers)
