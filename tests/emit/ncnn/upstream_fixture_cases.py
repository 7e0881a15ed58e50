"""The models whose upstream pnnx conversion is stored under fixtures/<name>/ (regenerate with
make_ncnn_fixtures.py): upstream's pnnx.param/bin is what our ncnn lowering reads in
test_ncnn_export_upstream.py, upstream's ncnn.param/bin what it is held to. Each is rebuilt
from a fixed seed, so the stored graphs match the module exactly; that is the only reason
they are written by hand. Every other operator model is an op case (pnnx_op_cases), run on
ncnn by the conformance harness (test_ncnn_export_op_cases.py)."""
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

# name -> (factory, input shapes[, input dtype]); the names are the fixture folders
CASES = {
    "conv2d": (lambda: seq(nn.Conv2d(8, 16, 3, padding=1)), IMG),
    "conv2d_stride_dilation": (lambda: seq(nn.Conv2d(8, 4, (3, 5), stride=(2, 1), dilation=2, bias=False)), IMG),
    "conv2d_groups": (lambda: seq(nn.Conv2d(8, 16, 3, groups=4, padding=2)), IMG),
    "conv2d_depthwise_relu": (lambda: seq(nn.Conv2d(8, 8, 3, groups=8), nn.ReLU()), IMG),
    "conv2d_same": (lambda: seq(nn.Conv2d(8, 6, 3, padding="same")), IMG),
    "conv2d_reflect": (lambda: seq(nn.Conv2d(8, 6, 3, padding=1, padding_mode="reflect")), IMG),
    "conv2d_pad_fold": (lambda: seq(nn.ZeroPad2d((1, 2, 0, 1)), nn.Conv2d(8, 6, 3)), IMG),
    "conv1d": (lambda: seq(nn.Conv1d(6, 8, 3, padding=1), nn.LeakyReLU(0.1)), SEQ1D),
    "conv3d": (lambda: seq(nn.Conv3d(4, 6, 3, padding=1)), VOL),
    "convtranspose2d": (lambda: seq(nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)), IMG),
    "linear": (lambda: seq(nn.Linear(10, 6), nn.ReLU()), [(1, 10)]),
    "linear_3d": (lambda: seq(nn.Linear(10, 6, bias=False)), [(1, 5, 10)]),
    "embedding": (lambda: seq(nn.Embedding(20, 8)), [(1, 7)], torch.int64),
    "batchnorm2d": (lambda: _bn(nn.BatchNorm2d(8)), IMG),
    "layernorm": (lambda: seq(nn.LayerNorm(12)), [(1, 5, 12)]),
    "groupnorm": (lambda: seq(nn.GroupNorm(4, 8)), IMG),
    "instancenorm2d": (lambda: seq(nn.InstanceNorm2d(8, affine=True)), IMG),
    "act_hardswish": (lambda: seq(nn.Hardswish()), [(1, 6, 7, 9)]),
    "act_prelu": (lambda: seq(nn.PReLU(6)), [(1, 6, 7, 9)]),
    "softmax": (lambda: seq(nn.Softmax(dim=1)), [(1, 6, 7, 9)]),
    "maxpool2d": (lambda: seq(nn.MaxPool2d(3, stride=2, padding=1)), IMG),
    "avgpool2d": (lambda: seq(nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)), IMG),
    "global_avgpool_flatten": (lambda: seq(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3)), IMG),
    "upsample_bilinear": (lambda: seq(nn.Upsample(size=(17, 20), mode="bilinear")), IMG),
    "pixelshuffle": (lambda: seq(nn.PixelShuffle(2)), IMG),
    "zeropad2d": (lambda: seq(nn.ZeroPad2d((1, 2, 3, 0))), IMG),
    "view": (lambda: Fn(lambda s, x: x.view(1, 8, 144).relu()), IMG),
    "permute3": (lambda: Fn(lambda s, x: x.permute(0, 2, 3, 1).relu()), IMG),
    "cat": (lambda: Fn(lambda s, a, b: torch.cat((a, b), dim=2)), [(1, 3, 4, 5), (1, 3, 2, 5)]),
    "chunk": (lambda: Fn(lambda s, x: torch.chunk(x, 3, dim=1)), [(1, 9, 4, 4)]),
    "slice": (lambda: Fn(lambda s, x: x[:, 1:5, :, -3:]), IMG),
    "mean_hw": (lambda: Fn(lambda s, x: x.mean(dim=(2, 3))), IMG),
    "expr_scalar": (lambda: Fn(lambda s, x: (x * 2 + 1) / 4 - 0.5), IMG),
    "expr_broadcast": (lambda: Fn(lambda s, a, b: a + b), [(1, 8, 6, 6), (1, 8, 1, 1)]),
    "expr_const": (lambda: Fn(lambda s, x: x * s.w + s.b, w=torch.rand(8, 1, 1), b=torch.rand(12)), IMG),
    # a small network (Split, fusions, two outputs)
    "block": (lambda: Block(), IMG),
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


def build(name: str):
    """(module, inputs) for a case, both deterministic and exactly representable in fp16."""
    factory, shapes, *rest = CASES[name]
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
