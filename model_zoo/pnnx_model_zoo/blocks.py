"""Blocks written the way the field writes them, full tier only: a LLaMA decoder (RMSNorm,
rotary embedding, causal SDPA, SwiGLU), GPT-2 (tril mask, masked_fill, tanh GELU, token and
position embeddings), a diffusion UNet (GroupNorm, SiLU, a sinusoidal timestep embedding, skip
concatenation), YOLOv8's head (DFL, anchors from meshgrid), a Conformer convolution module
(GLU, depthwise Conv1d, BatchNorm1d) and MobileViT's patch unfold (rank-6 permutes).

Each was converted through every route beside upstream when written: upstream's ncnn files
for the LLaMA, GPT-2, UNet and MobileViT blocks do not load in ncnn."""
from __future__ import annotations

from pnnx_op_cases.case import InputSpec

LLAMA = '''import torch
import torch.nn as nn
import torch.nn.functional as F

D, H, T = 64, 4, 16


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(D), RMSNorm(D)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.w1, self.w3 = nn.Linear(D, 4 * D, bias=False), nn.Linear(D, 4 * D, bias=False)
        self.w2 = nn.Linear(4 * D, D, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, D // H, 2).float() / (D // H)))
        freqs = torch.outer(torch.arange(T).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, H, d // H).transpose(1, 2)
        k = self.k(h).view(b, t, H, d // H).transpose(1, 2)
        v = self.v(h).view(b, t, H, d // H).transpose(1, 2)
        q = q * self.cos + rotate_half(q) * self.sin
        k = k * self.cos + rotate_half(k) * self.sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.norm = RMSNorm(D)

    def forward(self, x):
        return self.norm(self.blocks(x))
'''

GPT2 = '''import math
import torch
import torch.nn as nn
import torch.nn.functional as F

D, H, T = 64, 4, 16


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(D, 3 * D)
        self.c_proj = nn.Linear(D, D)
        self.register_buffer("bias", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

    def forward(self, x):
        B, T_, C = x.size()
        q, k, v = self.c_attn(x).split(D, dim=2)
        k = k.view(B, T_, H, C // H).transpose(1, 2)
        q = q.view(B, T_, H, C // H).transpose(1, 2)
        v = v.view(B, T_, H, C // H).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T_, :T_] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T_, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.attn = Attention()
        self.fc, self.proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(100, D)
        self.wpe = nn.Embedding(T, D)
        self.h = nn.Sequential(Block(), Block())
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, 100, bias=False)

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        return self.lm_head(self.ln_f(self.h(x)))
'''

UNET = '''import math
import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.norm1, self.norm2 = nn.GroupNorm(8, cin), nn.GroupNorm(8, cout)
        self.conv1, self.conv2 = nn.Conv2d(cin, cout, 3, padding=1), nn.Conv2d(cout, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return self.skip(x) + h


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Conv2d(3, 32, 3, padding=1)
        self.t1 = nn.Linear(32, 64)
        self.down = ResBlock(32, 64, 64)
        self.pool = nn.Conv2d(64, 64, 3, stride=2, padding=1)
        self.mid = ResBlock(64, 64, 64)
        self.up = ResBlock(128, 32, 64)
        self.out = nn.Conv2d(32, 3, 3, padding=1)

    def forward(self, x, t):
        temb = self.t1(timestep_embedding(t, 32))
        h0 = self.down(self.inp(x), temb)
        h = self.mid(self.pool(h0), temb)
        h = F.interpolate(h, scale_factor=2.0, mode="nearest")
        return self.out(F.silu(self.up(torch.cat([h, h0], dim=1), temb)))
'''

YOLO = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class DFL(nn.Module):
    def __init__(self, c1=16):
        super().__init__()
        self.conv = nn.Conv2d(c1, 1, 1, bias=False).requires_grad_(False)
        self.conv.weight.data[:] = torch.arange(c1, dtype=torch.float).view(1, c1, 1, 1)
        self.c1 = c1

    def forward(self, x):
        b, _, a = x.shape
        return self.conv(x.view(b, 4, self.c1, a).transpose(2, 1).softmax(1)).view(b, 4, a)


def make_anchors(feats, strides, offset=0.5):
    anchor_points, stride_tensor = [], []
    for i, stride in enumerate(strides):
        _, _, h, w = feats[i].shape
        sx = torch.arange(end=w, dtype=torch.float32) + offset
        sy = torch.arange(end=h, dtype=torch.float32) + offset
        sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        anchor_points.append(torch.stack((sx, sy), -1).view(-1, 2))
        stride_tensor.append(torch.full((h * w, 1), stride, dtype=torch.float32))
    return torch.cat(anchor_points), torch.cat(stride_tensor)


class Model(nn.Module):
    def __init__(self, nc=8, reg_max=16):
        super().__init__()
        self.nc, self.reg_max = nc, reg_max
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.SiLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU())
        self.p4 = nn.Sequential(nn.Conv2d(32, 32, 3, 2, 1), nn.SiLU())
        self.box = nn.ModuleList(nn.Conv2d(32, 4 * reg_max, 1) for _ in range(2))
        self.cls = nn.ModuleList(nn.Conv2d(32, nc, 1) for _ in range(2))
        self.dfl = DFL(reg_max)

    def forward(self, x):
        p3 = self.stem(x)
        feats = [p3, self.p4(p3)]
        outs = [torch.cat((self.box[i](f), self.cls[i](f)), 1) for i, f in enumerate(feats)]
        anchors, strides = (t.transpose(0, 1) for t in make_anchors(feats, [4, 8]))
        xcat = torch.cat([o.view(x.shape[0], self.nc + 4 * self.reg_max, -1) for o in outs], 2)
        box, cls = xcat.split((self.reg_max * 4, self.nc), 1)
        lt, rb = self.dfl(box).chunk(2, 1)
        x1y1, x2y2 = anchors.unsqueeze(0) - lt, anchors.unsqueeze(0) + rb
        dbox = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * strides
        return torch.cat((dbox, cls.sigmoid()), 1)
'''

CONFORMER = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d=48, k=15):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, k, padding=k // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.2, 0.2)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):  # (B, T, D)
        y = self.norm(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = self.pw2(F.silu(self.bn(self.dw(y))))
        return x + y.transpose(1, 2)
'''

MOBILEVIT = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c=32, p=2):
        super().__init__()
        self.p = p
        self.conv = nn.Conv2d(3, c, 3, padding=1)
        self.attn = nn.MultiheadAttention(c, 4, batch_first=True)
        self.ln = nn.LayerNorm(c)
        self.proj = nn.Conv2d(c, c, 1)

    def forward(self, x):
        y = self.conv(x)
        b, c, h, w = y.shape
        p = self.p
        t = y.reshape(b, c, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, (h // p) * (w // p), c)
        n = self.ln(t)
        t = t + self.attn(n, n, n, need_weights=False)[0]
        y = t.reshape(b, p, p, h // p, w // p, c).permute(0, 5, 3, 1, 4, 2).reshape(b, c, h, w)
        return self.proj(y) + x.mean(1, keepdim=True)
'''


def cases() -> list[tuple[str, str, tuple[InputSpec, ...]]]:
    """(case id without `models.`, model source, inputs) per block."""
    return [
        ("llama_block/d64_h4_l2", LLAMA, (InputSpec((1, 16, 64), low=-1.0, high=1.0),)),
        ("gpt2_block/d64_h4_l2", GPT2, (InputSpec((1, 16), dtype="i64", low=0, high=100),)),
        ("unet_block/t32", UNET, (InputSpec((1, 3, 32, 32)), InputSpec((1,), dtype="i64", low=0, high=1000))),
        ("yolov8_head/dfl", YOLO, (InputSpec((1, 3, 64, 64)),)),
        ("conformer_conv/d48", CONFORMER, (InputSpec((1, 40, 48), low=-1.0, high=1.0),)),
        ("mobilevit_block/c32", MOBILEVIT, (InputSpec((1, 3, 16, 16)),)),
    ]
