"""benchmarks/onnx_door_writes.py: the ONNX door's measured rows of where_gaps.tsv and where's
ONNX_SPELLINGS are what converting the op cases through the door gives. A few rows are measured
again here (the whole sweep takes minutes: run the script with --check)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from pnnx_op_cases import where

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "onnx_door_writes.py"


@pytest.fixture(scope="module")
def door():
    spec = importlib.util.spec_from_file_location("onnx_door_writes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def test_spellings_of_one_operator(door):
    assert door.same_operator("nn.AvgPool2d", "F.avg_pool2d")
    assert door.same_operator("nn.LeakyReLU", "F.leaky_relu")
    assert door.same_operator("torch.relu", "F.relu")
    assert not door.same_operator("nn.AdaptiveMaxPool2d", "F.max_pool2d")
    assert not door.same_operator("F.relu", "F.relu")


def test_verdicts(door):
    def finding(op, *outcomes):
        return door.Finding(op, list(outcomes))

    written = door.Outcome
    assert finding("nn.CELU", written("a", True, ("F.celu",), ("Celu",)),
                   written("b", True, ("F.celu",), ("Celu", "Transpose"))).verdict() == "spelled F.celu by Celu"
    assert finding("nn.CELU", written("a", True, ("F.celu",), ("Celu",)), written("b", True, ("F.elu",))).verdict() \
        == "spelled F.celu by Celu"
    assert finding("nn.CELU", written("a", True, ("F.celu", "torch.add")), written("b", True, ("F.elu",))).verdict() \
        == "written as F.celu + torch.add or F.elu"
    assert finding("nn.Softmin", written("a", True, ("F.softmax", "pnnx.Expression"))).verdict() \
        == "written as F.softmax + pnnx.Expression"
    assert finding("nn.Identity", written("a", True, ())).verdict() == "written as nothing"
    assert finding("Tensor.sigmoid", written("a", True, ("Tensor.sigmoid",))).verdict() == "written under its own name"
    assert finding("nn.Linear", written("a", True, ("Tensor.reshape", "nn.Linear"))).verdict() \
        == "written under its own name"
    many = tuple(f"torch.op{i:02}" for i in range(20))
    assert finding("nn.Transformer", written("a", True, many), written("b", True, many[:19])).verdict() \
        == "written as some of " + ", ".join(many)
    assert finding("torch.trunc", written("a", exporter="torch.onnx.export: no"),
                   written("b", True, ("torch.floor",))).verdict() == "written as torch.floor"
    assert finding("torch.trunc", written("a", exporter="torch.onnx.export: no")).verdict() \
        == "no usable export: torch.onnx.export: no"
    assert finding("nn.CELU", written("a", True, ("F.celu",)), written("b", bug="conversion fails: x")).verdict() \
        == "written as F.celu; BUG b: conversion fails: x"
    assert finding("nn.CELU", written("b", bug="conversion fails: x")).verdict() \
        == "nothing converts; BUG b: conversion fails: x"


def test_a_pattern_stands_for_rows_only_where_each_measured_the_same(door):
    def finding(op, *written):
        return door.Finding(op, [door.Outcome("a", True, written)])

    lines = door.gap_lines([finding("nn.ConstantPad1d", "F.pad"), finding("nn.ConstantPad2d", "F.pad"),
                            finding("nn.ConstantPad3d", "F.pad"), finding("nn.AvgPool1d", "F.avg_pool1d"),
                            finding("nn.ReplicationPad1d", "F.pad"), finding("nn.ReplicationPad2d", "torch.cat")])
    assert lines == ["nn.ConstantPad?d\t.onnx\twritten as F.pad", "nn.ReplicationPad1d\t.onnx\twritten as F.pad",
                     "nn.ReplicationPad2d\t.onnx\twritten as torch.cat"]


def test_every_spelled_row_names_another_spelling_of_itself_and_the_rules_writing_it(door):
    from pnnx_reference.frontends.onnx import RULES

    assert where.ONNX_SPELLINGS
    for op, (spelled, *rules) in where.ONNX_SPELLINGS.items():
        assert door.same_operator(op, spelled) and rules, op
        assert all(spelled in RULES.lookup(rule).traits["produces"] for rule in rules), op


@pytest.mark.parametrize("op", ["nn.PixelShuffle", "nn.CosineSimilarity", "nn.Unflatten", "torch.expm1", "nn.PReLU"])
def test_a_sample_of_rows_measures_as_the_data_says(door, op):
    """One row of each verdict (spelled, pieces, one other operator, no export, a row with a
    place: its own name), every case."""
    assert door.measure(op).verdict() == door.expected(op)
