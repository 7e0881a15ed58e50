"""Small torch modules, one or a few per lowered operator family. Each case is rebuilt from a
fixed seed, so the stored upstream pnnx graphs (fixtures/) match the module exactly."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class Fn(nn.Module):
    """Wraps a function of the inputs (and optionally of learned constants)."""

    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            setattr(self, k, nn.Parameter(v, requires_grad=False))

    def forward(self, *xs):
        return self.fn(self, *xs)


def seq(*mods):
    return nn.Sequential(*mods)


IMG = [(1, 8, 12, 12)]
SEQ1D = [(1, 6, 20)]
VOL = [(1, 4, 6, 8, 8)]

# name -> (family, factory, input shapes[, input dtype])
CASES = {
    # conv
    "conv2d": ("conv", lambda: seq(nn.Conv2d(8, 16, 3, padding=1)), IMG),
    "conv2d_stride_dilation": ("conv", lambda: seq(nn.Conv2d(8, 4, (3, 5), stride=(2, 1), dilation=2, bias=False)), IMG),
    "conv2d_groups": ("conv", lambda: seq(nn.Conv2d(8, 16, 3, groups=4, padding=2)), IMG),
    "conv2d_depthwise_relu": ("conv", lambda: seq(nn.Conv2d(8, 8, 3, groups=8), nn.ReLU()), IMG),
    "conv2d_same": ("conv", lambda: seq(nn.Conv2d(8, 6, 3, padding="same")), IMG),
    "conv2d_reflect": ("conv", lambda: seq(nn.Conv2d(8, 6, 3, padding=1, padding_mode="reflect")), IMG),
    "conv2d_pad_fold": ("conv", lambda: seq(nn.ZeroPad2d((1, 2, 0, 1)), nn.Conv2d(8, 6, 3)), IMG),
    "conv1d": ("conv", lambda: seq(nn.Conv1d(6, 8, 3, padding=1), nn.LeakyReLU(0.1)), SEQ1D),
    "conv1d_depthwise": ("conv", lambda: seq(nn.Conv1d(6, 6, 5, groups=6, stride=2)), SEQ1D),
    "conv3d": ("conv", lambda: seq(nn.Conv3d(4, 6, 3, padding=1)), VOL),
    "conv3d_depthwise": ("conv", lambda: seq(nn.Conv3d(4, 4, 3, groups=4)), VOL),
    "convtranspose2d": ("conv", lambda: seq(nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)), IMG),
    "convtranspose2d_groups": ("conv", lambda: seq(nn.ConvTranspose2d(8, 4, 3, stride=2, groups=2)), IMG),
    "convtranspose1d": ("conv", lambda: seq(nn.ConvTranspose1d(6, 3, 4, stride=2)), SEQ1D),
    "convtranspose3d": ("conv", lambda: seq(nn.ConvTranspose3d(4, 2, 3, stride=2)), VOL),
    "conv2d_sigmoid": ("conv", lambda: seq(nn.Conv2d(8, 4, 1), nn.Sigmoid()), IMG),
    "conv2d_relu6": ("conv", lambda: seq(nn.Conv2d(8, 4, 1), nn.ReLU6()), IMG),
    # linear
    "linear": ("linear", lambda: seq(nn.Linear(10, 6), nn.ReLU()), [(1, 10)]),
    "linear_3d": ("linear", lambda: seq(nn.Linear(10, 6, bias=False)), [(1, 5, 10)]),
    "linear_4d": ("linear", lambda: seq(nn.Linear(10, 6)), [(1, 3, 5, 10)]),
    "matmul": ("linear", lambda: Fn(lambda s, a, b: torch.matmul(a, b)), [(1, 4, 6), (1, 6, 5)]),
    "matmul_const": ("linear", lambda: Fn(lambda s, a: torch.matmul(a, s.w), w=torch.rand(6, 3)), [(1, 4, 6)]),
    "embedding": ("linear", lambda: seq(nn.Embedding(20, 8)), [(1, 7)], torch.int64),
    # norm
    "batchnorm2d": ("norm", lambda: _bn(nn.BatchNorm2d(8)), IMG),
    "batchnorm1d": ("norm", lambda: _bn(nn.BatchNorm1d(6)), SEQ1D),
    "batchnorm1d_2d": ("norm", lambda: _bn(nn.BatchNorm1d(10)), [(1, 10)]),
    "layernorm": ("norm", lambda: seq(nn.LayerNorm(12)), [(1, 5, 12)]),
    "layernorm_2dims": ("norm", lambda: seq(nn.LayerNorm((12, 12))), IMG),
    "layernorm_noaffine": ("norm", lambda: seq(nn.LayerNorm(12, elementwise_affine=False)), [(1, 5, 12)]),
    "groupnorm": ("norm", lambda: seq(nn.GroupNorm(4, 8)), IMG),
    "instancenorm2d": ("norm", lambda: seq(nn.InstanceNorm2d(8, affine=True)), IMG),
    "instancenorm2d_plain": ("norm", lambda: seq(nn.InstanceNorm2d(8)), IMG),
    # activations
    **{f"act_{m.__class__.__name__.lower()}": ("activation", (lambda m=m: seq(m)), [(1, 6, 7, 9)]) for m in [
        nn.ReLU(), nn.LeakyReLU(0.2), nn.ReLU6(), nn.Hardtanh(-0.5, 0.7), nn.Sigmoid(), nn.Tanh(), nn.SiLU(),
        nn.Mish(), nn.GELU(), nn.ELU(0.5), nn.SELU(), nn.CELU(1.5), nn.Hardswish(), nn.Hardsigmoid(),
        nn.Softplus(), nn.Hardshrink(0.3), nn.Softshrink(0.3), nn.LogSigmoid(), nn.PReLU(6)]},
    "act_gelu_tanh": ("activation", lambda: seq(nn.GELU(approximate="tanh")), [(1, 6, 7, 9)]),
    "act_clamp": ("activation", lambda: Fn(lambda s, x: torch.clamp(x, min=0.2)), [(1, 6, 7, 9)]),
    "softmax": ("activation", lambda: seq(nn.Softmax(dim=1)), [(1, 6, 7, 9)]),
    "softmax_last": ("activation", lambda: Fn(lambda s, x: F.softmax(x, dim=-1)), [(1, 5, 9)]),
    "log_softmax": ("activation", lambda: seq(nn.LogSoftmax(dim=2)), [(1, 6, 7, 9)]),
    "glu": ("activation", lambda: seq(nn.GLU(dim=1)), [(1, 6, 7, 9)]),
    "dropout_identity": ("activation", lambda: seq(nn.Dropout(0.5), nn.Identity(), nn.ReLU()), [(1, 6, 7)]),
    # pooling
    "maxpool2d": ("pool", lambda: seq(nn.MaxPool2d(3, stride=2, padding=1)), IMG),
    "maxpool2d_ceil": ("pool", lambda: seq(nn.MaxPool2d(2, ceil_mode=True)), [(1, 4, 11, 11)]),
    "avgpool2d": ("pool", lambda: seq(nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)), IMG),
    "avgpool2d_pad": ("pool", lambda: seq(nn.AvgPool2d(2, padding=1)), IMG),
    "maxpool1d": ("pool", lambda: seq(nn.MaxPool1d(3, stride=2)), SEQ1D),
    "avgpool1d": ("pool", lambda: seq(nn.AvgPool1d(4)), SEQ1D),
    "maxpool3d": ("pool", lambda: seq(nn.MaxPool3d(2)), VOL),
    "avgpool3d": ("pool", lambda: seq(nn.AvgPool3d(2, stride=1)), VOL),
    "adaptive_avgpool2d": ("pool", lambda: seq(nn.AdaptiveAvgPool2d((3, 4))), IMG),
    "adaptive_maxpool2d": ("pool", lambda: seq(nn.AdaptiveMaxPool2d(3)), IMG),
    "adaptive_avgpool1d": ("pool", lambda: seq(nn.AdaptiveAvgPool1d(5)), SEQ1D),
    "global_avgpool_flatten": ("pool", lambda: seq(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3)), IMG),
    "global_maxpool": ("pool", lambda: seq(nn.AdaptiveMaxPool2d(1)), IMG),
    # resize and shuffles
    "upsample_nearest": ("resize", lambda: seq(nn.Upsample(scale_factor=2, mode="nearest")), IMG),
    "upsample_bilinear": ("resize", lambda: seq(nn.Upsample(size=(17, 20), mode="bilinear")), IMG),
    "upsample_bilinear_ac": ("resize", lambda: seq(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)), IMG),
    "interpolate_bicubic": ("resize", lambda: Fn(lambda s, x: F.interpolate(x, size=(7, 9), mode="bicubic")), IMG),
    "interpolate_linear1d": ("resize", lambda: Fn(lambda s, x: F.interpolate(x, scale_factor=2, mode="linear")), SEQ1D),
    "pixelshuffle": ("resize", lambda: seq(nn.PixelShuffle(2)), IMG),
    "pixelunshuffle": ("resize", lambda: seq(nn.PixelUnshuffle(2)), IMG),
    "channelshuffle": ("resize", lambda: seq(nn.ChannelShuffle(2)), IMG),
    # padding
    "zeropad2d": ("pad", lambda: seq(nn.ZeroPad2d((1, 2, 3, 0))), IMG),
    "constantpad1d": ("pad", lambda: seq(nn.ConstantPad1d((2, 1), 0.5)), SEQ1D),
    "reflectionpad2d": ("pad", lambda: seq(nn.ReflectionPad2d(2)), IMG),
    "replicationpad2d": ("pad", lambda: seq(nn.ReplicationPad2d((1, 0, 2, 1))), IMG),
    "fpad_channels": ("pad", lambda: Fn(lambda s, x: F.pad(x, (1, 1, 0, 2, 1, 0), value=-1.0)), IMG),
    # shape
    "view": ("shape", lambda: Fn(lambda s, x: x.view(1, 8, 144).relu()), IMG),
    "flatten_partial": ("shape", lambda: Fn(lambda s, x: torch.flatten(x, 2).sigmoid()), IMG),
    "permute3": ("shape", lambda: Fn(lambda s, x: x.permute(0, 2, 3, 1).relu()), IMG),
    "permute4": ("shape", lambda: Fn(lambda s, x: x.permute(0, 3, 1, 4, 2).relu()), VOL),
    "transpose": ("shape", lambda: Fn(lambda s, x: torch.transpose(x, 1, 2).relu()), [(1, 5, 9)]),
    "squeeze_unsqueeze": ("shape", lambda: Fn(lambda s, x: x.unsqueeze(2).relu().squeeze(2) * 2), [(1, 5, 9)]),
    # concat and slicing
    "cat": ("concat_slice", lambda: Fn(lambda s, a, b: torch.cat((a, b), dim=2)), [(1, 3, 4, 5), (1, 3, 2, 5)]),
    "cat_last": ("concat_slice", lambda: Fn(lambda s, a, b: torch.cat((a, b), dim=-1)), [(1, 3, 4), (1, 3, 2)]),
    "stack": ("concat_slice", lambda: Fn(lambda s, a, b: torch.stack((a, b), dim=1)), [(1, 3, 4), (1, 3, 4)]),
    "chunk": ("concat_slice", lambda: Fn(lambda s, x: torch.chunk(x, 3, dim=1)), [(1, 9, 4, 4)]),
    "split": ("concat_slice", lambda: Fn(lambda s, x: torch.split(x, [2, 3, 1], dim=-1)), [(1, 4, 6)]),
    "unbind": ("concat_slice", lambda: Fn(lambda s, x: torch.unbind(x, dim=1)), [(1, 3, 4, 5)]),
    "slice": ("concat_slice", lambda: Fn(lambda s, x: x[:, 1:5, :, -3:]), IMG),
    "select": ("concat_slice", lambda: Fn(lambda s, x: x[:, 2]), IMG),
    "slice_strided": ("concat_slice", lambda: Fn(lambda s, x: x[:, 1:8:3, :, ::2]), IMG),
    "slice_copy": ("concat_slice", lambda: Fn(lambda s, x: torch.slice_copy(x, 2, 1, -2)), IMG),
    "slice_scatter": ("concat_slice", lambda: Fn(lambda s, a, b: torch.slice_scatter(a, b, 2, 3, 5)),
                      [(1, 3, 6, 5), (1, 3, 2, 5)]),
    "upsample_1d_size": ("resize", lambda: seq(nn.Upsample(size=15, mode="linear")), [(1, 3, 7)]),
    "upsample_1d_nearest": ("resize", lambda: seq(nn.Upsample(scale_factor=2, mode="nearest")), [(1, 3, 7)]),
    "avgpool2d_ceil": ("pool", lambda: seq(nn.AvgPool2d(2, ceil_mode=True)), [(1, 4, 9, 10)]),
    "max_other": ("reduce", lambda: Fn(lambda s, a, b: torch.max(a, b)), [(1, 3, 4), (1, 3, 4)]),
    "remainder_signs": ("binary", lambda: Fn(lambda s, a, b: torch.remainder(a * 4 - 2, b - 0.5)),
                        [(1, 3, 4), (1, 3, 4)]),
    "round_decimals": ("binary", lambda: Fn(lambda s, a: torch.round(a * 10, decimals=1)), [(1, 3, 4)]),
    "adaptive_avgpool_keep_h": ("pool", lambda: seq(nn.AdaptiveAvgPool2d((None, 5))), IMG),
    # fold / unfold (col2im / im2col)
    "unfold": ("fold", lambda: seq(nn.Unfold((2, 3), dilation=2, padding=1, stride=(1, 2))), IMG),
    "fold": ("fold", lambda: seq(nn.Fold((7, 9), 3, padding=1, dilation=2)), [(1, 18, 35)]),
    # reductions
    "sum_keepdim": ("reduce", lambda: Fn(lambda s, x: torch.sum(x, dim=1, keepdim=True)), IMG),
    "mean_hw": ("reduce", lambda: Fn(lambda s, x: x.mean(dim=(2, 3))), IMG),
    "amax": ("reduce", lambda: Fn(lambda s, x: torch.amax(x, dim=-1)), IMG),
    "max_dim": ("reduce", lambda: Fn(lambda s, x: torch.max(x, dim=2)[0]), IMG),
    "prod": ("reduce", lambda: Fn(lambda s, x: torch.prod(x, dim=1)), [(1, 3, 5)]),
    "logsumexp": ("reduce", lambda: Fn(lambda s, x: torch.logsumexp(x, dim=2)), IMG),
    "norm": ("reduce", lambda: Fn(lambda s, x: torch.norm(x, dim=1)), [(1, 6, 5)]),
    # elementwise expressions
    "expr_scalar": ("binary", lambda: Fn(lambda s, x: (x * 2 + 1) / 4 - 0.5), IMG),
    "expr_rsub_rdiv": ("binary", lambda: Fn(lambda s, x: (1 - x) + 2 / (x + 1)), IMG),
    "expr_tensors": ("binary", lambda: Fn(lambda s, a, b: a * b - a / (b + 1)), [(1, 3, 4, 5), (1, 3, 4, 5)]),
    "expr_broadcast": ("binary", lambda: Fn(lambda s, a, b: a + b), [(1, 8, 6, 6), (1, 8, 1, 1)]),
    "expr_broadcast_rank": ("binary", lambda: Fn(lambda s, a, b: a * b), [(1, 3, 4, 5), (1, 5)]),
    "expr_const": ("binary", lambda: Fn(lambda s, x: x * s.w + s.b, w=torch.rand(8, 1, 1), b=torch.rand(12)), IMG),
    "expr_unary": ("binary", lambda: Fn(lambda s, x: torch.sqrt(torch.exp(x)) + torch.log(x + 1) + torch.abs(x - 0.5) + torch.floor(x * 4)), IMG),
    "expr_pow_max": ("binary", lambda: Fn(lambda s, a, b: torch.pow(a, 2) + torch.maximum(a, b)), [(1, 3, 4), (1, 3, 4)]),
    "expr_neg_rsqrt": ("binary", lambda: Fn(lambda s, x: -torch.rsqrt(x + 1) + torch.reciprocal(x + 2)), IMG),
    "expr_trig": ("binary", lambda: Fn(lambda s, x: torch.sin(x) * torch.cos(x) + torch.atan(x)), IMG),
    # norms, tiling, flips and friends
    "rmsnorm": ("norm", lambda: seq(nn.RMSNorm(12, eps=1e-5)), [(1, 5, 12)]),
    "normalize": ("norm", lambda: Fn(lambda s, x: F.normalize(x - 0.5, dim=1)), IMG),
    "lrn": ("norm", lambda: seq(nn.LocalResponseNorm(3, alpha=0.5, k=2.0)), IMG),
    "repeat": ("tile", lambda: Fn(lambda s, x: x.repeat(1, 2, 1, 3)), [(1, 3, 4, 5)]),
    "expand": ("tile", lambda: Fn(lambda s, x: x.expand(1, 3, 4, 5)), [(1, 3, 1, 5)]),
    "flip": ("tile", lambda: Fn(lambda s, x: torch.flip(x, dims=(1, 3))), [(1, 3, 4, 5)]),
    "cumsum": ("tile", lambda: Fn(lambda s, x: torch.cumsum(x, dim=2)), [(1, 3, 4, 5)]),
    "roll": ("tile", lambda: Fn(lambda s, x: torch.roll(x, shifts=(1, -2), dims=(1, 2))), [(1, 3, 4, 5)]),
    "channel_shuffle_view": ("resize", lambda: Fn(lambda s, x: x.view(1, 2, 4, 12, 12).transpose(1, 2).contiguous()
                                                   .reshape(1, 8, 12, 12).relu()), IMG),
    "inplace_relu": ("activation", lambda: Fn(lambda s, x: F.relu_(x * 1.0 - 0.5)), IMG),
    # recurrent
    "rnn": ("rnn", lambda: _seq_out(nn.RNN(6, 8, batch_first=True)), [(1, 5, 6)]),
    "lstm": ("rnn", lambda: _seq_out(nn.LSTM(6, 8, batch_first=True)), [(1, 5, 6)]),
    "lstm_bi_2layers": ("rnn", lambda: _seq_out(nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)), [(1, 5, 6)]),
    "gru": ("rnn", lambda: _seq_out(nn.GRU(6, 8, batch_first=True)), [(1, 5, 6)]),
    "gru_bi": ("rnn", lambda: _seq_out(nn.GRU(6, 8, batch_first=True, bidirectional=True)), [(1, 5, 6)]),
    "mha_self": ("attention", lambda: _Attn(nn.MultiheadAttention(16, 4, batch_first=True), "self"), [(1, 5, 16)]),
    "mha_cross": ("attention", lambda: _Attn(nn.MultiheadAttention(16, 2, batch_first=True, kdim=12, vdim=8), "cross"),
                  [(1, 5, 16), (1, 7, 12), (1, 7, 8)]),
    # functional forms (weights as constants)
    "F_conv2d": ("conv", lambda: Fn(lambda s, x: F.conv2d(x, s.w, s.b, stride=2, padding=1),
                                    w=torch.rand(4, 8, 3, 3) - 0.5, b=torch.rand(4)), IMG),
    "F_conv1d": ("conv", lambda: Fn(lambda s, x: F.conv1d(x, s.w, None, groups=2), w=torch.rand(4, 3, 3) - 0.5), SEQ1D),
    "F_conv_transpose2d": ("conv", lambda: Fn(lambda s, x: F.conv_transpose2d(x, s.w, stride=2),
                                              w=torch.rand(8, 3, 2, 2) - 0.5), IMG),
    "F_linear": ("linear", lambda: Fn(lambda s, x: F.linear(x, s.w, s.b), w=torch.rand(5, 10) - 0.5,
                                      b=torch.rand(5)), [(1, 10)]),
    "F_batch_norm": ("norm", lambda: Fn(lambda s, x: F.batch_norm(x, s.m, s.v, s.w, s.b), m=torch.rand(8),
                                        v=torch.rand(8) + 0.5, w=torch.rand(8), b=torch.rand(8)), IMG),
    "F_layer_norm": ("norm", lambda: Fn(lambda s, x: F.layer_norm(x, (12,), s.w, s.b), w=torch.rand(12),
                                        b=torch.rand(12)), [(1, 5, 12)]),
    "F_group_norm": ("norm", lambda: Fn(lambda s, x: F.group_norm(x, 2)), IMG),
    "F_instance_norm": ("norm", lambda: Fn(lambda s, x: F.instance_norm(x)), IMG),
    "F_pools": ("pool", lambda: Fn(lambda s, x: F.max_pool2d(x, 2) + F.avg_pool2d(x, 2)
                                   + F.adaptive_max_pool2d(x, 6)), IMG),
    "F_pools1d": ("pool", lambda: Fn(lambda s, x: F.max_pool1d(x, 2) * F.avg_pool1d(x, 2)
                                     + F.adaptive_avg_pool1d(x, 10)), SEQ1D),
    "F_activations": ("activation", lambda: Fn(lambda s, x: F.leaky_relu(x, 0.1) + F.hardtanh(x, -0.2, 0.3)
                                               + F.gelu(x) + F.silu(x) + F.elu(x) + F.selu(x) + F.celu(x)
                                               + F.mish(x) + F.hardswish(x) + F.hardsigmoid(x) + F.softplus(x)
                                               + F.relu6(x) + F.sigmoid(x) + F.tanh(x)), [(1, 6, 7, 9)]),
    "F_shrink_logs": ("activation", lambda: Fn(lambda s, x: F.hardshrink(x, 0.3) + F.softshrink(x, 0.2)
                                               + F.logsigmoid(x) + F.log_softmax(x, dim=1)), [(1, 6, 7, 9)]),
    "F_glu_prelu": ("activation", lambda: Fn(lambda s, x: F.glu(x, dim=-1) * F.prelu(x[..., :4], s.a),
                                             a=torch.rand(6)), [(1, 6, 8)]),
    "F_pixel_shuffles": ("resize", lambda: Fn(lambda s, x: F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2)), IMG),
    "F_embedding": ("linear", lambda: Fn(lambda s, x: F.embedding(x, s.w), w=torch.rand(20, 6)), [(1, 5)], torch.int64),
    "torch_mm_family": ("linear", lambda: Fn(lambda s, a, b: torch.bmm(a, b) + torch.matmul(a, b)),
                        [(1, 4, 6), (1, 6, 5)]),
    "torch_addmm": ("linear", lambda: Fn(lambda s, x: torch.addmm(s.b, x, s.w), b=torch.rand(5), w=torch.rand(6, 5)),
                    [(1, 6)]),
    "torch_reductions": ("reduce", lambda: Fn(lambda s, x: torch.mean(x, dim=1) + torch.amin(x, dim=1)
                                              + torch.min(x, dim=1)[0] + torch.sum(x, dim=-3)), IMG),
    "torch_unary": ("binary", lambda: Fn(lambda s, x: torch.abs(x - 0.5) + torch.neg(x) + torch.ceil(x * 4)
                                         + torch.square(x) + torch.exp(x) + torch.log(x + 1) + torch.tan(x)
                                         + torch.asin(x * 0.5) + torch.acos(x * 0.5) + torch.reciprocal(x + 1)
                                         + torch.log10(x + 1) + torch.trunc(x * 4) + torch.sign(x - 0.5)
                                         + torch.expm1(x) + torch.sinh(x) + torch.cosh(x) + torch.log1p(x)
                                         + torch.erf(x)), IMG),
    "torch_binary_fns": ("binary", lambda: Fn(lambda s, a, b: torch.add(a, b, alpha=2) + torch.sub(a, b)
                                              + torch.mul(a, 3) + torch.div(a, b + 1) + torch.maximum(a, b)
                                              + torch.minimum(a, b) + torch.atan2(a, b + 0.5)), [(1, 3, 4), (1, 3, 4)]),
    # a small network (Split, fusions, several outputs)
    "block": ("network", lambda: Block(), IMG),
}


def _bn(m: nn.Module) -> nn.Module:
    with torch.no_grad():
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        if m.weight is not None:
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
    return seq(m)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = F.relu(self.bn(self.c1(x)))
        z = F.relu(self.c2(y)) + x
        pooled = F.adaptive_avg_pool2d(z, 1).flatten(1)
        return self.fc(pooled), torch.sigmoid(z)


def _seq_out(rnn: nn.Module) -> nn.Module:
    return _SeqOut(rnn)


class _SeqOut(nn.Module):
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        return self.rnn(x)[0]


class _Attn(nn.Module):
    def __init__(self, attn, mode):
        super().__init__()
        self.attn, self.mode = attn, mode

    def forward(self, q, k=None, v=None):
        if self.mode == "self":
            return self.attn(q, q, q)[0]
        return self.attn(q, k, v)[0]


def build(name: str):
    """(module, inputs) for a case, both deterministic and exactly representable in fp16."""
    family, factory, shapes, *rest = CASES[name]
    dtype = rest[0] if rest else torch.float32
    torch.manual_seed(0)
    model = factory().eval()
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
    gen = torch.Generator().manual_seed(1)
    if dtype == torch.int64:
        inputs = [torch.randint(0, 20, s, generator=gen) for s in shapes]
    else:
        inputs = [torch.rand(s, generator=gen).half().float() for s in shapes]
    return model, inputs
