"""pnnx_conformance: the conformance suite for PNNX converters and runtimes (the harness, with
the operator cases of pnnx_op_cases and the networks of pnnx_model_zoo)."""

__version__ = "0.2.0"  # released with the converter of the same version (pyproject.toml pins it)


def version_line(command: str) -> str:
    """What `COMMAND --version` prints: the suite, the converter it ships with, the upstream releases."""
    from pnnx_reference import TARGETS, __version__ as converter

    return (f"{command} {__version__} (pnnx-conformance; converter pnnx-reference {converter}; "
            f"upstream pnnx {TARGETS['pnnx']}, ncnn {TARGETS['ncnn']})")
