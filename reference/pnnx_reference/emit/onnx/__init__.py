"""ONNX lowering of a pnnx graph (`NAME.pnnx.onnx`).

    write_onnx(graph, path, fp16=True, opset=None)   check and write atomically, one weight at a time
                                                     (external data past 2 GiB: writer.py)
    build_model(graph, fp16=True, opset=None)        the ModelProto, for tests and tools

One module per operator family under `families/` (named as in emit/ncnn/families/ for the same
operators), each registering lowerings with `@LOWERINGS.register("nn.Conv2d", ...)` (see
registry.py); helpers several families share sit beside it (builder, dtypes, promote, pooling,
attention_blocks); writer.py streams the file."""
from .export import DEFAULT_OPSET, build_model, write_onnx

__all__ = ["DEFAULT_OPSET", "build_model", "write_onnx"]
