"""ONNX lowering of a pnnx graph (`NAME.pnnx.onnx`).

    write_onnx(graph, path, fp16=True, opset=None)   check and write atomically
    build_model(graph, fp16=True, opset=None)        the ModelProto, for tests and tools

One module per operator family under `families/` (named as in emit/ncnn/families/ for the same
operators), each registering lowerings with `@LOWERINGS.register("nn.Conv2d", ...)` (see
registry.py); helpers several families share sit beside it (builder, dtypes, promote, pooling,
attention_blocks)."""
from .export import DEFAULT_OPSET, UnsupportedOperators, build_model, write_onnx

__all__ = ["DEFAULT_OPSET", "UnsupportedOperators", "build_model", "write_onnx"]
