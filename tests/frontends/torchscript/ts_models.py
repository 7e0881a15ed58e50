"""Traced models for the `.pt` door's aten rules: single operators in the argument forms users
write (issue 19's list), each with its example inputs. Shared by the rule tests and the
door-agreement checks; `MODELS` maps a name to (module factory, inputs factory)."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


def _rand(*shape, seed=0):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed))


def conv_same(dims):
    weight = _rand(4, 3, *([3] * dims), seed=1) - 0.5

    class ConvSame(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("weight", weight)

        def forward(self, x):
            return F.__dict__[f"conv{dims}d"](x, self.weight, padding="same") + \
                F.__dict__[f"conv{dims}d"](x, self.weight, padding="valid", dilation=1).mean()
    return ConvSame()


class Mha(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 4, batch_first=batch_first)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class MhaWeights(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, q, k):
        out, weights = self.mha(q, k, k)
        return out, weights


class IndexPut(nn.Module):
    def __init__(self, accumulate):
        super().__init__()
        self.accumulate = accumulate

    def forward(self, x, v):
        y = x * 1.0
        index = torch.tensor([0, 2, 2])
        return y.index_put_((index,), v, accumulate=self.accumulate)


class CopyIntoSlice(nn.Module):
    def forward(self, x, y):
        z = x * 2
        z[:, 1:3].copy_(y)
        z[:, 0] = y[:, 0] + 1
        return z


class AdaptiveMaxIndices(nn.Module):
    def __init__(self, dims, size):
        super().__init__()
        self.pool = getattr(nn, f"AdaptiveMaxPool{dims}d")(size, return_indices=True)

    def forward(self, x):
        values, indices = self.pool(x)
        return values, indices


class Interp(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.kwargs = kwargs

    def forward(self, x):
        return F.interpolate(x, **self.kwargs)


class UpsampleFn(nn.Module):
    def __init__(self, fn, **kwargs):
        super().__init__()
        self.fn, self.kwargs = fn, kwargs

    def forward(self, x):
        return getattr(F, self.fn)(x, **self.kwargs)


class DeconvOutputSize(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.deconv = getattr(nn, f"ConvTranspose{dims}d")(3, 4, 3, stride=2, padding=1)
        self.dims = dims

    def forward(self, x):
        size = [2 * s for s in x.shape[2:]]
        return self.deconv(x, output_size=size)


class ListUnpack(nn.Module):
    def forward(self, x):
        a, b = x.split(2, dim=1)
        c, d, e = torch.unbind(x[:, :3], 1)
        return a * b + c.unsqueeze(1) - d.unsqueeze(1) * e.unsqueeze(1)


class ComputedSlice(nn.Module):
    def forward(self, x):
        n = x.size(1)
        half = n // 2
        return x[:, half:n] + x[:, 0:half], x[:, : x.size(2) - 2], x[:, n - 2]


class Shifts(nn.Module):
    def forward(self, x, y):
        return (x << 2) + (y >> 1) + (x << y) + torch.bitwise_right_shift(x, y)


class Stft(nn.Module):
    def __init__(self, center, pad_mode="reflect", onesided=True):
        super().__init__()
        self.center, self.pad_mode, self.onesided = center, pad_mode, onesided
        self.register_buffer("window", torch.hann_window(16))

    def forward(self, x):
        spec = torch.stft(x, 16, hop_length=4, window=self.window, center=self.center,
                          pad_mode=self.pad_mode, onesided=self.onesided, return_complex=True)
        return torch.view_as_real(spec)


class IndexTensor(nn.Module):
    def forward(self, x, i):
        return x[i] + 1, x[:, i], x[:, 1:3, i], x[..., i], x[:, None, 1], x[[0, 1]], x[:, [2, 0]] * 2


class IndexMask(nn.Module):
    def forward(self, x):
        return x[x > 0.5] * 2


class RelativeBias(nn.Module):
    """Swin's relative position bias: a table indexed by a buffer of indices."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(_rand(9, 2))
        coords = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(2), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + 1
        self.register_buffer("index", (rel[..., 0] * 3 + rel[..., 1]).flatten())

    def forward(self, x):
        bias = self.table[self.index].view(4, 4, 2).permute(2, 0, 1)
        return x + bias[None]


class ClassToken(nn.Module):
    """ViT's head: the class token, and a None among slices."""

    def forward(self, x):
        return x[:, 0] + x[:, None, 1:2, :].sum(1).squeeze(1), x[:, :, None] * 2


class SizeScaled(nn.Module):
    """RAFT's correlation scale: aten::sqrt on a traced size (an int), not on a tensor."""

    def forward(self, x):
        return x / torch.sqrt(torch.tensor(x.shape[1]))


class Meshgrid(nn.Module):
    """RAFT's coordinate grid: aten::meshgrid takes its tensors as one list."""

    def forward(self, x):
        gy, gx = torch.meshgrid(torch.arange(x.shape[2]), torch.arange(x.shape[3]), indexing="ij")
        return x + torch.stack([gx, gy]).float()[None]


# traced under torch.no_grad(), as users often do: nn.MultiheadAttention and the transformer
# layers then take their fused fast paths (aten::_native_multi_head_attention, ...)
class Lowered(nn.Module):
    """A functional call TorchScript lowers into several aten nodes."""

    def __init__(self, fn, **kwargs):
        super().__init__()
        self.fn, self.kwargs = fn, kwargs

    def forward(self, x):
        return self.fn(x, **self.kwargs)


# Python-side names of the lowered calls the .pt door folds back whole (test_ts_aten_rules.py)
FOLDED = {"lrn_3d": "F.local_response_norm", "lrn_4d": "F.local_response_norm",
          "lp_pool1d": "F.lp_pool1d", "lp_pool2d_stride": "F.lp_pool2d"}


class Anchors(nn.Module):
    """YOLOv8's anchor points: aten::meshgrid takes a Tensor[] (torch.meshgrid spreads it)."""

    def forward(self, x):
        _, _, h, w = x.shape
        sy, sx = torch.meshgrid(torch.arange(h) + 0.5, torch.arange(w) + 0.5, indexing="ij")
        points = torch.stack((sx, sy), -1).view(-1, 2)
        a, b = torch.broadcast_tensors(x.mean(1, keepdim=True), points.t().reshape(1, 2, h, w))
        return torch.cartesian_prod(x[0, 0, 0], x[0, 0, 1]), a + b


NO_GRAD = {"mha_native", "mha_native_weights", "transformer_layer_native", "transformer_native"}


def _x4(*shape):
    return lambda: (_rand(*shape),)


MODELS = {
    "sqrt_of_size": (SizeScaled, _x4(1, 4, 3, 5)),
    "meshgrid": (Meshgrid, _x4(1, 2, 3, 5)),
    "conv1d_same": (lambda: conv_same(1), _x4(1, 3, 9)),
    "conv2d_same": (lambda: conv_same(2), _x4(1, 3, 7, 8)),
    "conv3d_same": (lambda: conv_same(3), _x4(1, 3, 5, 6, 5)),
    "conv2d_module_same": (lambda: nn.Conv2d(3, 4, 3, padding="same", dilation=2), _x4(1, 3, 7, 8)),
    "conv1d_module_valid": (lambda: nn.Conv1d(3, 4, 3, padding="valid"), _x4(1, 3, 9)),
    "mha_fast_path": (lambda: Mha(True), _x4(2, 5, 16)),
    "mha_seq_first": (lambda: Mha(False), _x4(5, 2, 16)),
    "mha_weights": (MhaWeights, lambda: (_rand(2, 5, 16), _rand(2, 7, 16, seed=1))),
    "mha_native": (lambda: Mha(True), _x4(2, 5, 16)),
    "mha_native_weights": (MhaWeights, lambda: (_rand(2, 5, 16), _rand(2, 7, 16, seed=1))),
    "transformer_layer_native": (lambda: nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), _x4(2, 5, 16)),
    "transformer_native": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, batch_first=True),
                                                         2, enable_nested_tensor=False), _x4(2, 5, 16)),
    "index_tensor": (IndexTensor, lambda: (_rand(3, 4, 5), torch.tensor([2, 0]))),
    "index_mask": (IndexMask, _x4(3, 4)),
    "index_put": (lambda: IndexPut(False), lambda: (_rand(4, 3), _rand(3, 3, seed=1))),
    "index_put_accumulate": (lambda: IndexPut(True), lambda: (_rand(4, 3), _rand(3, 3, seed=1))),
    "copy_into_slice": (CopyIntoSlice, lambda: (_rand(2, 4, 3), _rand(2, 2, 3, seed=1))),
    "adaptive_max_indices_1d": (lambda: AdaptiveMaxIndices(1, 3), _x4(1, 4, 10)),
    "adaptive_max_indices_2d": (lambda: AdaptiveMaxIndices(2, (3, 2)), _x4(1, 4, 9, 8)),
    "adaptive_max_indices_3d": (lambda: AdaptiveMaxIndices(3, 2), _x4(1, 2, 4, 6, 5)),
    "interp_size_nearest": (lambda: Interp(size=(7, 9)), _x4(1, 2, 4, 5)),
    "interp_scale_bilinear": (lambda: Interp(scale_factor=1.5, mode="bilinear"), _x4(1, 2, 4, 6)),
    "interp_scale_bicubic_ac": (lambda: Interp(scale_factor=2, mode="bicubic", align_corners=True), _x4(1, 2, 4, 5)),
    "interp_size_bicubic": (lambda: Interp(size=(6, 7), mode="bicubic"), _x4(1, 2, 4, 5)),
    "interp_nearest_exact": (lambda: Interp(scale_factor=2, mode="nearest-exact"), _x4(1, 2, 4, 5)),
    "interp_nearest_exact_size": (lambda: Interp(size=(5, 9), mode="nearest-exact"), _x4(1, 2, 4, 5)),
    "interp_nearest_exact_1d": (lambda: Interp(size=7, mode="nearest-exact"), _x4(1, 2, 4)),
    "interp_linear_1d": (lambda: Interp(scale_factor=2.0, mode="linear"), _x4(1, 2, 5)),
    "interp_nearest_3d": (lambda: Interp(scale_factor=(1, 2, 2)), _x4(1, 2, 3, 4, 5)),
    "interp_trilinear_size": (lambda: Interp(size=(4, 6, 6), mode="trilinear"), _x4(1, 2, 3, 4, 5)),
    "interp_trilinear_ac": (lambda: Interp(scale_factor=2, mode="trilinear", align_corners=True), _x4(1, 2, 2, 3, 3)),
    "interp_nearest_exact_3d": (lambda: Interp(size=(4, 5, 7), mode="nearest-exact"), _x4(1, 2, 3, 4, 5)),
    "interp_recompute": (lambda: Interp(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
                         _x4(1, 2, 5, 6)),
    "upsample_fn_bilinear": (lambda: UpsampleFn("upsample_bilinear", size=(6, 8)), _x4(1, 2, 3, 4)),
    "upsample_fn_nearest": (lambda: UpsampleFn("upsample_nearest", scale_factor=3), _x4(1, 2, 3, 4)),
    "upsample_fn_mode": (lambda: UpsampleFn("upsample", size=(5, 7), mode="bicubic"), _x4(1, 2, 3, 4)),
    "nn_upsample_3d": (lambda: nn.Upsample(scale_factor=2, mode="trilinear"), _x4(1, 2, 2, 3, 3)),
    "nn_upsample_size": (lambda: nn.Upsample(size=(6, 6), mode="bicubic", align_corners=False), _x4(1, 2, 3, 4)),
    "nn_upsample_exact": (lambda: nn.Upsample(scale_factor=2, mode="nearest-exact"), _x4(1, 2, 3, 4)),
    "nn_upsampling_bilinear": (lambda: nn.UpsamplingBilinear2d(size=(5, 7)), _x4(1, 2, 3, 4)),
    "nn_upsampling_nearest": (lambda: nn.UpsamplingNearest2d(scale_factor=2), _x4(1, 2, 3, 4)),
    "deconv1d_output_size": (lambda: DeconvOutputSize(1), _x4(1, 3, 5)),
    "deconv2d_output_size": (lambda: DeconvOutputSize(2), _x4(1, 3, 4, 5)),
    "deconv3d_output_size": (lambda: DeconvOutputSize(3), _x4(1, 3, 3, 4, 3)),
    "list_unpack": (ListUnpack, _x4(2, 4, 3)),
    "computed_slice": (ComputedSlice, _x4(2, 6, 5)),
    "shifts": (Shifts, lambda: (torch.arange(12).reshape(3, 4), torch.tensor([1, 2, 0, 3]))),
    "stft_center_reflect": (lambda: Stft(True), _x4(1, 64)),
    "stft_center_constant": (lambda: Stft(True, "constant"), _x4(1, 64)),
    "stft_center_replicate": (lambda: Stft(True, "replicate"), _x4(2, 60)),
    "stft_center_circular": (lambda: Stft(True, "circular"), _x4(1, 64)),
    "stft_no_center": (lambda: Stft(False), _x4(1, 64)),
    "stft_two_sided": (lambda: Stft(True, onesided=False), _x4(1, 64)),
    "relative_bias": (RelativeBias, _x4(1, 2, 4, 4)),
    "class_token": (ClassToken, _x4(2, 5, 8)),
    "lrn_3d": (lambda: Lowered(F.local_response_norm, size=4, alpha=0.1, beta=0.5, k=2.0), _x4(2, 8, 6)),
    "lrn_4d": (lambda: Lowered(F.local_response_norm, size=3), _x4(1, 8, 5, 6)),
    "lp_pool1d": (lambda: Lowered(F.lp_pool1d, norm_type=3, kernel_size=2), _x4(1, 4, 9)),
    "anchors_meshgrid": (Anchors, _x4(1, 3, 4, 5)),
    "lp_pool2d_stride": (lambda: Lowered(F.lp_pool2d, norm_type=2, kernel_size=3, stride=1), _x4(1, 4, 7, 8)),
}
