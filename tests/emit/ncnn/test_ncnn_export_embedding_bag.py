"""nn.EmbeddingBag / F.embedding_bag -> Embed + a Reduction per bag, on batchless graphs:
(B, L) indices reduce the bag axis; 1-d indices with constant offsets reduce Crops between them
(empty bags are zeros); padding_idx entries are left out (mean divides by their count)."""
from __future__ import annotations

import ncnn
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import FnOf
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator

NUM, DIM = 12, 6


class BagWithOffsets(nn.Module):
    """nn.EmbeddingBag fed a 1-d index vector and constant offsets."""

    def __init__(self, offsets, **kwargs) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.bag = nn.EmbeddingBag(NUM, DIM, **kwargs)
        self.register_buffer("offsets", torch.tensor(offsets))

    def forward(self, x):
        return self.bag(x, self.offsets)


def _bag(**kwargs) -> nn.Module:
    torch.manual_seed(0)
    return nn.EmbeddingBag(NUM, DIM, **kwargs).eval()


def _indices(*shape, seed: int = 1) -> torch.Tensor:
    return torch.randint(0, NUM, shape, generator=torch.Generator().manual_seed(seed))


def _export(tmp_path, model, inputs):
    base = tmp_path / "m"
    graph = capture(model, tuple(inputs))
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    return base


def _check(tmp_path, model, inputs, mode="fp32"):
    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)[0]
    assert_close([got], [expected], FP32)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_rank2_bags_reduce_the_bag_axis(tmp_path, mode):
    _check(tmp_path, _bag(mode=mode), [_indices(3, 5)])


def test_functional_rank2_mean(tmp_path):
    model = FnOf(lambda s, x: F.embedding_bag(x, s.w, mode="mean"), w=torch.randn(NUM, DIM))
    _check(tmp_path, model, [_indices(4, 3)])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets, last", [([0, 2, 2, 7], False), ([0, 3, 3, 9, 10], True), ([0], False)])
def test_constant_offsets_crop_each_bag(tmp_path, mode, offsets, last):
    """Bags between offsets, an empty bag (zeros in every mode) and include_last_offset."""
    model = BagWithOffsets(offsets, mode=mode, include_last_offset=last).eval()
    _check(tmp_path, model, [_indices(10)])


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_padding_entries_are_left_out(tmp_path, mode):
    """Row 2 is padding; the last bag is all padding (torch: zeros), the mean divides by the
    count of the other entries."""
    x = torch.tensor([[2, 1, 2, 5], [3, 4, 5, 6], [2, 2, 2, 2]])
    _check(tmp_path, _bag(mode=mode, padding_idx=2), [x])


def test_padding_with_offsets(tmp_path):
    model = BagWithOffsets([0, 3, 5], mode="mean", padding_idx=2).eval()
    _check(tmp_path, model, [torch.tensor([2, 1, 2, 2, 2, 7, 2, 0])])


def test_per_sample_weights_scale_before_the_sum(tmp_path):
    model = FnOf(lambda s, x, w: F.embedding_bag(x, s.w, mode="sum", per_sample_weights=w),
                 w=torch.randn(NUM, DIM))
    _check(tmp_path, model, [_indices(3, 4), torch.randn(3, 4)])


def test_per_sample_weights_with_offsets(tmp_path):
    model = FnOf(lambda s, x, w: F.embedding_bag(x, s.w, s.off, mode="sum", per_sample_weights=w),
                 w=torch.randn(NUM, DIM), off=torch.tensor([0, 4, 6]))
    _check(tmp_path, model, [_indices(9), torch.randn(9)])


def test_max_with_padding_is_refused(tmp_path):
    with pytest.raises(UnsupportedOperator, match="max with padding_idx"):
        _export(tmp_path, _bag(mode="max", padding_idx=1), [_indices(3, 4)])


def test_runtime_offsets_are_refused(tmp_path):
    model = FnOf(lambda s, x, o: F.embedding_bag(x, s.w, o, mode="sum"), w=torch.randn(NUM, DIM))
    with pytest.raises(UnsupportedOperator, match="offsets given at run time"):
        _export(tmp_path, model, [_indices(8), torch.tensor([0, 3])])


@pytest.mark.vulkan
@pytest.mark.skipif(ncnn.get_gpu_count() == 0, reason="no Vulkan device")
@pytest.mark.parametrize("model, inputs", [
    (lambda: _bag(mode="mean", padding_idx=2), lambda: [torch.tensor([[2, 1, 2, 5], [2, 2, 2, 2]])]),
    (lambda: BagWithOffsets([0, 2, 2, 7], mode="max").eval(), lambda: [_indices(10)]),
])
def test_vulkan_matches_torch(tmp_path, model, inputs):
    _check(tmp_path, model(), inputs(), mode="vulkan-fp32")
