"""Emitters: `_pnnx.py` (python_code), ncnn (ncnn/), ONNX (onnx/)."""
from pnnx_reference.emit.python_code import (CodegenError, generate_python, main_regenerate,
                                             regenerate, write_python)

__all__ = ["CodegenError", "generate_python", "main_regenerate", "regenerate", "write_python"]
