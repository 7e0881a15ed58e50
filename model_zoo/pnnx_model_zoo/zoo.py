"""Real networks as conformance cases: the same `Case` shape as the op cases, table `models`.

Weights are random from the case's fixed seed (nothing is downloaded). `options` carries
converter options a model needs (e.g. `moduleop` for the YOLOv5 Focus block).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from pnnx_op_cases.case import TIER_SMOKE, Case, InputSpec

from . import blocks, hf, sweep

IMAGE = (InputSpec((1, 3, 224, 224)),)


@dataclass(frozen=True)
class ZooCase(Case):
    options: dict = field(default_factory=dict, hash=False, compare=False)
    sweep: bool = field(default=False, compare=False)  # the torchvision sweep (sweep.py): full tier only
    transformers: bool = field(default=False, compare=False)  # the transformers tier (hf.py): full tier only


CALIBRATE = '''

def calibrate(net, *shapes):
    """Batch-norm statistics of the network's own activations (one pass in training mode on a
    seeded random batch of the input's shape), as training leaves them: without it, deep stacks
    such as Inception's or a dilated ResNet-50 grow activations to thousands and every check
    judges rounding on that scale."""
    norms = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: one pass sets the statistics
    net.train()
    with torch.no_grad():
        net(*[torch.rand(s) for s in shapes])
    net.eval()
'''


def torchvision_source(ctor: str, post: str = "", args: str = "x", calibrate: tuple | None = None) -> str:
    """A torchvision network as a case's source. `calibrate`: the input shapes to set batch-norm
    statistics on (the sweep's networks); without it the statistics are drawn at random."""
    helper = CALIBRATE if calibrate else ""
    step = f"\n        calibrate(self.net, {', '.join(map(str, calibrate))})" if calibrate else ""
    return f'''import torch
import torch.nn as nn
import torchvision


def randomize(net):
    """Random init leaves several torchvision heads and norms at identity or zero (vit's head,
    BatchNorm statistics), which makes outputs vanish and parity prove nothing: give every
    norm layer and every all-zero weight values of a trained network's magnitude."""
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.BatchNorm1d, nn.BatchNorm3d)):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
            for p in m.parameters(recurse=False):
                if p.dim() >= 2 and not p.any():
                    p.normal_(0.0, 0.05)
{helper}

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = {ctor}
        randomize(self.net){step}

    def forward(self, {args}):
        y = self.net({args})
        return y{post}
'''


TORCHVISION = {
    "resnet18": "torchvision.models.resnet18(weights=None)",
    "mobilenet_v2": "torchvision.models.mobilenet_v2(weights=None)",
    "mobilenet_v3_small": "torchvision.models.mobilenet_v3_small(weights=None)",
    "shufflenet_v2_x1_0": "torchvision.models.shufflenet_v2_x1_0(weights=None)",
    "squeezenet1_1": "torchvision.models.squeezenet1_1(weights=None)",
    "efficientnet_b0": "torchvision.models.efficientnet_b0(weights=None)",
    "regnet_x_400mf": "torchvision.models.regnet_x_400mf(weights=None)",
    "convnext_tiny": "torchvision.models.convnext_tiny(weights=None)",
    "vit_b_16": "torchvision.models.vit_b_16(weights=None)",
    "swin_t": "torchvision.models.swin_t(weights=None)",
}
SMOKE_MODELS = {"resnet18", "mobilenet_v2"}

TRANSFORMER_ENCODER = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.encoder(x))
'''

RECURRENT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.{cls}(input_size=32, hidden_size=48, num_layers=2, batch_first=True)
        self.head = nn.Linear(48, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)
'''

YOLO_FOCUS = '''import torch
import torch.nn as nn


class Focus(nn.Module):
    """YOLOv5's space-to-depth stem: four strided slices concatenated, then a conv."""

    def __init__(self, c1, c2, k=1):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c1 * 4, c2, k, 1, k // 2, bias=False), nn.BatchNorm2d(c2), nn.SiLU())

    def forward(self, x):
        return self.conv(torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1))


class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv1 = nn.Sequential(nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c), nn.SiLU())
        self.cv2 = nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.SiLU())

    def forward(self, x):
        return x + self.cv2(self.cv1(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.focus = Focus(3, 32, 3)
        self.down = nn.Sequential(nn.Conv2d(32, 64, 3, 2, 1, bias=False), nn.BatchNorm2d(64), nn.SiLU())
        self.block = Bottleneck(64)
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")

    def forward(self, x):
        return self.up(self.block(self.down(self.focus(x))))
'''


def _zoo() -> list[ZooCase]:
    cases = []
    for name, ctor in TORCHVISION.items():
        tags = frozenset({TIER_SMOKE} if name in SMOKE_MODELS else set())
        cases.append(ZooCase(f"models.{name}/random_init", f"models.{name}", torchvision_source(ctor), IMAGE, tags))
    cases.append(ZooCase(
        "models.deeplabv3_mobilenet_v3_large/random_init", "models.deeplabv3_mobilenet_v3_large",
        torchvision_source("torchvision.models.segmentation.deeplabv3_mobilenet_v3_large("
                           "weights=None, weights_backbone=None, aux_loss=False)", "['out']"),
        (InputSpec((1, 3, 224, 224)),)))
    cases.append(ZooCase("models.transformer_encoder/d64_h4_l2", "models.transformer_encoder", TRANSFORMER_ENCODER,
                         (InputSpec((1, 16, 64), low=-1.0, high=1.0),), frozenset({TIER_SMOKE})))
    for cls in ("LSTM", "GRU"):
        cases.append(ZooCase(f"models.{cls.lower()}_seq/h48_l2", f"models.{cls.lower()}_seq",
                             RECURRENT.replace("{cls}", cls), (InputSpec((1, 20, 32), low=-1.0, high=1.0),)))
    cases.append(ZooCase("models.yolov5_focus/moduleop", "models.yolov5_focus", YOLO_FOCUS,
                         (InputSpec((1, 3, 64, 64)),), frozenset({TIER_SMOKE}),
                         options={"moduleop": ["Focus"]}))
    return cases


def _sweep() -> list[ZooCase]:
    cases = []
    for name, ctor, inputs, post, train_ok in sweep.cases():
        args = ", ".join(f"x{i}" for i in range(len(inputs))) if len(inputs) > 1 else "x"
        shapes = tuple(i.shape for i in inputs) if train_ok else None
        cases.append(ZooCase(f"models.{name}/random_init", f"models.{name}",
                             torchvision_source(ctor, post, args, shapes), inputs, sweep=True))
    for case_id, source, inputs in blocks.cases():  # blocks written the way the field writes them
        cases.append(ZooCase(f"models.{case_id}", f"models.{case_id.split('/')[0]}", source, inputs, sweep=True))
    for case_id, source, inputs in hf.cases():  # transformers models from small configs, the decode step
        cases.append(ZooCase(f"models.{case_id}", f"models.{case_id.split('/')[0]}", source, inputs,
                             transformers=True))
    for case_id, source, inputs, inputs2 in hf.two_length_cases():  # the same at lengths that follow the input
        cases.append(ZooCase(f"models.{case_id}", f"models.{case_id.split('/')[0]}", source, inputs,
                             inputs2=inputs2, transformers=True))
    return cases


@lru_cache(maxsize=None)
def zoo_cases() -> tuple[ZooCase, ...]:
    """The zoo: the networks every default run converts."""
    return tuple(sorted(_zoo(), key=lambda c: c.id))


@lru_cache(maxsize=None)
def all_cases() -> tuple[ZooCase, ...]:
    """The zoo, the sweep (torchvision's networks, sweep.py, and the field's blocks, blocks.py) and the
    transformers tier (hf.py), the last two full tier only: what workers look case ids up in."""
    return tuple(sorted(_zoo() + _sweep(), key=lambda c: c.id))


def select_models(*, tier: str | None = None, pattern: str | None = None) -> list[ZooCase]:
    import fnmatch

    return [c for c in zoo_cases()
            if (tier != "smoke" or c.tier == "smoke") and (not pattern or fnmatch.fnmatchcase(c.id, pattern))]
