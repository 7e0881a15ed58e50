"""Small models whose statistics upstream `pnnx` printed for us (numbers pinned in
test_model_stat.py, re-measured live by its slow test): MODELS maps a name to (model factory,
input shapes)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 8, 3, groups=8, padding=1), nn.Hardswish(),
                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5))

    def forward(self, x):
        return self.body(x)


class SqueezeExcite(nn.Module):
    def __init__(self):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        s = torch.sigmoid(self.expand(F.silu(self.reduce(s))))
        return x * s + F.interpolate(x, scale_factor=2, mode="bilinear")[..., ::2, ::2]


class Mixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)

    def forward(self, x, y):
        a = F.gelu(self.norm(x)).softmax(-1)
        b = torch.cat([F.pixel_shuffle(self.up(y), 2)[:, :, ::2, ::2], F.pad(y, (2, 2, 2, 2)).repeat(1, 2, 1, 1)], 1)
        return a.sum(-1), b.mean((2, 3))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).reshape(2, 6, 3, 4, 4).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True) + torch.matmul(q, k.transpose(-1, -2)) @ v


class Wrapped(nn.Module):
    """A module called from a model, as users have them (upstream counts a recurrent or
    attention module it finds at the top of a trace differently)."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, *xs):
        return self.inner(*xs)


class AddMatmul(nn.Module):
    """torch.addmm and torch.baddbmm with and without scales (issue 33 item 19)."""

    def forward(self, a, b, c, d, e, f):
        return (torch.addmm(a, b, c, beta=0.5, alpha=2.0), torch.addmm(a, b, c),
                torch.baddbmm(d, e, f, alpha=3.0), torch.baddbmm(d, e, f, beta=0.0))


class Functions(nn.Module):
    """One pnnx.Expression holding the functions upstream counts 4 operations for (issue 33 item 19)."""

    def forward(self, x):
        return (x * 2 + 1) / 3 - torch.sqrt(x) + x.pow(2) + torch.exp(x) + torch.log(x) * x.rsqrt() + torch.sin(x)


MODELS = {
    "functions": (Functions, [(1, 3, 8, 8)]),
    "add_matmul": (AddMatmul, [(4, 5), (4, 6), (6, 5), (2, 4, 5), (2, 4, 6), (2, 6, 5)]),
    "cnn": (Cnn, [(1, 3, 16, 16)]),
    "squeeze_excite": (SqueezeExcite, [(1, 8, 6, 6)]),
    "mixer": (Mixer, [(2, 5, 16), (1, 4, 4, 4)]),
    "attention": (Attention, [(2, 6, 16)]),
    "encoder_layer": (lambda: nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), [(2, 7, 16)]),
    "decoder_layer": (lambda: Wrapped(nn.TransformerDecoderLayer(16, 2, 24, activation="gelu", norm_first=True)),
                      [(5, 1, 16), (3, 1, 16)]),
    "gru": (lambda: Wrapped(nn.GRU(8, 12, num_layers=2, bidirectional=True)), [(5, 1, 8)]),
    "lstm_proj": (lambda: Wrapped(nn.LSTM(8, 12, proj_size=4, batch_first=True)), [(1, 6, 8)]),
    "multihead": (lambda: Wrapped(nn.MultiheadAttention(16, 2, batch_first=True)), [(1, 5, 16)] * 3),
}
