"""The reference-export route converts a case's fp16-rounded copy from the case's own export with
the copy's weights (`with_weights`), not from a second torch.export: the program and the files
must be those a fresh export of the copy gives."""
from __future__ import annotations

import filecmp

import torch
import torch.nn as nn

from pnnx_conformance.converters import reference_export
from pnnx_conformance.converters.reference_export import ReferenceExportConverter, with_weights
from pnnx_conformance.oracle import build_model, has_lazy_weights, round_inputs, round_model, seed_lazy_weights
from pnnx_op_cases.registry import select


class Tensors(nn.Module):
    """Every kind of tensor an export holds: parameters, persistent buffers (an int64 one too),
    a non-persistent buffer (a constant of the program) and a plain tensor attribute (lifted)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.register_buffer("scale", torch.rand(4, 1, 1), persistent=False)
        self.offset = torch.rand(4, 1, 1)

    def forward(self, x):
        return self.bn(self.conv(x)) * self.scale + self.offset


def _copy(seed: int) -> Tensors:
    torch.manual_seed(seed)
    model = Tensors().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    return model


def test_the_case_export_with_the_copy_weights_is_what_exporting_the_copy_gives():
    x = torch.rand(1, 3, 8, 8)
    program = torch.export.export(_copy(0), (x,))
    copy = round_model(_copy(1), "fp16")
    copy.offset = program.constants["offset"]  # a plain attribute is no weight: the copy's is the case's
    rounded = round_inputs([x], "fp16")
    got, want = with_weights(program, copy, rounded), torch.export.export(copy, tuple(rounded))
    assert got.graph_module.code == want.graph_module.code
    assert got.state_dict.keys() == want.state_dict.keys()
    for name, value in want.state_dict.items():
        assert torch.equal(got.state_dict[name], value) and type(got.state_dict[name]) is type(value), name
    assert got.constants.keys() == want.constants.keys()
    assert all(torch.equal(got.constants[name], value) for name, value in want.constants.items())
    assert torch.equal(got.example_inputs[0][0], rounded[0])
    assert torch.equal(got.module()(rounded[0]), copy(rounded[0]))
    assert not torch.equal(program.module()(rounded[0]), copy(rounded[0]))  # the case's own weights differ


def test_a_model_holding_other_tensors_is_exported_anew():
    x = torch.rand(1, 3, 8, 8)
    program = torch.export.export(_copy(0), (x,))
    other = _copy(1)
    other.conv = nn.Conv2d(3, 4, 1)
    assert with_weights(program, other, [x]) is None


def test_the_rounded_copy_converts_to_the_files_a_fresh_export_gives(tmp_path, monkeypatch):
    exports = []
    monkeypatch.setattr(reference_export, "export_case",
                        lambda *a, _export=reference_export.export_case: exports.append(a[0].id) or _export(*a))
    both, fresh = ReferenceExportConverter(), ReferenceExportConverter()
    try:
        for pattern in ("nn.BatchNorm2d/*", "nn.LazyConv2d/*", "nn.Conv2d/*"):
            case = select(pattern=pattern)[0]
            exports.clear()
            _convert(both, case, None, tmp_path / "fp32")
            reused = _convert(both, case, "fp16", tmp_path / "reused")
            assert exports == [case.id], pattern  # the copy was not exported again
            anew = _convert(fresh, case, "fp16", tmp_path / "anew")
            assert exports == [case.id, case.id], pattern
            assert reused.paths.keys() == anew.paths.keys() and "ncnn.bin" in anew.paths
            for kind, path in anew.paths.items():
                assert filecmp.cmp(reused.paths[kind], path, shallow=False), (pattern, kind)
    finally:
        both.close()
        fresh.close()


def _convert(converter, case, rounding, folder):
    """What the harness hands a converter for the case (its fp16-rounded copy for "fp16")."""
    model = build_model(case, rounding, keep_lazy=True)
    if rounding is None and has_lazy_weights(model):
        seed_lazy_weights(case)
    inputs = round_inputs(case.make_inputs(), rounding)
    return converter.convert(case, folder / case.id.replace("/", "__"), model, inputs, fp16=rounding == "fp16")
