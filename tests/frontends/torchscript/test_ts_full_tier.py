"""Issue 19 on the full tier: traced models the `.pt` door stopped on or wrote otherwise than
the Python door. Masked attention modules (masks given by name, causal masks that tracing
drops for `is_causal`), F.embedding with max_norm (an in-place renorm before the lookup), and
batch-norm statistics held as plain tensors by the generated `_pnnx.py` (a trace of it made
them nameless constants)."""
import io
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from param_lines import normalised_param
from pnnx_reference.api import capture, export
from pnnx_reference.frontends.torchscript import rebuild


def traced(model, inputs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        script = torch.jit.trace(model.eval(), tuple(inputs), check_trace=False)
        buffer = io.BytesIO()
        torch.jit.save(script, buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


def both_doors(model, inputs):
    """(Python-door pnnx.param lines, .pt-door lines, the .pt-door graph)."""
    python_graph = capture(model, tuple(inputs))
    pt_graph = capture(rebuild(traced(model, inputs)), tuple(inputs))
    return normalised_param(python_graph), normalised_param(pt_graph), pt_graph


def _causal(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


class EncoderLayerCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)

    def forward(self, x):
        return self.m(x, src_mask=_causal(5), is_causal=True)


class EncoderMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2,
                                       enable_nested_tensor=False)

    def forward(self, x):
        return self.m(x, mask=_causal(5))


class EncoderLayerPadding(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.m(x, src_key_padding_mask=torch.arange(5).unsqueeze(0) >= torch.tensor([[5], [3]]))


class EncoderLayerSrcMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)

    def forward(self, x):
        mask = torch.zeros(5, 5)
        mask[:, -1] = float("-inf")
        return self.m(x, src_mask=mask)


class DecoderLayerMemoryMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)

    def forward(self, x, memory):
        mask = torch.zeros(4, 5)
        mask[:, -1] = float("-inf")
        return self.m(x, memory, memory_mask=mask)


class DecoderCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0), 2)

    def forward(self, x, memory):
        return self.m(x, memory, tgt_mask=_causal(4))


class TransformerCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.Transformer(8, 2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16, dropout=0.0)

    def forward(self, src, tgt):
        return self.m(src, tgt, tgt_mask=_causal(4))


class AttentionPadding(nn.Module):
    """The mask is the traced forward's first input (tracing orders inputs by first use)."""

    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        y = self.m(x, x, x, key_padding_mask=torch.arange(5).unsqueeze(0) >= torch.tensor([[5], [3]]))
        return y[0], y[1]


def _seq(*shape, seed=0):
    torch.manual_seed(seed)
    return torch.rand(shape) * 2 - 1


MASKED = [
    (EncoderLayerCausal, [(5, 2, 8)], "nn.TransformerEncoderLayer"),
    (EncoderMask, [(5, 2, 8)], "nn.TransformerEncoderLayer"),
    (EncoderLayerPadding, [(2, 5, 8)], "nn.TransformerEncoderLayer"),
    (EncoderLayerSrcMask, [(5, 2, 8)], "nn.TransformerEncoderLayer"),
    (DecoderLayerMemoryMask, [(4, 2, 8), (5, 2, 8)], "nn.TransformerDecoderLayer"),
    (DecoderCausal, [(4, 2, 8), (5, 2, 8)], "nn.TransformerDecoderLayer"),
    (TransformerCausal, [(5, 2, 8), (4, 2, 8)], "nn.Transformer"),
    (AttentionPadding, [(2, 5, 8)], "nn.MultiheadAttention"),
]


@pytest.mark.parametrize("cls, shapes, kept", MASKED, ids=[m[0].__name__ for m in MASKED])
def test_masked_attention_modules_are_kept_whole_as_on_the_python_door(cls, shapes, kept):
    torch.manual_seed(0)
    model = cls().eval()
    inputs = [_seq(*s, seed=i) for i, s in enumerate(shapes)]
    python_lines, pt_lines, pt_graph = both_doors(model, inputs)
    assert kept in [op.type for op in pt_graph.ops]
    assert pt_lines == python_lines


def test_a_causal_mask_tracing_dropped_is_given_back_by_name():
    """TransformerEncoderLayer(is_causal=True) is traced as attention with is_causal and no
    mask: the module is called with a causal mask of its own, as the source named it."""
    torch.manual_seed(0)
    x = _seq(5, 2, 8)
    model = EncoderLayerCausal().eval()
    graph = capture(rebuild(traced(model, [x])), (x,))
    (layer,) = [op for op in graph.ops if op.type == "nn.TransformerEncoderLayer"]
    assert layer.inputnames == ["src", "src_mask"]
    with torch.no_grad():
        torch.testing.assert_close(rebuild(traced(model, [x]))(x), model(x))


class EmbeddingMaxNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(10, 16) * 2 - 1)

    def forward(self, x):
        return F.embedding(x, self.w, max_norm=1.0)


def test_embedding_max_norm_is_one_call_with_max_norm():
    """F.embedding(max_norm=) is traced as x.contiguous(), embedding_renorm_ on the weight,
    then the lookup: one F.embedding with max_norm again, as the Python door writes it."""
    torch.manual_seed(0)
    x = torch.randint(0, 10, (4, 4))
    python_lines, pt_lines, pt_graph = both_doors(EmbeddingMaxNorm(), [x])
    (embedding,) = [op for op in pt_graph.ops if op.type == "F.embedding"]
    assert embedding.params["max_norm"] == 1.0 and embedding.params["norm_type"] == 2.0
    assert pt_lines == python_lines


class BatchNormStats(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("rm", torch.rand(3) - 0.5)
        self.register_buffer("rv", torch.rand(3) + 0.5)

    def forward(self, x):
        return F.batch_norm(x, self.rm, self.rv)


def test_generated_batch_norm_statistics_stay_named_through_a_trace(tmp_path):
    """The statistics are buffers of the generated model (as of the original): a trace of
    `_pnnx.py` reads them as attributes, so converting its .pt again keeps their names."""
    import importlib.util

    torch.manual_seed(0)
    x = torch.rand(1, 3, 4, 4)
    export(BatchNormStats().eval(), [x], tmp_path, "bn")
    spec = importlib.util.spec_from_file_location("bn_pnnx", tmp_path / "bn_pnnx.py")
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    model = generated.Model().eval()
    assert {"rm", "rv"} <= dict(model.named_buffers()).keys()
    graph = capture(rebuild(traced(model, [x])), (x,))
    assert {op.name for op in graph.ops if op.type == "pnnx.Attribute"} == {"rm", "rv"}


class Gumbel(nn.Module):
    def forward(self, x):
        return F.gumbel_softmax(x, tau=0.5, dim=-1)


def test_gumbel_noise_is_drawn_on_every_run_not_frozen():
    """F.gumbel_softmax is traced as noise drawn like x (empty_like, exponential_, log, neg)
    then softmax((x + noise) / tau): one random call again, never the trace's noise as a
    constant (which the constant folding made of it)."""
    x = torch.rand(2, 10)
    graph = capture(rebuild(traced(Gumbel(), [x])), (x,))
    assert [op.type for op in graph.ops] == ["pnnx.Input", "F.gumbel_softmax", "pnnx.Output"]
    assert graph.ops[1].params["tau"] == 0.5 and graph.ops[1].params["dim"] == -1


class UnbatchedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(6, 3, 3))

    def forward(self, x):
        return F.conv1d(x, self.w, padding=1)


def test_an_unbatched_convolution_is_one_call():
    """An unbatched F.conv1d is traced as unsqueeze(0), the batched call, squeeze(0)."""
    torch.manual_seed(0)
    x = torch.rand(3, 10)
    python_lines, pt_lines, pt_graph = both_doors(UnbatchedConv().eval(), [x])
    assert not {"torch.unsqueeze", "torch.squeeze"} & {op.type for op in pt_graph.ops}
    assert pt_lines == python_lines


class ConstantOutput(nn.Module):
    def forward(self, x):
        return torch.tensor(3.0)


def test_a_models_own_scalar_tensor_stays_a_tensor():
    """`torch.tensor(3.0)` is traced as a 0-d constant (then to + detach): a tensor of the
    model, not a traced Python scalar; returned, it is the model's output."""
    x = torch.rand(2, 3)
    graph = capture(rebuild(traced(ConstantOutput(), [x])), (x,))
    assert [op.type for op in graph.ops] == ["pnnx.Input", "pnnx.Attribute", "pnnx.Output"]


class InplaceDropout(nn.Module):
    def forward(self, x):
        return F.dropout(x * 1.5, 0.3, training=False, inplace=True)


class TwoSteps(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.LSTMCell(4, 6)

    def forward(self, x0, x1):
        h, c = self.m(x0)
        return self.m(x1, (h, c))


class SplitSizes(nn.Module):
    def forward(self, x):
        return x.split([2, 3, 1], -1)


class RealOfReal(nn.Module):
    def forward(self, x):
        return torch.real(x)


@pytest.mark.parametrize("cls, shapes", [(InplaceDropout, [(2, 5)]), (TwoSteps, [(3, 4), (3, 4)]),
                                         (SplitSizes, [(1, 4, 6)]), (RealOfReal, [(2, 5)])],
                         ids=["dropout_inplace", "lstmcell_twice", "split_sizes", "real_of_real"])
def test_more_calls_as_the_python_door_writes_them(cls, shapes):
    """aten::dropout_ names its tensor `self`; the second call of a shared module is traced as
    its `forward1`, checked against that method; x.split([..]) is aten split_with_sizes;
    torch.real of a real tensor is one call (no property read recorded on the way)."""
    torch.manual_seed(0)
    inputs = [_seq(*s, seed=i) for i, s in enumerate(shapes)]
    python_lines, pt_lines, _ = both_doors(cls().eval(), inputs)
    assert pt_lines == python_lines


class ZeroAttn(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, add_zero_attn=True)

    def forward(self, q, k, v):
        return self.m(q, k, v)


def test_add_zero_attn_is_read_from_the_graph():
    """nn.MultiheadAttention(add_zero_attn=True): no state tells the flag; the zero key/value
    row the forward concatenates does, so the module is rebuilt whole."""
    torch.manual_seed(0)
    model = ZeroAttn().eval()
    x = _seq(5, 2, 8)
    rebuilt = rebuild(traced(model, [x, x, x]))
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(x, x, x), model(x, x, x))
    op = next(op for op in capture(rebuilt, (x, x, x)).ops if op.type == "nn.MultiheadAttention")
    assert op.params["add_zero_attn"] is True


class PatchedReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = nn.ReLU()
        self.m.forward = lambda x: x * 2 + 1  # the class says ReLU, the trace says otherwise

    def forward(self, x):
        return self.m(x)


def test_a_module_that_cannot_be_rebuilt_is_replayed_from_its_own_graph():
    """A standard module whose forward was replaced: the rebuilt nn.ReLU does not reproduce
    the traced one, so its own graph is replayed instead."""
    model = PatchedReLU().eval()
    x = _seq(5, 2, 8)
    rebuilt = rebuild(traced(model, [x]))
    with torch.no_grad():
        torch.testing.assert_close(rebuilt(x), model(x))
    graph = capture(rebuilt, (x,))
    assert "nn.ReLU" not in {op.type for op in graph.ops}


class UnevenChunks(nn.Module):
    def forward(self, x):
        return torch.chunk(x, 3, dim=-1)


def test_a_file_torch_cannot_restore_shapes_of_converts_without_inputshape(tmp_path):
    """torch.jit.load(_restore_shapes=True) aborts the process on this graph (uneven
    chunks); the recorded input shapes are read from traced_inputs.pkl instead."""
    import subprocess
    import sys

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.trace(UnevenChunks(), (torch.rand(2, 4, 13),)).save(str(tmp_path / "m.pt"))
    done = subprocess.run([sys.executable, "-m", "pnnx_reference.cli", "m.pt"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "#0=(2,4,13)f32" in (tmp_path / "m.pnnx.param").read_text()


class SoftminF64(nn.Module):
    def forward(self, x):
        return F.softmin(x, dim=1, dtype=torch.float64)


def test_softmin_with_a_dtype_reads_the_scalar_type_code():
    """TorchScript keeps softmax's dtype as its ScalarType code (7): the softmin fusion gives
    torch.float64 back, and the .pt door writes what the Python door writes."""
    x = torch.rand(2, 5)
    python_lines, pt_lines, pt_graph = both_doors(SoftminF64(), [x])
    (softmin,) = [op for op in pt_graph.ops if op.type == "F.softmin"]
    assert softmin.params["dtype"] == "torch.double"  # how the Python door writes it too
    assert pt_lines == python_lines
