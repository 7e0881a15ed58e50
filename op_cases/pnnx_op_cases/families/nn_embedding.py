"""nn.*: the `embedding` family (emit/*/families/embedding.py): Embedding, EmbeddingBag, Linear."""
from __future__ import annotations

from ..builders import ints, module_case, rand
from ..registry import family


@family("nn.Embedding")
def embedding():
    op = "nn.Embedding"
    yield module_case(op, "r2", "nn.Embedding(20, 8)", [ints(2, 5, high=20)], smoke=True)
    yield module_case(op, "r1", "nn.Embedding(20, 8)", [ints(7, high=20)])
    yield module_case(op, "r3", "nn.Embedding(10, 4)", [ints(2, 3, 4, high=10)])
    yield module_case(op, "dim13", "nn.Embedding(16, 13)", [ints(3, 6, high=16)])
    yield module_case(op, "padding_idx", "nn.Embedding(20, 8, padding_idx=0)",
                      [ints(2, 5, high=4)])
    yield module_case(op, "i32", "nn.Embedding(20, 8)", [ints(2, 5, high=20, dtype="i32")])
    yield module_case(op, "max_norm", "nn.Embedding(20, 8, max_norm=1.0)", [ints(2, 5, high=20)],
                      init="self.m.weight.mul_(2)")
    yield module_case(op, "from_pretrained",
                      "nn.Embedding.from_pretrained(torch.rand(12, 6) * 2 - 1)",
                      [ints(4, high=12)])


@family("nn.EmbeddingBag")
def embedding_bag():
    op = "nn.EmbeddingBag"
    bags = [ints(3, 4, high=20)]                         # 2D input: one bag per row
    flat = [ints(10, high=20)]
    offsets = "torch.tensor([0, 3, 3, 7])"               # includes an empty bag
    yield module_case(op, "mean_2d", "nn.EmbeddingBag(20, 8)", bags, smoke=True)
    yield module_case(op, "sum_2d", "nn.EmbeddingBag(20, 8, mode='sum')", bags)
    yield module_case(op, "max_2d", "nn.EmbeddingBag(20, 8, mode='max')", bags)
    yield module_case(op, "mean_offsets", "nn.EmbeddingBag(20, 8)", flat,
                      call=f"self.m(x0, {offsets})", smoke=True)
    yield module_case(op, "sum_offsets_last", "nn.EmbeddingBag(20, 8, mode='sum', "
                      "include_last_offset=True)", flat, call=f"self.m(x0, {offsets})")
    yield module_case(op, "sum_per_sample_weights", "nn.EmbeddingBag(20, 8, mode='sum')",
                      bags + [rand(3, 4, low=0, high=1)], call="self.m(x0, per_sample_weights=x1)")
    yield module_case(op, "padding_idx", "nn.EmbeddingBag(20, 8, padding_idx=1)",
                      [ints(3, 4, high=4)])
    yield module_case(op, "offsets_input", "nn.EmbeddingBag(20, 13, mode='max')",
                      flat + [ints(3, high=1)], pre="x1 = x1 + torch.tensor([0, 4, 6])",
                      call="self.m(x0, x1)")


@family("nn.Linear", "nn.Embedding")
def ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield module_case("nn.Linear", "b1_relu", "nn.Linear(10, 6)", [rand(1, 10)], call="F.relu(self.m(x0))")
    yield module_case("nn.Linear", "r3_b1_nobias", "nn.Linear(10, 6, bias=False)", [rand(1, 5, 10)])
    yield module_case("nn.Embedding", "r2_b1", "nn.Embedding(20, 8)", [ints(1, 7, high=20)])
