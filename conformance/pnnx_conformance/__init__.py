"""pnnx_conformance: the conformance suite for PNNX converters and runtimes (the harness, with
the operator cases of pnnx_op_cases and the networks of pnnx_model_zoo)."""

from pnnx_op_cases import __version__, version_line  # the distribution's version lives in its lowest package

__all__ = ["__version__", "version_line"]
