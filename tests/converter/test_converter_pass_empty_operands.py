"""Zero-size operands (passes/empty_operands.py): the empty past of a key/value cache
concatenated onto keys. ncnn and ONNX concatenate the non-empty operands only, pnnx.param keeps
the cat as traced; a zero-size tensor ncnn would have to hold is refused, never written as
`MemoryData 0=0` (which corrupts ncnn's heap); a checker failure of the ONNX writer is that
emitter's refusal and the other six artefacts are still written."""
from __future__ import annotations

import re

import torch
import torch.nn as nn

from conformance_runs import assert_close, run_ncnn, run_onnx
from pnnx_reference import api

EXACT = {"atol": 1e-6, "rtol": 1e-6}


class EmptyPast(nn.Module):
    """GPT-2's and LLaMA's cache start: a 1-d empty past (torch.cat's legacy rule lets it
    join operands of any rank) and a (batch, heads, 0, dim) one."""

    def forward(self, k):
        flat = torch.cat([torch.zeros(0), k], dim=-2)
        shaped = torch.cat([torch.zeros(1, 4, 0, 16), k, torch.zeros(1, 4, 0, 16)], dim=2)
        return flat * 2 + shaped


class AllEmpty(nn.Module):
    def forward(self, x):
        return torch.cat([x[:, :0], torch.zeros(1, 0)], dim=1).sum(1, keepdim=True) + x


def _export(tmp_path, model=None, **kw):
    x = torch.rand(1, 4, 8, 16, generator=torch.Generator().manual_seed(0))
    return api.export(model or EmptyPast(), (x,), tmp_path, "m", fp16=False, **kw), x


def test_an_empty_concatenation_operand_is_left_out_on_ncnn_and_onnx(tmp_path):
    result, x = _export(tmp_path)
    assert sorted(result.paths) == sorted(api.ARTEFACTS) and not result.unsupported
    expected = [EmptyPast()(x)]
    param = (tmp_path / "m.ncnn.param").read_text()
    assert "MemoryData" not in param and "Concat" not in param
    assert_close(run_ncnn(tmp_path / "m", [x]), expected, EXACT, "ncnn")
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", [x]), expected, EXACT, "onnxruntime")
    assert [line.split()[0] for line in (tmp_path / "m.pnnx.param").read_text().splitlines()].count("torch.cat") == 2


def test_a_zero_size_tensor_on_ncnn_is_refused(tmp_path):
    result, _ = api.export(AllEmpty(), (torch.rand(1, 3),), tmp_path, "m", fp16=False), None
    assert "has no elements: ncnn has no empty blob" in result.unsupported["ncnn"]
    assert not (tmp_path / "m.ncnn.param").exists()


def test_a_checker_failure_is_the_onnx_emitters_refusal(tmp_path, monkeypatch):
    """The concatenation lowering as it was (every operand): GPT-2's "Concat axis must be in
    [-rank, rank-1]". The ONNX file of an earlier conversion goes too."""
    from pnnx_reference.emit.onnx.families import concat

    monkeypatch.setattr(concat, "concatenated", lambda op: list(op.inputs))
    (tmp_path / "m.pnnx.onnx").write_bytes(b"an earlier conversion's")
    result, _ = _export(tmp_path)
    assert re.search(r"torch\.cat \(torch\.cat_\d+\): the lowered ONNX model fails the checker: .*axis must "
                     r"be in \[-rank, rank-1\]", result.unsupported["onnx"])
    assert sorted(result.paths) == sorted(set(api.ARTEFACTS) - {"pnnxonnx"})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["m.pnnx.param", "m.pnnx.bin", "m_pnnx.py", "m.ncnn.param", "m.ncnn.bin", "m_ncnn.py"])
