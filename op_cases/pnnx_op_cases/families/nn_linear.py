"""Linear-like and lookup modules: Linear, LazyLinear, Bilinear, Embedding, EmbeddingBag."""
from __future__ import annotations

from ..builders import ints, module_case, rand
from ..registry import family

CHANNELS = [(1, 4), (3, 8), (4, 4), (8, 12), (12, 13), (13, 16), (16, 3)]


@family("nn.Linear")
def linear():
    op = "nn.Linear"
    yield module_case(op, "r2", "nn.Linear(12, 16)", [rand(2, 12)], smoke=True)
    yield module_case(op, "r3", "nn.Linear(12, 16)", [rand(2, 5, 12)], smoke=True)
    yield module_case(op, "r1", "nn.Linear(12, 16)", [rand(12)], tags={"unbatched"})
    yield module_case(op, "r4", "nn.Linear(8, 4)", [rand(1, 3, 5, 8)])
    yield module_case(op, "nobias", "nn.Linear(12, 16, bias=False)", [rand(2, 12)])
    yield module_case(op, "out1", "nn.Linear(12, 1)", [rand(3, 12)])
    yield module_case(op, "b1", "nn.Linear(12, 16)", [rand(1, 12)])
    for ci, co in CHANNELS:
        yield module_case(op, f"c{ci}_{co}", f"nn.Linear({ci}, {co})", [rand(2, ci)])
    yield module_case(op, "noncontiguous", "nn.Linear(6, 8)", [rand(2, 6, 5)],
                      pre="x0 = x0.transpose(1, 2)")
    # parametrized (and the legacy hooks): converted as the Linear they compute
    for variant, wrap in (("weight_norm", "nn.utils.parametrizations.weight_norm"),
                          ("spectral_norm", "nn.utils.parametrizations.spectral_norm"),
                          ("legacy_weight_norm", "nn.utils.weight_norm"),
                          ("legacy_spectral_norm", "nn.utils.spectral_norm")):
        yield module_case(op, variant, f"{wrap}(nn.Linear(12, 16))", [rand(2, 12)])


@family("nn.LazyLinear")
def lazy_linear():
    op = "nn.LazyLinear"
    for variant, args, shape in (("r2", "16", (2, 12)), ("r3", "16", (2, 5, 12)),
                                 ("nobias", "16, bias=False", (2, 12)), ("r1", "8", (12,)),
                                 ("c13_3", "3", (4, 13))):
        yield module_case(op, variant, f"nn.LazyLinear({args})", [rand(*shape)],
                          init=f"self.m(torch.zeros{shape})", smoke=variant == "r2")
    yield module_case(op, "uninitialized", "nn.LazyLinear(16)", [rand(2, 12)],
                      reasons={"no-trace": "torch.jit.trace refuses uninitialized lazy "
                               "parameters; the first forward materializes them"})


@family("nn.Bilinear")
def bilinear():
    op = "nn.Bilinear"
    yield module_case(op, "r2", "nn.Bilinear(6, 5, 8)", [rand(3, 6), rand(3, 5)], smoke=True)
    yield module_case(op, "r3", "nn.Bilinear(6, 5, 8)", [rand(2, 4, 6), rand(2, 4, 5)])
    yield module_case(op, "nobias", "nn.Bilinear(6, 5, 8, bias=False)", [rand(3, 6), rand(3, 5)])
    yield module_case(op, "same_in", "nn.Bilinear(4, 4, 13)", [rand(2, 4), rand(2, 4)])
    yield module_case(op, "out1", "nn.Bilinear(3, 12, 1)", [rand(5, 3), rand(5, 12)])
    yield module_case(op, "unbatched", "nn.Bilinear(6, 5, 8)", [rand(6), rand(5)],
                      tags={"unbatched"})
    yield module_case(op, "shared_input", "nn.Bilinear(8, 8, 4)", [rand(3, 8)],
                      call="self.m(x0, x0)")


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
