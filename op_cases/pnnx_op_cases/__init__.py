"""pnnx_op_cases: the operator cases of the conformance suite. The lowest package of the
pnnx-conformance distribution, so it holds the distribution's version (pnnx_conformance and
pnnx_model_zoo, above it, take it from here)."""

__version__ = "0.2.0"  # released with the converter of the same version (pyproject.toml pins it)


def version_line(command: str) -> str:
    """What `COMMAND --version` prints: the suite, the converter it ships with, the upstream releases."""
    from pnnx_reference import TARGETS, __version__ as converter

    return (f"{command} {__version__} (pnnx-conformance; converter pnnx-reference {converter}; "
            f"upstream pnnx {TARGETS['pnnx']}, ncnn {TARGETS['ncnn']})")
