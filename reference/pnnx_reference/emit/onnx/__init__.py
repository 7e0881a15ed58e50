"""ONNX lowering of a pnnx graph (`NAME.pnnx.onnx`).

    write_onnx(graph, path, fp16=True, opset=None)   check and write atomically
    build_model(graph, fp16=True, opset=None)        the ModelProto, for tests and tools

One module per operator family under `families/`, each registering lowerings with
`@lowering("nn.Conv2d", ...)` (see registry.py)."""
from .export import DEFAULT_OPSET, UnsupportedOperators, build_model, write_onnx

__all__ = ["DEFAULT_OPSET", "UnsupportedOperators", "build_model", "write_onnx"]
