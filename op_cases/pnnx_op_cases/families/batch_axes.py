"""Hand-written batch cases that batch_variants.py cannot derive: models with several inputs of
different ranks (some without a batch axis), batches above 1 into recurrent and attention
layers and their states, torch.stack along a batch, the batch-folding reshapes of windowed
attention and window partitions through rank-5 and rank-6 views (Swin-style vision networks),
affine_grid with a batch, and a full encoder-decoder Transformer with a batch."""
from __future__ import annotations

from ..builders import call_case, case_id, module_case, rand, render_source
from ..case import TIER_SMOKE, Case
from ..registry import family



def _call(*args, **kw):
    return call_case(*args, tags={"batched"}, **kw)


def _module(*args, **kw):
    return module_case(*args, tags={"batched"}, **kw)


@family("torch.add", "F.max_pool2d", "nn.Conv2d", "nn.Linear", "torch.matmul")
def several_ranks():
    """Inputs of ranks 1 to 4 in one model, batched and not, as ncnn users test them."""
    yield _call("torch.add", "ranks_1_2_3_4", "(x0 + x1, x2 * 2, x3.sum(2), torch.sigmoid(x1))",
                [rand(16), rand(2, 16), rand(3, 12, 16), rand(5, 7, 9, 11)], smoke=True)
    yield _call("torch.add", "batch3_plus_vector", "x0 + x1", [rand(3, 4, 5, 16), rand(16)])
    yield _call("F.max_pool2d", "unbatched_and_vector", "(F.max_pool2d(x0, 2), x1 * 2)",
                [rand(3, 12, 16), rand(16)])
    yield _call("F.max_pool2d", "batch4_and_matrix", "(F.max_pool2d(x0, 2), x1.t())",
                [rand(4, 3, 12, 16), rand(2, 16)])
    yield _module("nn.Conv2d", "batch3_bias_vector", "nn.Conv2d(4, 8, 3)", [rand(3, 4, 9, 10), rand(8)],
                  call="self.m(x0) + x1.view(8, 1, 1)")
    yield _module("nn.Conv2d", "batch2_and_unbatched", "nn.Conv2d(4, 8, 3)", [rand(2, 4, 9, 10), rand(4, 7, 8)],
                  call="(self.m(x0), self.m(x1))")
    yield _module("nn.Linear", "batch5_rows_and_vector", "nn.Linear(16, 8)", [rand(5, 7, 16), rand(16)],
                  call="(self.m(x0), self.m(x1))")
    yield _call("torch.matmul", "batch2_by_matrix", "torch.matmul(x0, x1)", [rand(2, 3, 5, 6), rand(6, 4)])


@family("nn.GRU", "nn.LSTM", "nn.RNN")
def recurrent_batches():
    """Batches above 1 into recurrent layers, with num_layers * directions > 1 hidden states."""
    yield _module("nn.GRU", "layers2_bidirectional_h0_b4", "nn.GRU(8, 16, num_layers=2, bidirectional=True)",
                  [rand(4, 5, 8), rand(4, 5, 16)], call="self.m(x0, x1)", ret=("y[0]", "y[1]"), smoke=True)
    yield _module("nn.LSTM", "batch_first_b32", "nn.LSTM(8, 16, batch_first=True)", [rand(32, 7, 8)],
                  ret=("y[0]", "y[1][0]", "y[1][1]"), smoke=True)
    yield _module("nn.LSTM", "layers3_h0_c0_b3", "nn.LSTM(6, 8, num_layers=3)",
                  [rand(5, 3, 6), rand(3, 3, 8), rand(3, 3, 8)], call="self.m(x0, (x1, x2))",
                  ret=("y[0]", "y[1][0]", "y[1][1]"))
    yield _module("nn.RNN", "bidirectional_b5_bf", "nn.RNN(4, 8, bidirectional=True, batch_first=True)",
                  [rand(5, 6, 4)], ret=("y[0]", "y[1]"), smoke=True)


@family("torch.stack")
def stack_batches():
    """torch.stack of batch-2 tensors: along the batch, and inside each sample."""
    yield _call("torch.stack", "batch2_dim0", "torch.stack((x0, x1), 0) + 1", [rand(2, 3, 4), rand(2, 3, 4)],
                smoke=True)
    yield _module("torch.stack", "conv_batch2_dim1", "nn.Conv2d(3, 4, 3)", [rand(2, 3, 6, 7), rand(2, 3, 6, 7)],
                  call="torch.stack((self.m(x0), self.m(x1)), 1)")


# Swin-style windows: (B, H, W, C) -> (B * nW, ws * ws, C) windows and back
_PARTITION = ["b, h, w, c = x0.shape",
              "x = x0.view(b, h // {ws}, {ws}, w // {ws}, {ws}, c)",
              "x = x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, {ws} * {ws}, c)"]
_REVERSE = ["y = y.view(b, h // {ws}, w // {ws}, {ws}, {ws}, c)",
            "y = y.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, c)"]
_ATTENTION = ["n = x.shape[1]",
              "qkv = self.qkv(x).reshape(-1, n, 3, {heads}, c // {heads}).permute(2, 0, 3, 1, 4)",
              "q, k, v = qkv[0], qkv[1], qkv[2]",
              "{scores}",
              "a = a.softmax(dim=-1)",
              "y = (a @ v).transpose(1, 2).reshape(-1, n, c)",
              "y = self.proj(y)"]
_DOT = "a = (q * {scale}) @ k.transpose(-2, -1)"
_COSINE = "a = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1) * 10.0"


def _windowed(op, variant, batch, lines, c, smoke):
    """The attention block as a module with its two Linear layers."""
    init = [f"self.qkv = nn.Linear({c}, {3 * c})", f"self.proj = nn.Linear({c}, {c})"]
    source = render_source(init, 1, [*lines, "return y"])
    tags = {"batched"} | ({TIER_SMOKE} if smoke else set())
    return Case(id=case_id(op, variant), op=op, source=source, inputs=(rand(batch, 8, 8, c),), tags=frozenset(tags))


@family("Tensor.view", "Tensor.reshape", "F.normalize", "F.scaled_dot_product_attention")
def windows():
    """Window partitions through rank-5 and rank-6 views and batch-folding reshapes of windowed
    attention (Swin and Swin V2's cosine attention). The views are those of real networks,
    (1, 8, 7, 8, 7, 96) and (64, 16, 2, 16, 2), with fewer channels (inputs stay small)."""
    yield _call("Tensor.view", "window_partition_r6", "x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, 7, 7, c)",
            [rand(1, 56, 56, 4)], pre=[line.format(ws=7) for line in _PARTITION[:2]], smoke=True)
    yield _call("Tensor.reshape", "window_partition_r5", "x.permute(0, 1, 3, 2, 4).reshape(8, 16, 16, 4) * 2",
            [rand(1, 8, 32, 32)], pre="x = x0.reshape(8, 16, 2, 16, 2)", smoke=True)
    yield _call("Tensor.view", "window_roundtrip_r6_b2", "y.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, c)",
                [rand(2, 8, 8, 16)],
                pre=[line.format(ws=4) for line in _PARTITION] + ["y = (x * 2).view(b, h // 4, w // 4, 4, 4, c)"])
    yield _windowed("Tensor.view", "window_attention_b2", 2, _lines(_DOT), 16, smoke=False)
    yield _windowed("F.scaled_dot_product_attention", "window_attention_b1", 1, _lines(_DOT), 16, smoke=False)
    yield _windowed("F.normalize", "cosine_window_attention_b2", 2, _lines(_COSINE), 16, smoke=True)


def _lines(scores: str) -> list[str]:
    ws, heads, c = 4, 2, 16
    return [line.format(ws=ws, heads=heads, scores=scores.format(scale=(c // heads) ** -0.5))
            for line in (*_PARTITION, *_ATTENTION, *_REVERSE)]


@family("F.affine_grid")
def affine_grids():
    """affine_grid with a batch of transforms, alone and feeding grid_sample."""
    yield _call("F.affine_grid", "r4_b3", "F.affine_grid(x0, [3, 4, 5, 6], align_corners=False)",
                [rand(3, 2, 3)], smoke=True)
    yield _call("F.affine_grid", "r4_b2_then_sample",
                "F.grid_sample(x0, F.affine_grid(x1, [2, 3, 6, 8], align_corners=True), align_corners=True)",
                [rand(2, 3, 6, 8), rand(2, 2, 3, low=-0.8, high=0.8)])


E, HEADS, FF = 8, 2, 16


@family("nn.Transformer")
def transformer_batches():
    """A full encoder-decoder with a batch, batch-first and sequence-first."""
    base = (f"nn.Transformer({E}, {HEADS}, num_encoder_layers=2, num_decoder_layers=2, "
            f"dim_feedforward={FF}, dropout=0.0")
    yield _module("nn.Transformer", "l2_bf_b3", f"{base}, batch_first=True)", [rand(3, 5, E), rand(3, 4, E)],
                      call="self.m(x0, x1)")
    yield _module("nn.Transformer", "l2_b2_causal", f"{base})", [rand(5, 2, E), rand(4, 2, E)],
                      pre="m0 = torch.triu(torch.full((4, 4), float('-inf')), diagonal=1)",
                      call="self.m(x0, x1, tgt_mask=m0)")
