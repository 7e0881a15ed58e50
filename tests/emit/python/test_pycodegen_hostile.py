"""Nothing read from a param file may become executable code in the generated module."""
from __future__ import annotations

import ast

import pytest
import torch

from pnnx_reference.emit import generate_python, main_regenerate
from pnnx_reference.emit.python.pnnx_py import _HELPERS
from pnnx_reference.errors import ExpressionError, InvalidGraph, PnnxError, UnsupportedOperator
from pycodegen_helpers import Builder, assert_bitwise, generate, run_generated

HOSTILE_NAMES = ["a'b", 'q"q', "x\nimport os", "__import__('os').system('touch PWNED')",
                 "); open('PWNED','w'); (", "self", "__class__", "os.system", "\\", "#comment"]


def _member_path(node) -> bool:
    """`self.os.system`, `self.m['0'].w`: a member path of the generated module (a dotted
    operator name keeps its path of nn.ModuleDict containers), which reaches nothing but the
    modules and tensors the generated `__init__` put there."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _identifiers(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and not _member_path(node):
            names.add(node.attr)
    return names


def _relu_chain(names, operand_names=None):
    x = torch.rand(4)
    b = Builder()
    cur = b.input(x, name=(operand_names or [None])[0])
    for k, name in enumerate(names):
        cur = b.op("nn.ReLU", name, [cur], params={"inplace": False},
                   output_names=[operand_names[k + 1]] if operand_names else None)
    return b.output(cur), x


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_operator_and_operand_names_stay_inert(tmp_path, monkeypatch, name):
    graph, x = _relu_chain([name, name + "2"], operand_names=[name, name + "1", name])
    monkeypatch.chdir(tmp_path)
    py = generate(graph, tmp_path / "out", save_param=False)
    source = py.read_text()
    assert _HELPERS in source  # the fixed weight loader (it calls archive.open) is no name's doing
    assert not {"system", "__import__", "open", "__class__"} & _identifiers(source.replace(_HELPERS, ""))
    assert_bitwise(run_generated(py, x), (torch.relu(x),))
    assert not (tmp_path / "PWNED").exists()


def test_hostile_attribute_entry_name_is_quoted(tmp_path):
    x, w = torch.rand(3), torch.rand(3)
    b = Builder()
    i = b.input(x)
    name = "w');__import__('os').system('x"
    a = b.op("pnnx.Attribute", name, attrs={"data": w})
    y = b.op("pnnx.Expression", "e", [i, a], params={"expr": "mul(@0,@1)"})
    source = generate(b.output(y), tmp_path).read_text()
    assert f"(archive, {name + '.data'!r}, (3,)" in source
    assert_bitwise(run_generated(tmp_path / "model_pnnx.py", x), (x * w,))


@pytest.mark.parametrize("op_type", [
    "os.system", "torch.os.system", "torch.load", "torch.hub.load", "torch.save", "Tensor.__reduce__",
    "F.relu(x);import os;os.system", "builtins.eval", "nn.Module", "nn.init.zeros_", "torch.Tensor",
    "torchvision.io.read_file", "__import__('os').system", "F.relu\n", "pnnx.custom_op.os.system('x')",
    "aten::relu", "models.common.Focus", "torch.import_ir_module", "torch.set_default_dtype",
    "Tensor.register_hook", "Tensor.apply_", "F.importlib", "torch.from_file"])
def test_unknown_or_dangerous_types_are_refused(op_type):
    graph, _ = _relu_chain(["r"])
    graph.ops[1].type = op_type
    # outside the allowed API (InvalidGraph), or no renderer at all (the emitter declines it)
    with pytest.raises((InvalidGraph, UnsupportedOperator)):
        generate_python(graph, "m_pnnx.py", "m.pnnx.bin")


@pytest.mark.parametrize("key", ["a b", "x=1, y", "__class__", "lambda", "in", "1x", "dim)\nimport os#"])
def test_bad_param_keys_are_refused(key):
    graph, _ = _relu_chain(["r"])
    graph.ops[1].type = "F.relu"
    graph.ops[1].params = {key: 1}
    with pytest.raises(InvalidGraph):
        generate_python(graph, "m_pnnx.py", "m.pnnx.bin")


@pytest.mark.parametrize("inputname", ["a b", "input=__import__('os')", "for"])
def test_bad_input_names_are_refused(inputname):
    graph, _ = _relu_chain(["r"])
    graph.ops[1].type = "F.relu"
    graph.ops[1].inputnames = [inputname]
    with pytest.raises(InvalidGraph):
        generate_python(graph, "m_pnnx.py", "m.pnnx.bin")


def test_bad_module_attribute_key_is_refused():
    graph, _ = _relu_chain(["r"])
    from pnnx_reference.ir import Attribute

    graph.ops[1].attrs = {"weight; import os": Attribute((1,), "f32", b"\0" * 4)}
    with pytest.raises(InvalidGraph):
        generate_python(graph, "m_pnnx.py", "m.pnnx.bin")


@pytest.mark.parametrize("value", ["'); import os; os.system('touch PWNED'); ('", "torch.float; import os",
                                   "a\nb", "\\'", "inf'"])
def test_string_params_are_repr_quoted(tmp_path, monkeypatch, value):
    x = torch.rand(2, 3)
    b = Builder()
    i = b.input(x)
    y = b.op("torch.flatten", "f", [i], params={"start_dim": 0, "end_dim": -1}, inputnames=["input"])
    b.graph.ops[-1].params["dummy"] = value  # never executed: the call fails on the unknown keyword
    source = generate_python(b.output(y), tmp_path / "m_pnnx.py", tmp_path / "m.pnnx.bin")
    assert f"dummy={value!r}" in source
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m_pnnx.py").write_text(source)
    with pytest.raises(TypeError):
        run_generated(tmp_path / "m_pnnx.py", x)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("expr", ["__import__(@0)", "add(@0,os.system)", "add(@0,'x')", "add(@0,1);x",
                                  "getattr(@0,1)", "add(@0,@1)\n"])
def test_hostile_expressions_are_refused(expr):
    graph, _ = _relu_chain(["r"])
    graph.ops[1].type = "pnnx.Expression"
    graph.ops[1].params = {"expr": expr}
    with pytest.raises(ExpressionError):
        generate_python(graph, "m_pnnx.py", "m.pnnx.bin")


HOSTILE_PARAM_FILES = {
    "quote_name": "nn.ReLU r'x 1 1 0 1 inplace=False",
    "injection_type": "os.system r 1 1 0 1 command=ls",
    "torch_load": "torch.load r 1 1 0 1 f=evil.pt",
    "string_param": "F.relu r 1 1 0 1 inplace=');__import__('os').system('touch_PWNED');('",
    "expr": "pnnx.Expression e 1 1 0 1 expr=__import__(@0)",
    "input_key": "F.relu r 1 1 0 1 $input);import_os;(=0",
}


@pytest.mark.parametrize("body", HOSTILE_PARAM_FILES.values(), ids=HOSTILE_PARAM_FILES.keys())
def test_hostile_param_files(tmp_path, monkeypatch, capsys, body):
    """Loaded from disk: either refused with one error line, or regenerated into inert code."""
    text = f"7767517\n3 2\npnnx.Input in0 0 1 0 #0=(4)f32\n{body}\npnnx.Output out0 1 0 1\n"
    param = tmp_path / "h.pnnx.param"
    param.write_text(text)
    from pnnx_reference.formats.pnnx_bin import write_bin

    write_bin(tmp_path / "h.pnnx.bin", [])
    monkeypatch.chdir(tmp_path)
    code = main_regenerate([str(param)])
    err = capsys.readouterr().err
    if code != 0:
        assert err.count("\n") == 1 and "Traceback" not in err
        assert not (tmp_path / "h_pnnx.py").exists()
        return
    try:
        run_generated(tmp_path / "h_pnnx.py", torch.rand(4))
    except (TypeError, RuntimeError):
        pass
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "touch_PWNED").exists()


def test_failed_generation_leaves_existing_file_alone(tmp_path):
    graph, _ = _relu_chain(["r"])
    py = tmp_path / "m_pnnx.py"
    py.write_text("old")
    graph.ops[1].type = "os.system"
    with pytest.raises(PnnxError):
        generate(graph, tmp_path, name="m", save_param=False)
    assert py.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m_pnnx.py"]
