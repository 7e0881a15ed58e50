import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from converter_helpers import check_links, op_of, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.passes import fuse_attention, fuse_expression


class HandAttention(nn.Module):
    def __init__(self, scale=None, dim=-1):
        super().__init__()
        self.scale, self.dim = scale, dim

    def forward(self, q, k, v):
        scores = q @ k.transpose(-2, -1)
        scores = scores * (self.scale if self.scale is not None else 1 / math.sqrt(q.size(-1)))
        return torch.softmax(scores, dim=self.dim) @ v


def _qkv():
    torch.manual_seed(0)
    return tuple(torch.rand(1, 2, 5, 8) for _ in range(3))


def _fused(model):
    graph = trace(model, _qkv()).graph
    fuse_expression.run(graph)
    fuse_attention.run(graph)
    return graph


def test_hand_written_attention_becomes_sdpa():
    graph = _fused(HandAttention())
    assert types(graph) == ["pnnx.Input"] * 3 + ["F.scaled_dot_product_attention", "pnnx.Output"]
    op = op_of(graph, "F.scaled_dot_product_attention")
    assert op.params["scale"] is None and op.inputnames == ["query", "key", "value"]
    check_links(graph)


def test_custom_scale_is_kept_and_numbers_match():
    model = HandAttention(scale=0.3)
    op = op_of(_fused(model), "F.scaled_dot_product_attention")
    assert abs(op.params["scale"] - 0.3) < 1e-7
    q, k, v = _qkv()
    torch.testing.assert_close(F.scaled_dot_product_attention(q, k, v, scale=op.params["scale"]),
                               model(q, k, v))


def test_softmax_over_another_dim_is_not_attention():
    graph = _fused(HandAttention(dim=1))
    assert "F.scaled_dot_product_attention" not in types(graph)
