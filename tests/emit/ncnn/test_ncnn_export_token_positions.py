"""Integers computed from token ids on ncnn (issue 29, item 5): RoBERTa's position ids
(`ids.ne(pad)`, cumsum, masked, offset) and BERT's token types gathered from a constant
buffer at those positions, each looked up in its embedding table. ncnn carries computed
integers as float values, which Embed cannot read (it reads int32 bits): the ids are fed as
values and each table is looked up by a one-hot product, exact for integers."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn
from pnnx_reference import api

EXACT = {"atol": 1e-6, "rtol": 1e-6}
PAD = 1


class Positions(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.words = nn.Embedding(3000, 8, padding_idx=PAD)   # ids past 2048: not exact in fp16
        self.positions = nn.Embedding(16, 8, padding_idx=PAD)
        self.types = nn.Embedding(2, 8)
        self.register_buffer("type_ids", torch.zeros(1, 16, dtype=torch.long), persistent=False)

    def forward(self, ids):
        mask = ids.ne(PAD).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + PAD
        types = torch.gather(self.type_ids, 1, positions)
        return self.words(ids) + self.positions(positions) + self.types(types)


@pytest.mark.parametrize("ids", [[[5, 2999, 7, 2048, 2049, 3, PAD, PAD]], [[PAD, 4, 5, 6, 7, 8, 9, 10]]],
                         ids=["padded_end", "padded_start"])
def test_positions_computed_from_token_ids_are_exact_on_ncnn(tmp_path, ids):
    model, ids = Positions().eval(), torch.tensor(ids)
    result = api.export(model, (ids,), tmp_path, "m", fp16=False)
    assert not result.unsupported
    param = (tmp_path / "m.ncnn.param").read_text()
    assert "Embed " not in param  # the ids are fed as values, which Embed would read as int32 bits
    assert "in0_values = in0.float()" in (tmp_path / "m_ncnn.py").read_text()
    with torch.no_grad():
        expected = [model(ids)]
    assert_close(run_ncnn(tmp_path / "m", [ids]), expected, EXACT, "ncnn fp32")
    assert_close(run_ncnn(tmp_path / "m", [ids], "default"), expected, {"atol": 2e-3, "rtol": 2e-3},
                 "ncnn default (fp16 storage: the table rows, the indices stay exact)")


def test_ids_only_embed_reads_are_still_fed_as_int32_bits(tmp_path):
    model = nn.Embedding(10, 4).eval()
    api.export(model, (torch.tensor([[1, 2, 3]]),), tmp_path, "m", fp16=False)
    assert "Embed " in (tmp_path / "m.ncnn.param").read_text()
