"""Big models: every artefact is written a weight (or a few MB) at a time from the model's own
memory, and an ONNX model past its size limit keeps its weights as external data.

Python-side allocations are measured with tracemalloc (numpy and bytes are traced; torch's
own tensors are not, and the model's weights are torch's): a writer that joined, copied or
serialized the whole model would show it in the peak."""
from __future__ import annotations

import tracemalloc

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
import torch.nn as nn

from pnnx_reference import api
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.emit.onnx import write_onnx
from pnnx_reference.emit.onnx.writer import data_path
from pnnx_reference.formats import pnnx_param
from pnnx_reference.selfcheck import load_model

WIDTH, LAYERS = 2048, 4          # four 16 MiB float32 weights: 64 MiB in all
LARGEST = WIDTH * WIDTH * 4
BOUND = LARGEST * 5 // 4          # one weight's worth and a quarter, never the model's


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(*[nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(LAYERS)]).eval()


@pytest.fixture(scope="module")
def model_and_graph():
    model = _model()
    x = torch.rand(1, WIDTH)
    return model, x, api.capture(model, (x,))


def _peak(write) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        write()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("artefact", ["pnnx", "onnx", "ncnn", "ncnn_fp32"])
def test_writer_holds_at_most_one_weight(tmp_path, model_and_graph, artefact):
    _, _, graph = model_and_graph
    writers = {
        "pnnx": lambda: pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin"),
        "onnx": lambda: write_onnx(graph, tmp_path / "m.pnnx.onnx"),
        "ncnn": lambda: write_ncnn(graph, tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py"),
        "ncnn_fp32": lambda: write_ncnn(graph, tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin",
                                        tmp_path / "m_ncnn.py", fp16=False),
    }
    peak = _peak(writers[artefact])
    written = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert written >= LAYERS * LARGEST // 2  # the weights are in the files (fp16 halves them)
    assert peak < BOUND, f"{artefact} writer peaked at {peak / 2**20:.1f} MiB of Python allocations"


def test_capture_views_the_models_weights(model_and_graph):
    model, _, graph = model_and_graph
    sources = {attr.source.data_ptr() for op in graph.ops for attr in op.attrs.values() if attr.source is not None}
    assert {p.data_ptr() for p in model.parameters()} <= sources


def test_export_with_self_check_holds_at_most_one_weight(tmp_path, model_and_graph):
    model, x, _ = model_and_graph
    result = None

    def export():
        nonlocal result
        result = api.export(model, (x,), tmp_path, "m")

    peak = _peak(export)
    assert result.self_check.startswith("passed"), result.self_check
    assert peak < BOUND, f"export peaked at {peak / 2**20:.1f} MiB of Python allocations"


def test_generated_loader_reads_large_weights_exactly(tmp_path, model_and_graph):
    """The `_pnnx.py` loader reads a weight of several chunks into one tensor (no second copy)."""
    model, x, graph = model_and_graph
    api.export(model, (x,), tmp_path, "m", self_check=False)
    loaded = load_model(tmp_path / "m_pnnx.py", torch.device("cpu"))  # plainly: no graph to share
    weights = sorted((p for p in loaded.parameters()), key=lambda p: p.data_ptr())
    assert len(weights) == LAYERS
    for mine in model.parameters():
        assert any(torch.equal(mine, w) for w in weights)
    torch.testing.assert_close(loaded(x), model(x), rtol=0, atol=0)


@pytest.mark.parametrize("fp16", [True, False])
def test_onnx_external_data_round_trip(tmp_path, model_and_graph, fp16):
    """Past the size limit (here a small one) the weights go to NAME.pnnx.onnx.data: the
    path-based checker passes and onnxruntime computes the model."""
    model, x, graph = model_and_graph
    path = tmp_path / "m.pnnx.onnx"
    written = write_onnx(graph, path, fp16=fp16, external_over=1 << 20)
    assert written.data == data_path(path) and written.data.exists()
    assert path.stat().st_size < 1 << 20 <= written.data.stat().st_size
    onnx.checker.check_model(str(path), full_check=True)
    proto = onnx.load(str(path), load_external_data=False)
    external = [t for t in proto.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert len(external) == LAYERS
    assert all(int(dict((e.key, e.value) for e in t.external_data)["offset"]) % 4096 == 0 for t in external)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {session.get_inputs()[0].name: x.numpy()})
    with torch.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-2 if fp16 else 1e-5, atol=1e-2 if fp16 else 1e-5)


def test_onnx_external_data_matches_one_file(tmp_path, model_and_graph):
    """The same weights, byte for byte, whether inline or external."""
    _, _, graph = model_and_graph
    write_onnx(graph, tmp_path / "one.pnnx.onnx")
    write_onnx(graph, tmp_path / "ext.pnnx.onnx", external_over=1 << 20)
    assert not data_path(tmp_path / "one.pnnx.onnx").exists()
    one = onnx.load(str(tmp_path / "one.pnnx.onnx"))
    ext = onnx.load(str(tmp_path / "ext.pnnx.onnx"))
    for a, b in zip(one.graph.initializer, ext.graph.initializer):
        assert onnx.numpy_helper.to_array(a).tobytes() == onnx.numpy_helper.to_array(b).tobytes()
    assert one.graph.node == ext.graph.node


def test_one_file_onnx_is_what_protobuf_serializes(tmp_path, model_and_graph):
    """The streamed single file is byte for byte the serialization of the whole model."""
    from pnnx_reference.emit.onnx import build_model

    _, _, graph = model_and_graph
    write_onnx(graph, tmp_path / "m.pnnx.onnx")
    assert (tmp_path / "m.pnnx.onnx").read_bytes() == build_model(graph).SerializeToString()


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_onnx_payload_of_a_view_is_its_c_order_bytes(dtype):
    """A payload that views a weight (transposed for MatMul, sliced, reversed) is stored as the
    C-ordered copy would be, whatever the chunk boundaries (the transposing copy works tile by tile)."""
    from pnnx_reference.emit.onnx.builder import Payload

    weight = np.random.default_rng(0).standard_normal((300, 517)).astype(np.float32)
    for view in (weight, weight.T, weight[::2], weight[:, ::3], weight.T[::-1], weight[::-1].T, weight[:, :1].T):
        payload = Payload(view, np.dtype(dtype))
        for chunk in (4000, 1 << 20):
            stored = b"".join(bytes(c) for c in payload.chunks(max_bytes=chunk))
            assert stored == np.ascontiguousarray(view, dtype).tobytes()


def test_weight_written_in_place_after_capture_keeps_its_value():
    """A graph's weights view the model's memory; changing the model afterwards must not
    change (or silently corrupt) a graph already captured."""
    model = nn.Linear(4, 4)
    graph = api.capture(model, (torch.rand(1, 4),))
    attr = next(a for op in graph.ops for a in op.attrs.values() if a.shape == (4, 4))
    before = bytes(attr.data)
    with torch.no_grad():
        model.weight.add_(1)
    with pytest.raises(Exception, match="changed in place"):
        attr.data
    assert before != model.weight.detach().numpy().tobytes()


class _UserBlock(nn.Module):
    """A user module (replayed from its graph) around standard ones (rebuilt whole)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.scale = nn.Parameter(torch.rand(8))
        self.register_buffer("shift", torch.rand(8))

    def forward(self, x):
        return self.norm(self.fc(x)) * self.scale + self.shift


def test_pt_rebuild_shares_the_scripts_weights(tmp_path):
    """A `.pt` is never held twice: the rebuilt module's parameters and buffers are the
    TorchScript module's own tensors, not copies."""
    from pnnx_reference.frontends.torchscript.loader import rebuild

    torch.manual_seed(0)
    script = torch.jit.trace(nn.Sequential(_UserBlock(), nn.Linear(8, 4)).eval(), torch.rand(1, 8))
    rebuilt = rebuild(script)
    theirs = {t.data_ptr() for t in [*script.parameters(), *script.buffers()]}
    mine = [t.data_ptr() for t in [*rebuilt.parameters(), *rebuilt.buffers()]]
    assert len(mine) == len(theirs) == 8 and set(mine) == theirs
