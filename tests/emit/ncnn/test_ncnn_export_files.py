"""The artefacts themselves: fusions, Split and naming in ncnn.param, fp16/fp32 ncnn.bin,
the generated _ncnn.py, errors for what cannot be lowered, and the graph left untouched."""
from __future__ import annotations

import runpy
import struct

import numpy as np
import pytest
import torch

from conformance_runs import assert_close, run_ncnn, tolerance
from fn_modules import Fn
from upstream_fixture_cases import build
from ncnn_export_helpers import LOW_PRECISION, captured_graph, exported
from pnnx_conformance.backends.ncnn_backend import NO_BATCH, declared_batch_indices
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_bin, ncnn_param, pnnx_param
from pnnx_reference.ir import Attribute, Graph

FP16_TAG = struct.pack("<I", 0x01306B47)


def _layers(name: str):
    return ncnn_param.load(f"{exported(name)}.ncnn.param").layers


def test_activation_fused_into_convolution():
    layers = _layers("conv2d_depthwise_relu")
    assert [l.type for l in layers] == ["Input", "ConvolutionDepthWise"]
    assert layers[1].params[9] == 1 and layers[1].outputs == ["out0"]


def test_clip_and_sigmoid_fused_with_params():
    relu6 = _layers("nn.Conv2d/k1_relu6")[1]
    assert relu6.params[9] == 3 and relu6.params[10] == [0.0, 6.0]
    assert _layers("nn.Conv2d/k1_sigmoid")[1].params[9] == 4


def test_zero_padding_folded_into_convolution():
    layers = _layers("conv2d_pad_fold")
    assert [l.type for l in layers] == ["Input", "Convolution"]
    p = layers[1].params
    assert (p[4], p[15], p[14], p[16]) == (1, 2, 0, 1)


def test_reflect_padding_mode_becomes_padding_layer():
    types = [l.type for l in _layers("conv2d_reflect")]
    assert types == ["Input", "Padding", "Convolution"]


def test_inputs_outputs_and_split_naming():
    layers = _layers("block")
    assert layers[0].type == "Input" and layers[0].outputs == ["in0"]
    splits = [l for l in layers if l.type == "Split"]
    assert splits, "the input feeds conv and the residual add: a Split is needed"
    produced = [b for l in layers for b in l.outputs]
    assert "out0" in produced and "out1" in produced
    consumed = [b for l in layers for b in l.inputs]
    assert len(consumed) == len(set(consumed)), "each blob has one consumer after Split"


def test_global_pooling_then_flatten_reads_flat_blob():
    types = [l.type for l in _layers("global_avgpool_flatten")]
    assert types == ["Input", "Pooling", "InnerProduct"]


@pytest.mark.parametrize("name", ["conv2d", "linear", "batchnorm2d", "embedding", "act_prelu", "expr_const"])
def test_bin_layout_walks_cleanly(name):
    base = exported(name)
    layers = ncnn_param.load(f"{base}.ncnn.param").layers
    result = ncnn_bin.walk_bin(open(f"{base}.ncnn.bin", "rb").read(), layers)
    assert result.complete and not result.problems


def test_fp16_and_fp32_bins():
    model, _ = build("conv2d")
    half = open(f"{exported('conv2d')}.ncnn.bin", "rb").read()
    full = open(f"{exported('conv2d', fp16=False)}.ncnn.bin", "rb").read()
    weight, bias = model[0].weight.detach().numpy(), model[0].bias.detach().numpy()
    assert half[:4] == FP16_TAG and full[:4] == b"\0\0\0\0"
    assert len(half) == 4 + weight.size * 2 + bias.size * 4
    assert len(full) == 4 + weight.size * 4 + bias.size * 4
    # fp16 as upstream writes it (fp16 subnormals flushed to zero)
    np.testing.assert_array_equal(np.frombuffer(half[4:4 + weight.size * 2], "<u2"),
                                  ncnn_bin.fp16_round_half_away(weight.reshape(-1)))
    np.testing.assert_array_equal(np.frombuffer(full[4:4 + weight.size * 4], "<f4"), weight.reshape(-1))
    np.testing.assert_array_equal(np.frombuffer(full[-bias.size * 4:], "<f4"), bias)


def test_batchnorm_weights_untagged():
    model, _ = build("batchnorm2d")
    data = np.frombuffer(open(f"{exported('batchnorm2d')}.ncnn.bin", "rb").read(), "<f4")
    bn = model[0]
    expected = np.concatenate([bn.weight.detach(), bn.running_mean, bn.running_var, bn.bias.detach()])
    np.testing.assert_array_equal(data, expected)


def test_generated_python_runs_from_another_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    module = runpy.run_path(f"{exported('block')}_ncnn.py")
    got = module["test_inference"]()
    model, _ = build("block")
    torch.manual_seed(0)
    x = torch.rand(1, 8, 12, 12, dtype=torch.float)
    with torch.no_grad():
        expected = model(x)
    assert isinstance(got, tuple) and len(got) == 2
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, atol=LOW_PRECISION["atol"], rtol=LOW_PRECISION["rtol"])


def test_graph_is_not_modified(tmp_path):
    graph = captured_graph("block")
    before = pnnx_param.dumps(graph)
    write_ncnn(graph, tmp_path / "a.param", tmp_path / "a.bin", tmp_path / "a_ncnn.py")
    assert pnnx_param.dumps(graph) == before


# --- what cannot be lowered ------------------------------------------------------------
def _graph(shape, *ops) -> Graph:
    """Input -> ops (type, params) chained -> Output, all operands of `shape`."""
    g = Graph()
    x = g.new_operand("0", shape, "f32")
    g.connect(g.new_operator("pnnx.Input", "pnnx_input_0"), outputs=[x])
    for i, (op_type, params) in enumerate(ops):
        y = g.new_operand(str(i + 1), shape, "f32")
        op = g.new_operator(op_type, f"op_{i}")
        op.params.update(params)
        g.connect(op, inputs=[x], outputs=[y])
        x = y
    g.connect(g.new_operator("pnnx.Output", "pnnx_output_0"), inputs=[x])
    return g


def _expect_unsupported(graph, tmp_path) -> str:
    paths = [tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py"]
    with pytest.raises(UnsupportedOperator) as info:
        write_ncnn(graph, *paths)
    assert not any(p.exists() for p in paths), "nothing is written when lowering fails"
    assert "\n" not in str(info.value)
    return str(info.value)


def _written(graph, tmp_path) -> tuple[list, str]:
    """(layers, _ncnn.py text) of a graph that lowers."""
    write_ncnn(graph, tmp_path / "m.param", tmp_path / "m.bin", tmp_path / "m_ncnn.py")
    return ncnn_param.load(tmp_path / "m.param").layers, (tmp_path / "m_ncnn.py").read_text()


def test_batch_above_one_is_the_mat_batch_of_layout_bound_operators(tmp_path):
    """A (2, 3, 8, 8) input of a pooling layer is fed with dim 0 as the ncnn Mat batch, which
    ncnn runs the layers over one sample at a time (no Reshape needed)."""
    g = _graph([2, 3, 8, 8], ("nn.ReLU", {}), ("nn.MaxPool2d", {"kernel_size": 2}))
    g.operands[2].shape = [2, 3, 4, 4]
    layers, code = _written(g, tmp_path)
    assert [l.type for l in layers] == ["Input", "ReLU", "Pooling"]
    assert 'ex.input("in0", ncnn.Mat(in0.numpy(), batch_index=0)' in code and "numpy(batch_index=0)" in code


def test_batch_made_by_a_reshape_moves_into_the_mat(tmp_path):
    """reshape(1, 6, 4, 4) -> (2, 3, 4, 4) then pooling: the reshape writes the new dim 0 as the
    Mat batch (a batch-aware Reshape, 12/13 = input/output batch axis) for the pooling to run per
    sample."""
    g = _graph([1, 6, 4, 4], ("Tensor.reshape", {"shape": [2, 3, 4, 4]}), ("nn.MaxPool2d", {"kernel_size": 2}))
    g.operands[1].shape = [2, 3, 4, 4]
    g.operands[2].shape = [2, 3, 2, 2]
    layers, code = _written(g, tmp_path)
    reshape = next(l for l in layers if l.type == "Reshape")
    assert reshape.params[12] == 0 and reshape.params[13] == 0 and [reshape.params[k] for k in (0, 1, 11, 2)] == [4, 4, 3, 2]
    assert layers[-1].type == "Pooling" and "numpy(batch_index=0)" in code


def test_op_along_batch_axis_runs_on_the_whole_blob(tmp_path):
    """softmax over dim 0 cannot run sample by sample: the batch of 1 is folded into the blob
    first (here a plain Reshape), and the Softmax runs over the blob's axis 0."""
    layers, code = _written(_graph([1, 3, 8], ("F.softmax", {"dim": 0})), tmp_path)
    assert [l.type for l in layers] == ["Input", "Reshape", "Softmax"]
    assert layers[-1].params[0] == 0 and "numpy(batch_index=233)" in code


def test_every_unsupported_operator_is_listed(tmp_path):
    graph = _graph([1, 3, 8], ("torch.argsort", {"dim": 1}), ("nn.ReLU", {}), ("Tensor.frobnicate", {}))
    message = _expect_unsupported(graph, tmp_path)
    assert "torch.argsort (op_0)" in message and "Tensor.frobnicate (op_2)" in message
    assert "op_1" not in message


def test_constant_becomes_memorydata(tmp_path):
    g = _graph([1, 4, 5], ("pnnx.Expression", {"expr": "add(@0,@1)"}))
    const = g.new_operand("c", [4, 5], "f32")
    attr = g.new_operator("pnnx.Attribute", "const_0", before=g.ops[1])
    value = np.arange(20, dtype=np.float32).reshape(4, 5)
    attr.attrs["data"] = Attribute.from_numpy(value)
    g.connect(attr, outputs=[const])
    g.connect(g.ops[2], inputs=[const])
    write_ncnn(g, tmp_path / "m.param", tmp_path / "m.bin", tmp_path / "m_ncnn.py")
    layers = ncnn_param.load(tmp_path / "m.param").layers
    memory = next(l for l in layers if l.type == "MemoryData")
    assert memory.params == {0: 5, 1: 4}
    np.testing.assert_array_equal(np.frombuffer((tmp_path / "m.bin").read_bytes(), "<f4"), value.reshape(-1))


def test_view_transpose_view_becomes_shufflechannel():
    layers = _layers("Tensor.view/channel_shuffle_pattern")
    assert [l.type for l in layers] == ["Input", "ShuffleChannel", "ReLU"]
    assert layers[1].params == {0: 2, 1: 0}


def test_stacked_bidirectional_lstm_is_unrolled_per_layer():
    layers = [l for l in _layers("nn.LSTM/layers2_bidirectional_bf_b1") if l.type == "LSTM"]
    assert len(layers) == 2 and all(l.params[2] == 2 for l in layers)
    assert layers[0].params[1] == 2 * 4 * 8 * 6 and layers[1].params[1] == 2 * 4 * 8 * 16


BATCHLESS = {
    # inputs with dim 0 other than 1: every dim is carried (ncnn batch index 233)
    "mm": (lambda a, b: torch.mm(a, b), [(4, 6), (6, 5)]),
    "relu_sum": (lambda a: torch.relu(a).sum(dim=1), [(3, 5, 7)]),
    "cat_permute": (lambda a, b: torch.cat([a, b], dim=0).permute(2, 0, 1), [(2, 3, 4), (3, 3, 4)]),
    "repeat": (lambda a: a.repeat(2, 1, 3), [(2, 3, 4)]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0), [(4, 5), (4, 6), (6, 5)]),
    # a (1, 4) input among inputs whose dim 0 is data: its 1 is data too, not a batch of 1
    "cat_row_among_rows": (lambda a, b, c: torch.cat([a, b, c], dim=0), [(2, 4), (1, 4), (3, 4)]),
    "add_row_to_rows": (lambda a, b: torch.cat([a, b], dim=0) * (b + a[:1]), [(3, 4), (1, 4)]),
    # batch-1 input, batch folded into dim 0 by a reshape, then shape-following operators
    "flatten_all_relu": (lambda a: torch.relu(torch.flatten(a)), [(1, 3, 4, 4)]),
    "squeeze_sum": (lambda a: torch.squeeze(a).sum(dim=0, keepdim=True), [(1, 3, 1, 8)]),
    # full reductions: a 0-d result is a 1-element blob
    "max_all": (lambda a: torch.max(a), [(1, 3, 4, 4)]),
    "mean_all": (lambda a: a.mean(), [(1, 3, 4, 4)]),
    "embedding_2d": (None, [(2, 5)]),
    "diag_vec": (lambda a: torch.diag(a, 1), [(4,)]),
    "diag_mat": (lambda a: torch.diag(a, -1), [(5, 6)]),
    "slice_scatter": (lambda a, b: torch.slice_scatter(a, b, 0, 2, 4), [(6, 4), (2, 4)]),
}


def _batchless_model(name):
    fn, shapes = BATCHLESS[name]
    torch.manual_seed(0)
    if fn is None:
        return torch.nn.Embedding(10, 4).eval(), [torch.randint(0, 10, shapes[0])]
    return Fn(fn), [torch.rand(s) for s in shapes]


@pytest.mark.parametrize("name", sorted(BATCHLESS))
def test_batchless_and_folded_batch_graphs_match_torch(name, tmp_path):
    from pnnx_reference.api import capture

    model, inputs = _batchless_model(name)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    generated = runpy.run_path(f"{base}_ncnn.py")["test_inference"]()  # feeds the blobs without a batch axis
    assert generated.numel() == expected.size
    (out,) = run_ncnn(base, inputs)  # the conformance backend feeds them as _ncnn.py declares
    assert out.size == expected.size
    assert [d for d in out.shape if d != 1] == [d for d in expected.shape if d != 1]
    assert_close([out.reshape(expected.shape)], [expected], tolerance(1e-4, 1e-4, "fp32"))


def test_integer_activation_is_refused(tmp_path):
    """A lowering not registered as exact on integers (int_operands) refuses them."""
    g = _graph([1, 3, 8], ("nn.Sigmoid", {}))
    for operand in g.operands:
        operand.dtype = "i64"
    message = _expect_unsupported(g, tmp_path)
    assert "nn.Sigmoid (op_0)" in message and "i64: ncnn blobs hold floats only" in message


class _RnnWithStates(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.m = getattr(torch.nn, kind)(4, 8)

    def forward(self, x):
        out = self.m(x)
        return (out[0], *out[1]) if isinstance(out[1], tuple) else out


@pytest.mark.parametrize("kind,shape", [("GRU", (5, 4)), ("LSTM", (5, 4)), ("GRU", (5, 1, 4)), ("LSTM", (5, 1, 4))])
def test_time_major_rnn_with_final_states(kind, shape, tmp_path):
    """batch_first=False with batch 1 on dim 1 (or unbatched), final states as extra outputs."""
    from pnnx_reference.api import capture

    torch.manual_seed(0)
    model, x = _RnnWithStates(kind).eval(), torch.rand(shape)
    with torch.no_grad():
        expected = [t.numpy() for t in model(x)]
    base = tmp_path / "m"
    write_ncnn(capture(model, (x,)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    # dim 0 is time: an unbatched sequence is fed whole, a batched one with dim 1 as the Mat batch
    assert declared_batch_indices(f"{base}_ncnn.py")["in0"] == (NO_BATCH if len(shape) == 2 else 1)
    got = run_ncnn(base, [x])
    for g, e in zip(got, expected):
        assert [d for d in g.shape if d != 1] == [d for d in e.shape if d != 1]
    assert_close([g.reshape(e.shape) for g, e in zip(got, expected)], expected, tolerance(1e-4, 1e-4, "fp32"))
