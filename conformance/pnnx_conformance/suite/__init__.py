"""The conformance suite as a pytest module (see pnnx_conformance.pytest_plugin)."""
