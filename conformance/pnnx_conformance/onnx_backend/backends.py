"""ONNX `Backend`s (`onnx.backend.base.Backend`) over the reference converter, for
`onnx.backend.test.BackendTest`: `prepare()` converts the model with the ONNX frontend
(`pnnx_reference.api.export_onnx`), `run()` executes an artefact:

    PnnxPythonOnnxBackend   the regenerated `_pnnx.py` (PyTorch)
    PnnxNcnnOnnxBackend     `ncnn.param` + `ncnn.bin` on ncnn's CPU, fp32 (every fp16/bf16 option off)

Inputs with symbolic dims are converted at the first `run()`, at the shapes it is given (as a
user passes `inputshape=`). ncnn blobs are float: its outputs are returned in the dtype the
graph declares, as a deployment reading them would do."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from ..artefacts import Artefacts, kind_name


def _declared_dtypes(model: onnx.ModelProto) -> list:
    out = []
    for value in model.graph.output:
        elem = value.type.tensor_type.elem_type if value.type.HasField("tensor_type") else 0
        out.append(onnx.helper.tensor_dtype_to_np_dtype(elem) if elem else None)
    return out


def _fixed_shapes(model: onnx.ModelProto) -> list[list[int]] | None:
    initializers = {t.name for t in model.graph.initializer}
    shapes = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dims = value.type.tensor_type.shape.dim
        if not value.type.tensor_type.HasField("shape") or any(not d.HasField("dim_value") for d in dims):
            return None
        shapes.append([d.dim_value for d in dims])
    return shapes


def _torch(array: np.ndarray):
    import torch

    if array.dtype.name == "bfloat16":  # ml_dtypes' bfloat16: same bits as torch's
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.array(array, copy=True))


def _numpy(tensor) -> np.ndarray:
    import torch

    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.detach().cpu().view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.detach().cpu().resolve_conj().numpy().copy()


def _input_names(model: onnx.ModelProto) -> list[str]:
    initializers = {t.name for t in model.graph.initializer}
    return [v.name for v in model.graph.input if v.name not in initializers]


class PnnxRep(BackendRep):
    """A model converted per set of input shapes. `prepare` converts at the graph's own shapes
    on seeded example inputs; where that cannot work (symbolic dims, a shape or an axis read
    from an input, indices the example data puts out of range) `run` converts on the inputs it
    gets, with the inputs the graph must know as constants frozen to their values, and keeps
    that conversion for exactly those shapes and values."""

    def __init__(self, model: onnx.ModelProto, runner):
        self.model, self.runner = model, runner
        self.workdir = Path(tempfile.mkdtemp(prefix="pnnx_onnx_backend_"))
        self.dtypes = _declared_dtypes(model)
        self.names = _input_names(model)
        self._converted: dict[tuple, tuple] = {}

    def _export(self, **kwargs):
        from pnnx_reference import api

        folder = self.workdir / f"conversion{len(self._converted)}"
        result = api.export_onnx(self.model, folder, "model", fp16=False, **kwargs)
        arts = Artefacts("reference-onnx", "onnx-backend-test", folder,
                         {kind_name(k): Path(p) for k, p in result.paths.items()}, dict(result.unsupported))
        return self.runner.load(arts)

    def prepare_fixed(self, shapes: list[list[int]]) -> None:
        from pnnx_reference.errors import ConversionError

        try:
            self._converted[self._key(shapes, {})] = (self._export(input_shapes=shapes or None), ())
        except ConversionError:
            pass  # converted again in run(), on the inputs it gets

    @staticmethod
    def _key(shapes, frozen: dict) -> tuple:
        return (tuple(tuple(s) for s in shapes),
                tuple((k, v.dtype.str, v.shape, v.tobytes()) for k, v in sorted(frozen.items())))

    def _loaded(self, arrays: list[np.ndarray]):
        from pnnx_reference.errors import ConstantInputsNeeded

        shapes = [list(a.shape) for a in arrays]
        if self._key(shapes, {}) in self._converted:
            return self._converted[self._key(shapes, {})]
        for (key_shapes, frozen_items), value in self._converted.items():
            frozen = {k: b for k, _, _, b in frozen_items}
            if key_shapes == self._key(shapes, {})[0] and frozen and all(
                    arrays[self.names.index(k)].tobytes() == b for k, b in frozen.items()):
                return value

        tensors = {n: _torch(a) for n, a in zip(self.names, arrays)}
        frozen: dict[str, np.ndarray] = {}
        while True:  # each refusal names the inputs one rule needed; freeze them and go on
            kept = [t for n, t in tensors.items() if n not in frozen]
            try:
                loaded = (self._export(inputs=kept, constant_inputs=dict(frozen)), tuple(frozen))
                break
            except ConstantInputsNeeded as err:
                more = {n: arrays[self.names.index(n)] for n in err.inputs if n not in frozen}
                if not more:
                    raise
                frozen.update(more)
        self._converted[self._key(shapes, frozen)] = loaded
        return loaded

    def run(self, inputs, **kwargs):
        arrays = [np.asarray(x) for x in (inputs.values() if isinstance(inputs, dict) else inputs)]
        model, frozen = self._loaded(arrays)
        fed = [a for n, a in zip(self.names, arrays) if n not in frozen]
        outputs = self.runner.run(model, fed)
        return [np.asarray(y).astype(dtype, copy=False) if dtype is not None and self.runner.casts else np.asarray(y)
                for y, dtype in zip(outputs, self.dtypes + [None] * len(outputs))]

    def __del__(self):
        shutil.rmtree(getattr(self, "workdir", ""), ignore_errors=True)


class _PythonRunner:
    casts = False

    @staticmethod
    def load(arts: Artefacts):
        from ..backends.pnnx_python import load_generated_model

        if not arts.has("pnnx.py", "pnnx.bin"):
            raise RuntimeError(arts.missing_reason(("pnnx.py", "pnnx.bin")))
        return load_generated_model(arts.paths["pnnx.py"])

    @staticmethod
    def run(model, arrays):
        import torch

        with torch.no_grad():
            out = model(*[_torch(a) for a in arrays])
        return [_numpy(t) for t in (out if isinstance(out, (tuple, list)) else (out,))]


class _NcnnRunner:
    casts = True

    @staticmethod
    def load(arts: Artefacts):
        from ..backends.ncnn_backend import NcnnCpuBackend

        if not arts.has("ncnn.param", "ncnn.bin"):
            raise RuntimeError(arts.missing_reason(("ncnn.param", "ncnn.bin")))
        backend = NcnnCpuBackend()
        backend.prepare(arts, "fp32")
        return backend

    @staticmethod
    def run(backend, arrays):
        if any(a.size == 0 for a in arrays):  # an empty Mat crashes ncnn instead of refusing
            raise RuntimeError("ncnn cannot take an empty tensor")
        return backend.run(arrays)


class _PnnxOnnxBackend(Backend):
    runner = None

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs):
        super().prepare(model, device, **kwargs)
        rep = PnnxRep(model, cls.runner)
        shapes = _fixed_shapes(model)
        if shapes is not None:
            rep.prepare_fixed(shapes)
        return rep

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


class PnnxPythonOnnxBackend(_PnnxOnnxBackend):
    runner = _PythonRunner


class PnnxNcnnOnnxBackend(_PnnxOnnxBackend):
    runner = _NcnnRunner


BACKENDS = {"onnxruntime": "onnxruntime.backend", "pnnx-python": PnnxPythonOnnxBackend,
            "pnnx-ncnn": PnnxNcnnOnnxBackend}


def backend_named(name: str):
    target = BACKENDS[name]
    if isinstance(target, str):
        import importlib

        return importlib.import_module(target)
    return target
