"""pnnx_reference: the reference PNNX converter (PyTorch -> pnnx.param/bin, _pnnx.py, pnnx.onnx,
ncnn.param/bin, _ncnn.py) and the format library."""

__version__ = "0.2.0"
# The upstream releases whose file formats the output matches (pnnx.param/bin of the pnnx
# converter, ncnn.param/bin of the ncnn runtime), as pinned in requirements/runtime.txt.
TARGETS = {"pnnx": "20261020", "ncnn": "20261020"}


def version_line(command: str) -> str:
    """What `COMMAND --version` prints."""
    return (f"{command} {__version__} (pnnx-reference; writes the formats of pnnx {TARGETS['pnnx']} "
            f"and ncnn {TARGETS['ncnn']})")
