"""The ncnn layer registry the validator checks types against (issue 33 item 2): the pinned
ncnn's own answer, the committed table equal to it, and every type our emitter writes in it."""
import ast
import re
from pathlib import Path

import ncnn  # pinned in requirements/runtime.txt: a missing binding is a failure, not a skip
import pytest

import pnnx_reference.emit.ncnn as ncnn_emitter
from pnnx_reference.formats import ncnn_layers
from pnnx_reference.validate import validate

# CamelCase words in the emitter's source that are not layer types (torch class names, pieces)
NOT_TYPES = {"ConstantPad", "ReflectionPad", "ReplicationPad", "ZeroPad", "Tensor", "DepthWise"}


def test_the_table_is_the_installed_ncnn_registry():
    assert ncnn_layers.from_binding(ncnn) == ncnn_layers.table()
    assert ncnn.__version__ in ncnn_layers.TABLE.read_text().splitlines()[0]


def test_every_layer_type_in_the_emitters_source_is_in_the_table():
    words = set()
    for path in Path(ncnn_emitter.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and re.fullmatch(r"[A-Z][A-Za-z0-9]+", node.value):
                words.add(node.value)
    assert len(words & set(ncnn_layers.table())) > 50  # the scan sees the emitter's types
    assert sorted(words - NOT_TYPES - set(ncnn_layers.table())) == []
    conv = {f"{kind}{dw}{n}" for kind in ("Convolution", "Deconvolution") for dw in ("", "DepthWise")
            for n in ("1D", "", "3D")}  # families/conv.py composes these
    assert sorted(conv - set(ncnn_layers.table())) == []


@pytest.mark.parametrize("layer_type, expected", [("Convolution", True), ("NoSuchLayer", False),
                                                  ("ArgMax", False), ("torch.relu(x)", False)])
def test_the_binding_and_the_table_agree(layer_type, expected, monkeypatch):
    assert ncnn_layers.exists(layer_type) is expected
    ncnn_layers.exists.cache_clear()
    monkeypatch.setattr(ncnn_layers, "_binding", lambda: None)  # ncnn not importable: the table answers
    try:
        assert ncnn_layers.exists(layer_type) is expected
    finally:
        ncnn_layers.exists.cache_clear()


def test_the_validator_refuses_what_ncnn_refuses(tmp_path):
    for layer_type in ("Sigmoid", "NoSuchLayer"):
        param = tmp_path / f"{layer_type}.ncnn.param"
        param.write_text(f"7767517\n2 2\nInput in0 0 1 in0\n{layer_type} l1 1 1 in0 out0\n")
        loads = ncnn.Net().load_param(str(param)) == 0
        assert loads is (validate(param) == []) is (layer_type == "Sigmoid")
