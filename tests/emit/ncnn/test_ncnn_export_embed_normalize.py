"""Regressions from the conformance run: Embed with rank-2/3 indices (ncnn reads the index
blob as int32 words; a float feed, or a GPU/fp16 copy before Embed, scrambles them) and
F.normalize's ncnn.bin (Normalize reads scale_data_size raw floats, which the validator
must account for); max_norm embedding tables; log_softmax where probabilities underflow."""
from __future__ import annotations

import copy

import ncnn
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fn_modules import FnOf
from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend, NcnnVulkanBackend
from pnnx_reference.api import export
from pnnx_reference.formats import ncnn_bin, ncnn_param
from pnnx_reference.validate import validate

FP32 = dict(atol=1e-5, rtol=1e-5)
FP16 = dict(atol=2e-2, rtol=2e-2)


def _embedding_models():
    torch.manual_seed(0)
    return {"nn.Embedding": torch.nn.Embedding(20, 8).eval(),
            "F.embedding": FnOf(lambda s, x: F.embedding(x, s.w), w=torch.randn(20, 6))}


def _convert(tmp_path, model, x, fp16=False) -> Artefacts:
    res = export(model, x, tmp_path, "m", fp16=fp16)
    assert "ncnn" not in res.unsupported, res.unsupported
    paths = {"ncnn.param": res.paths["ncnnparam"], "ncnn.bin": res.paths["ncnnbin"], "ncnn.py": res.paths["ncnnpy"]}
    return Artefacts("reference", "t", tmp_path, paths)


def _run(backend, artefacts, precision, x):
    backend.prepare(artefacts, precision)
    try:
        return backend.run([x])[0]
    finally:
        backend.release()


def _expected(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


INDEX_SHAPES = [(2, 5), (1, 7), (2, 3, 4), (3, 5, 3)]  # batchless, batch 1, 3-d with channel padding
INDEX_DTYPES = [np.int64, np.int32]


@pytest.mark.parametrize("op", ["nn.Embedding", "F.embedding"])
@pytest.mark.parametrize("shape", INDEX_SHAPES)
@pytest.mark.parametrize("precision", ["fp32", "default"])
def test_embedding_indices_match_torch_on_ncnn_cpu(tmp_path, op, shape, precision):
    """The conformance CPU backend feeds integer indices as int32, as Embed reads them."""
    model = _embedding_models()[op]
    for i, dtype in enumerate(INDEX_DTYPES):
        x = np.random.default_rng(i).integers(0, 20, shape).astype(dtype)
        artefacts = _convert(tmp_path / str(i), model, torch.from_numpy(x))
        got = _run(NcnnCpuBackend(), artefacts, precision, x)
        np.testing.assert_allclose(got, _expected(model, x), **FP32)


def test_flatten_before_embed_stays_on_the_cpu_in_fp32(tmp_path):
    """A Flatten on Vulkan or in fp16 storage would convert the int32 index bits as floats."""
    x = torch.randint(0, 20, (2, 3, 4))
    params = _convert(tmp_path, _embedding_models()["nn.Embedding"], x).paths["ncnn.param"]
    layers = ncnn_param.load(params).layers
    embed = next(layer for layer in layers if layer.type == "Embed")
    feeder = next(layer for layer in layers if embed.inputs[0] in layer.outputs)
    assert feeder.type == "Flatten"
    featmask = feeder.params[31]
    assert featmask & 2 and featmask & 4 and featmask & 16  # no fp16 storage, no bf16 storage, no vulkan


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("shape", [(2, 5), (3, 5, 3)])
@pytest.mark.parametrize("precision,tol", [("fp32", FP32), ("fp16", FP16)])
def test_embedding_indices_match_torch_on_vulkan(tmp_path, shape, precision, tol):
    model = _embedding_models()["nn.Embedding"]
    x = np.random.default_rng(0).integers(0, 20, shape)
    artefacts = _convert(tmp_path, model, torch.from_numpy(x), fp16=precision == "fp16")
    got = _run(NcnnVulkanBackend(), artefacts, precision, x)
    np.testing.assert_allclose(got, _expected(model, x), **tol)


# --- F.normalize: Normalize's scale is in ncnn.bin and accounted for --------------------
def test_normalize_bin_validates_without_trailing_bytes_and_matches_torch(tmp_path):
    model = FnOf(lambda s, x: F.normalize(x))
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    artefacts = _convert(tmp_path, model, torch.from_numpy(x))
    param, bin_path = artefacts.paths["ncnn.param"], artefacts.paths["ncnn.bin"]
    assert validate(param) == []
    layers = ncnn_param.load(param).layers
    assert [layer.type for layer in layers] == ["Input", "Normalize"]
    data = bin_path.read_bytes()
    result = ncnn_bin.walk_bin(data, layers)
    assert result.complete and result.problems == [] and result.consumed == len(data) == 4
    got = _run(NcnnCpuBackend(), artefacts, "fp32", x)
    np.testing.assert_allclose(got, _expected(model, x), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("layer,size", [
    (ncnn_param.NcnnLayer("Normalize", "n", ["a"], ["b"], {0: 0, 1: 1, 2: 1e-12, 3: 1, 4: 1, 9: 1}), 1),
    (ncnn_param.NcnnLayer("Normalize", "n", ["a"], ["b"], {1: 0, 3: 16}), 16),
    (ncnn_param.NcnnLayer("RMSNorm", "r", ["a"], ["b"], {0: 16, 1: 1e-6}), 16),  # 2=affine defaults to 1
    (ncnn_param.NcnnLayer("RMSNorm", "r", ["a"], ["b"], {0: 16, 2: 0}), 0),
])
def test_walk_reads_the_raw_scale_tables_ncnn_loads(layer, size):
    """ncnn's load_model: Normalize reads scale_data_size raw floats, RMSNorm affine_size when affine."""
    layers = [ncnn_param.NcnnLayer("Input", "in0", [], ["a"]), layer]
    exact = np.ones(size, np.float32).tobytes()
    assert ncnn_bin.walk_bin(exact, layers).problems == []
    assert ncnn_bin.walk_bin(exact + b"\0" * 4, layers).problems[0][1] == \
        "ncnn.bin has 4 bytes after the last layer's weights"


@pytest.mark.parametrize("op", ["nn.Embedding", "F.embedding"])
def test_embedding_max_norm_table_is_renormalised(tmp_path, op):
    """max_norm scales every looked-up row whose norm exceeds it (torch does it in place, at
    run time); Embed has no such step, so the table is written scaled. The model is exported
    untouched (F.embedding's weight is captured before the forward renormalises it)."""
    torch.manual_seed(1)
    model = (torch.nn.Embedding(10, 6, max_norm=1.0) if op == "nn.Embedding"
             else FnOf(lambda s, x: F.embedding(x, s.w, max_norm=1.0), w=torch.randn(10, 6) * 2)).eval()
    x = np.arange(10, dtype=np.int64).reshape(2, 5)
    fresh = _expected(copy.deepcopy(model), x)
    got = _run(NcnnCpuBackend(), _convert(tmp_path, model, torch.from_numpy(x)), "fp32", x)
    assert np.linalg.norm(got, axis=-1).max() <= 1.0 + 1e-6
    np.testing.assert_allclose(got, fresh, **FP32)


# --- log_softmax: finite where the probabilities underflow --------------------------------
def _log_softmax_case(spread: float):
    model = torch.nn.LogSoftmax(dim=1).eval()
    x = (np.random.default_rng(3).random((2, 16), dtype=np.float32) * 2 - 1) * spread
    return model, x


def test_log_softmax_stays_finite_where_softmax_underflows_fp32(tmp_path):
    """exp(-200) is 0 in fp32: log(Softmax(x)) would be -inf there, torch gives -200."""
    model, x = _log_softmax_case(120.0)
    got = _run(NcnnCpuBackend(), _convert(tmp_path, model, torch.from_numpy(x)), "fp32", x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, _expected(model, x), **FP32)


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
def test_log_softmax_stays_finite_in_fp16_on_vulkan(tmp_path):
    """fp16 holds nothing below 6e-8 (e^-17): the conformance case nn.LogSoftmax/dim1_large."""
    model, x = _log_softmax_case(30.0)
    x = x.astype(np.float16).astype(np.float32)
    got = _run(NcnnVulkanBackend(), _convert(tmp_path, model, torch.from_numpy(x), fp16=True), "fp16", x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, _expected(model, x), atol=5e-2, rtol=5e-2)
