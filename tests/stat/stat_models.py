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


class TanhInside(nn.Module):
    """tanh inside arithmetic, of a broadcast operand, and used twice (issue 33 item 19): upstream
    keeps F.tanh as an operator where we fold it into the expression."""

    def forward(self, x, y):
        t = torch.tanh(x * 0.5 + y)
        return t * t + torch.tanh(y * 2) - torch.tanh(x) * 3


class Transcendental(nn.Module):
    """The expression's other unary functions, each counted as upstream's expression counts it."""

    def forward(self, x):
        return (torch.tan(x) + torch.asin(x * 0.5) + torch.acos(x * 0.5) + torch.atan(x) + torch.sinh(x)
                + torch.cosh(x) + torch.asinh(x) + torch.acosh(x + 1) + torch.atanh(x * 0.5) + torch.erf(x)
                + torch.log10(x + 1) + torch.expm1(x) + torch.log1p(x) + torch.abs(x).floor().ceil().round()
                + torch.reciprocal(x + 1).square().sign().trunc() - x.neg() + torch.atan2(x, x + 1))


class Statistics(nn.Module):
    """var, std, logsumexp and torch.norm of every kind of p (issue 33 item 19)."""

    def forward(self, x):
        return (torch.var(x, dim=1, keepdim=True), torch.std(x, dim=(0, 2)), torch.logsumexp(x, dim=2),
                torch.norm(x, dim=(0, 1)), torch.norm(x, p=1, dim=1), torch.norm(x, p=float("inf"), dim=2),
                torch.norm(x, p=float("-inf"), dim=0), torch.norm(x, p=3, dim=1), torch.norm(x, p=0, dim=2),
                torch.norm(x, p=1.5, dim=1), torch.norm(x, p=2.0, dim=1))


MODELS = {
    "statistics": (Statistics, [(4, 5, 7)]),
    "tanh_inside": (TanhInside, [(1, 3, 8, 8), (1, 3, 1, 8)]),
    "transcendental": (Transcendental, [(1, 3, 8, 8)]),
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


# --- the models of upstream's own statistics test (ncnn tools/pnnx/tests/test_pnnx_model_stat.py),
# rewritten: test_model_stat.py pins the numbers that test expects, which the pinned pnnx prints
class UpstreamNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.prelu = nn.PReLU(6)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(24, 8)
        self.norm = nn.LayerNorm(8)
    def forward(self, x):
        x = self.prelu(F.relu(self.bn(self.conv(x))))
        x = F.adaptive_avg_pool2d(F.interpolate(F.avg_pool2d(x, 2), scale_factor=2, mode="nearest"), (4, 4))
        x = F.gelu(self.norm(self.fc(torch.flatten(self.pool(x), 1)))).reshape(1, 2, 4)
        return F.pad(F.softmax(torch.matmul(x, x.transpose(-1, -2)), dim=-1), (1, 1))

class UpMultiInput(nn.Module):
    def forward(self, x, y, w, b):
        return F.relu(torch.matmul(x + y, w) + b)

class UpViews(nn.Module):
    def forward(self, x, y):
        return x.reshape(6), x.view(2, 3), x.permute(1, 0), x[:, 1:], torch.cat((x, y), 0), torch.clone(y)

class UpExpression(nn.Module):
    def forward(self, x):
        return torch.sin(x) + torch.cos(x) * torch.sqrt(torch.abs(x) + 1)

class UpAddmm(nn.Module):
    def forward(self, x, y, z):
        return torch.addmm(x, y, z)

class UpScaledAddmm(nn.Module):
    def forward(self, x, y, z, a, b, c):
        return torch.addmm(x, y, z, beta=0, alpha=0.7), torch.baddbmm(a, b, c, beta=1.4, alpha=0.7)

class UpUnbatchedConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(2, 3, 3, padding=1)
        self.c2 = nn.Conv2d(2, 3, 3, padding=1, bias=False)
        self.c3 = nn.Conv3d(1, 2, 3, padding=1, bias=False)
        self.d1 = nn.ConvTranspose1d(2, 3, 3, padding=1, bias=False)
    def forward(self, a, b, c, d):
        return self.c1(a), self.c2(b), self.c3(c), self.d1(d)

class UpNormNoAffine(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(4))
        self.register_buffer("var", torch.ones(4))
    def forward(self, x):
        x = F.group_norm(F.layer_norm(x, (3, 3)), 2)
        return F.batch_norm(x, self.mean, self.var, training=False)

class UpBatchNorm(nn.Module):
    def forward(self, x, m, v, w, b):
        return F.batch_norm(x, m, v, w, b, training=False)

class UpInstanceNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.InstanceNorm2d(4, affine=True)
        self.b = nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
    def forward(self, x):
        return self.a(x), self.b(x)

class UpMhaMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2)
    def forward(self, x, mask):
        return self.attn(x, x, x, attn_mask=mask, need_weights=False)[0]

class UpMhaUnbatched(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2)
    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]

class UpMhaExtra(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True)
    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]

class UpSdpa(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.kw = kw
    def forward(self, q, k, v, *mask):
        return F.scaled_dot_product_attention(q, k, v, *mask, **self.kw)

class UpNormalize(nn.Module):
    def forward(self, x):
        return F.normalize(x, p=2, dim=1)

class UpReductions(nn.Module):
    def forward(self, x):
        return (torch.mean(x, dim=1), torch.var(x, dim=1, unbiased=False), torch.std(x, dim=1, unbiased=False),
                torch.logsumexp(x, dim=1), torch.norm(x, p=2, dim=1))

class UpFused(nn.Module):
    def forward(self, a, b, c, d):
        return F.local_response_norm(a, 3), F.lp_pool2d(b, 2, 2, 2), F.pairwise_distance(c, d)

class UpFold(nn.Module):
    def forward(self, x):
        return F.fold(x, (3, 3), (2, 2))

class UpAdaptivePool(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, (3, 3))

class UpUpsample(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="nearest")

class UpLstmProj(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, proj_size=2, bias=False)
    def forward(self, x, h, c):
        y, (h, c) = self.lstm(x, (h, c))
        return y, h, c

class UpLstmUnbatched(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 4, bias=False)
    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


UPSTREAM_TEST_MODELS = {
    "up_net": (UpstreamNet, [(1, 3, 8, 8)]),
    "up_multi_input": (UpMultiInput, [(2, 3), (2, 3), (3, 4), (4,)]),
    "up_views": (UpViews, [(2, 3), (2, 3)]),
    "up_expression": (UpExpression, [(2, 3)]),
    "up_addmm": (UpAddmm, [(2, 4), (2, 3), (3, 4)]),
    "up_scaled_addmm": (UpScaledAddmm, [(2, 4), (2, 3), (3, 4), (2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "up_unbatched_conv": (UpUnbatchedConv, [(2, 5), (2, 4, 4), (1, 3, 3, 3), (2, 5)]),
    "up_norm_no_affine": (UpNormNoAffine, [(2, 4, 3, 3)]),
    "up_batch_norm": (UpBatchNorm, [(2, 4, 3, 3), (4,), (4,), (4,), (4,)]),
    "up_instance_norm": (UpInstanceNorm, [(2, 4, 3, 3)]),
    "up_mha_mask": (UpMhaMask, [(3, 1, 4), (3, 3)]),
    "up_mha_extra": (UpMhaExtra, [(3, 1, 4)]),
    "up_mha_unbatched": (UpMhaUnbatched, [(3, 4)]),
    "up_normalize": (UpNormalize, [(2, 3, 4)]),
    "up_reductions": (UpReductions, [(2, 3)]),
    "up_fused": (UpFused, [(1, 4, 2, 2), (1, 1, 4, 4), (2, 3), (2, 3)]),
    "up_fold": (UpFold, [(1, 4, 4)]),
    "up_adaptive_pool": (UpAdaptivePool, [(1, 1, 5, 5)]),
    "up_upsample": (UpUpsample, [(1, 1, 2, 2)]),
    "up_lstm_proj": (UpLstmProj, [(2, 1, 3), (1, 1, 2), (1, 1, 4)]),
    "up_lstm_unbatched": (UpLstmUnbatched, [(2, 3)]),
    "up_sdpa": (UpSdpa, [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5)]),
    "up_sdpa_mask": (UpSdpa, [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5), (1, 2, 3, 3)]),
    "up_sdpa_causal": (lambda: UpSdpa(is_causal=True), [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5)]),
}
MODELS.update(UPSTREAM_TEST_MODELS)
