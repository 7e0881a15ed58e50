"""Write the three artefacts atomically (temp name, then rename); ncnn.bin one weight at a
time, each converted a chunk at a time (formats/ncnn_bin.weight_chunks)."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from . import ncnn_py
from .layers import Layer

from ...formats.background_write import open_weights
from ...formats.ncnn_bin import weight_chunks
from ...errors import UnsupportedOperator
from ...formats.ncnn_param import NcnnLayer, NcnnModel, dump_layer, dumps


def param_text(layers: list[Layer]) -> str:
    """ncnn.param's text; a layer whose params the format cannot hold (a non-finite float) makes
    the ncnn emitter decline the model (UnsupportedOperator) rather than write what ncnn misreads."""
    model = NcnnModel([NcnnLayer(l.type, l.name, l.inputs, l.outputs, l.params) for l in layers])
    for layer in model.layers:
        try:
            dump_layer(layer)
        except ValueError as err:
            raise UnsupportedOperator(layer.type, layer.name, str(err)) from None
    return dumps(model)


def bin_chunks(layers: list[Layer], fp16: bool):
    """ncnn.bin's bytes, a piece at a time."""
    for layer in layers:
        for w in layer.weights:
            yield from weight_chunks(w.data, w.tagged, fp16, np.float32)


def bin_bytes(layers: list[Layer], fp16: bool) -> bytes:
    return b"".join(bin_chunks(layers, fp16))


def _atomic(path, write, opener=open) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with opener(tmp, "wb") as f:
            write(f)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_files(layers, param_path, bin_path, py_path, fp16, inputs, input_axes, output_axes,
                output_dtypes) -> None:
    param = param_text(layers).encode()
    code = ncnn_py.render(param_path, bin_path, py_path, inputs, input_axes, output_axes, output_dtypes).encode()
    _atomic(param_path, lambda f: f.write(param))
    _atomic(bin_path, lambda f: f.writelines(bin_chunks(layers, fp16)), open_weights)
    _atomic(py_path, lambda f: f.write(code))
