"""Models whose shapes follow the input (each with its two input shapes, as `inputshape2`
gives them), shared by the emitters' dynamic-shape tests: sizes read with x.size(d), reshape_as,
flatten of a dynamic input, a resize to another input's size, broadcasts of lower-rank inputs,
slices whose bounds follow sizes, expands to sizes that follow the input, position ids and a
causal mask over a length that follows the input, T5's relative position bias and its
cross-attention bias of zeros."""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ReshapeBySizes(nn.Module):
    def forward(self, x, y, z):
        x = x.reshape(x.size(0) // 128, y.size(1), -1)
        z = z.reshape(z.size(0), -1, z.size(3) * 3, z.size(2) // 3)
        return F.relu(x), F.relu(z)


class ReshapeAsFlatten(nn.Module):
    def forward(self, x, y):
        return x.reshape_as(y) + 1, torch.flatten(y, 1) * 2


class FlattenBatch(nn.Module):
    def forward(self, x):
        return torch.flatten(F.relu(x), 1), x.view(x.size(0), x.size(1), -1).unsqueeze(1) * 3


class InterpolateToOtherSize(nn.Module):
    def forward(self, x, y):
        return F.interpolate(x, size=(y.size(2) * 2, y.size(3) + 3), mode="bilinear", align_corners=False)


class BroadcastLowerRank(nn.Module):
    """Operands of lower rank than the other get outer 1s: a Reshape of dynamic dims."""

    def forward(self, x, y, z):
        return x + y, y * z, x - z


class SliceBySizes(nn.Module):
    def forward(self, x, y):
        # -9 is past the start of dim 1 at both shapes (6 and 8): Python clamps it to 0
        return x[:, :y.size(1)] * 2, x[:, 1:x.size(2) - 1, 2:] + 1, x[..., -3:] - 1, x[:, -9:] * 3


class StaticSlicesOfDynamicInput(nn.Module):
    """Strided and selecting slices of static dims of an input whose batch follows the input."""

    def forward(self, x):
        return x[:, :, ::2] * 2, x[:, 1] + 1


class SameBatchReshapes(nn.Module):
    """Reshapes that keep dim 0 (the batch the pools want) run per sample."""

    def forward(self, x, y):
        out0 = x.reshape(x.size(0), x.size(1), -1)
        out1 = x.reshape_as(y)
        out2 = torch.flatten(x, 1, 2)
        return F.max_pool1d(out0, 1), F.max_pool1d(out1, 1), F.max_pool1d(out2, 1)


class ReshapeReusingBatch(nn.Module):
    def forward(self, x):
        x = F.max_pool2d(x, 1)
        return F.max_pool1d(x.reshape(x.size(0), x.size(0), -1), 1)


class ExpandBySizes(nn.Module):
    """expand to a list of sizes read from the inputs: no change on the dims that follow the
    input (BERT's token types, gathered then expanded to (batch, length)), a static size 1
    widened (LLaMA's grouped key/value heads), new leading dims."""

    def forward(self, x, k, z):
        kept = (x * 2).expand(x.size(0), x.size(1), -1)
        heads = k.expand(k.size(0), 3, k.size(2), 4)
        return kept + 1, heads * 2, z.expand(2, z.size(0), 5) - 1


class CausalByLength(nn.Module):
    """Position ids arange(length) looked up in a table, and is_causal attention, over a length
    that follows the input (GPT-2 and LLaMA at two lengths)."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(32, 8)

    def forward(self, x):
        positions = torch.arange(x.size(2))
        q = x + self.table(positions)
        return F.scaled_dot_product_attention(q, x, x * 2, is_causal=True), positions.float() * 2


class RelativeBiasByLength(nn.Module):
    """T5's relative position bias over a length that follows the input: relative positions from
    two aranges, log-spaced buckets (log(0) = -inf cast to an index on the diagonal, which where()
    leaves out), full_like, a table looked up at an (L, L) index to (L, L, heads) and permuted to
    the attn_mask (1, heads, L, L), two sizes that follow the input in each."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(16, 2)

    def forward(self, x):
        n = x.size(2)
        relative = torch.arange(n)[None, :] - torch.arange(n)[:, None]
        distance = relative.abs()
        far = 4 + (torch.log(distance.float() / 4) / math.log(2) * 4).to(torch.long)
        far = torch.min(far, torch.full_like(far, 7))
        buckets = (relative > 0).to(torch.long) * 8 + torch.where(distance < 4, distance, far)
        bias = self.table(buckets).permute(2, 0, 1).unsqueeze(0)
        return F.scaled_dot_product_attention(x, x, x, attn_mask=bias)


class ZeroBiasByLengths(nn.Module):
    """A bias of zeros over two lengths that follow the input (T5's cross-attention, which has
    no relative position bias): torch.zeros of a size list read from both inputs."""

    def forward(self, q, k):
        bias = torch.zeros(1, q.size(1), q.size(2), k.size(2))
        return F.scaled_dot_product_attention(q, k, k * 2, attn_mask=bias)


class PackedCausalMask(nn.Module):
    """transformers' causal mask as tracing records it (masking_utils), over a length that
    follows the input: packed-sequence indices cumsum(diff(positions) != 1) of positions
    arange(L), read back with the positions at the query and key indices, and-ed with a scalar
    new_ones: k <= q at every length, which the ncnn emitter folds (shape_values)."""

    def forward(self, x):
        n = x.size(2)
        p = torch.arange(n).unsqueeze(0)
        packed = (torch.diff(p, dim=-1, prepend=p[:, :1] - 1) != 1).cumsum(-1)
        q, k = torch.arange(n)[None, None, :, None], torch.arange(n)[None, None, None, :]
        b = torch.zeros(1, 1, 1, 1, dtype=torch.long)
        mask = q.new_ones((), dtype=torch.bool) & (packed[b, q] == packed[b, k]).to(torch.bool) & (p[b, k] <= p[b, q])
        return F.scaled_dot_product_attention(x, x, x * 2, attn_mask=mask.expand(1, -1, n, n))


class AllTrueMaskByLength(nn.Module):
    """BERT's and T5's padding mask as torch.export records it with no attention_mask given:
    arange(L) >= 0 expanded to (1, 1, L, L), true everywhere at every length, as SDPA's
    attn_mask (BERT) and as where()'s condition over the scores (T5)."""

    def forward(self, x):
        n = x.size(2)
        mask = (torch.arange(n)[None, None, :, None] >= 0).expand(1, -1, n, n)
        scores = torch.where(mask, x @ x.transpose(-1, -2), -3.0e38)
        return F.scaled_dot_product_attention(x, x, x * 2, attn_mask=mask), scores.softmax(-1)


class FullOfAShape(nn.Module):
    """T5's bucket cap as the ONNX door records it: torch.full over the sizes of an index tensor
    whose shape follows the input (a list expression), then minimum."""

    def forward(self, x):
        n = x.size(2)
        distance = (torch.arange(n)[None, :] - torch.arange(n)[:, None]).abs()
        cap = torch.full((distance.size(0), distance.size(1)), 3, dtype=torch.long)
        return x + torch.minimum(distance, cap).float()


MODELS = {
    "reshape_by_sizes": (ReshapeBySizes, [(256, 5), (1, 2, 3), (2, 4, 6, 10)], [(512, 5), (1, 4, 3), (3, 4, 9, 12)]),
    "reshape_as_flatten": (ReshapeAsFlatten, [(1, 3, 16), (1, 6, 8)], [(1, 3, 32), (1, 6, 16)]),
    "flatten_batch": (FlattenBatch, [(2, 3, 4, 5)], [(3, 3, 6, 7)]),
    "broadcast_lower_rank": (BroadcastLowerRank, [(2, 3, 4, 5), (4, 5), (5,)], [(3, 3, 6, 7), (6, 7), (7,)]),
    "same_batch_reshapes": (SameBatchReshapes, [(2, 3, 4, 5), (2, 3, 20)], [(4, 3, 6, 7), (4, 3, 42)]),
    "reshape_reusing_batch": (ReshapeReusingBatch, [(2, 4, 5, 7)], [(4, 4, 5, 7)]),
    "slice_by_sizes": (SliceBySizes, [(1, 6, 10), (1, 3, 7)], [(1, 8, 14), (1, 5, 7)]),
    "static_slices_of_dynamic_input": (StaticSlicesOfDynamicInput, [(2, 3, 8)], [(4, 3, 8)]),
    "interpolate_to_other_size": (InterpolateToOtherSize, [(1, 3, 8, 9), (1, 3, 4, 5)], [(1, 3, 8, 9), (1, 3, 6, 7)]),
    "causal_by_length": (CausalByLength, [(1, 2, 6, 8)], [(1, 2, 11, 8)]),
    "relative_bias_by_length": (RelativeBiasByLength, [(1, 2, 6, 8)], [(1, 2, 11, 8)]),
    "zero_bias_by_lengths": (ZeroBiasByLengths, [(1, 2, 4, 8), (1, 2, 6, 8)], [(1, 2, 5, 8), (1, 2, 9, 8)]),
    "all_true_mask_by_length": (AllTrueMaskByLength, [(1, 2, 6, 8)], [(1, 2, 11, 8)]),
    "full_of_a_shape": (FullOfAShape, [(1, 2, 6, 6)], [(1, 2, 11, 11)]),
    "packed_causal_mask": (PackedCausalMask, [(1, 2, 6, 8)], [(1, 2, 11, 8)]),
    "expand_by_sizes": (ExpandBySizes, [(1, 6, 8), (2, 1, 5, 4), (6, 5)], [(1, 9, 8), (2, 1, 7, 4), (9, 5)]),
}


def inputs_at(shapes, seed):
    torch.manual_seed(seed)
    return [torch.rand(*s) for s in shapes]
