"""Emitters: `_pnnx.py` (python/pnnx_py.py), ncnn (ncnn/), ONNX (onnx/)."""
from pnnx_reference.emit.python.pnnx_py import generate_python, main_regenerate, regenerate, write_python

__all__ = ["generate_python", "main_regenerate", "regenerate", "write_python"]
