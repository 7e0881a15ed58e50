"""Write the three artefacts atomically (temp name, then rename)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from . import ncnn_py
from .layers import Layer

from ...formats.ncnn_bin import pack_weight
from ...formats.ncnn_param import NcnnLayer, NcnnModel, dumps


def param_text(layers: list[Layer]) -> str:
    return dumps(NcnnModel([NcnnLayer(l.type, l.name, l.inputs, l.outputs, l.params) for l in layers]))


def bin_bytes(layers: list[Layer], fp16: bool) -> bytes:
    return b"".join(pack_weight(np.asarray(w.data, np.float32), w.tagged, fp16)
                    for layer in layers for w in layer.weights)


def _atomic(path, data: bytes) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_files(layers, param_path, bin_path, py_path, fp16, inputs, output_ranks, batchless=False) -> None:
    param = param_text(layers).encode()
    weights = bin_bytes(layers, fp16)
    code = ncnn_py.render(param_path, bin_path, py_path, inputs, output_ranks, batchless).encode()
    _atomic(param_path, param)
    _atomic(bin_path, weights)
    _atomic(py_path, code)
