"""Bad input the validator and `regenerate` let through (issue 20, item 6): `pnnx.Expression`
is checked (grammar, function names, `@i` below the input count, nesting depth) with
file:line; an expression nested 1,000 deep is one line, not a RecursionError; `regenerate`'s
errors name the file; our own `expr=[size(@0,0),-1]` is read back; fusion never writes an
expression too deep to read."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from pnnx_reference import api, expression
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.emit.python.pnnx_py import regenerate
from pnnx_reference.errors import ConversionError, ExpressionError
from pnnx_reference.formats import pnnx_param
from pnnx_reference.validate import validate

TWO_INPUTS = """7767517
4 3
pnnx.Input               in0                      0 1 0 #0=(1,4)f32
pnnx.Input               in1                      0 1 1 #1=(1,4)f32
pnnx.Expression          pnnx_expr_0              2 1 0 1 2 expr={expr} #0=(1,4)f32 #1=(1,4)f32 #2=(1,4)f32
pnnx.Output              out0                     1 0 2 #2=(1,4)f32
"""

EXPRESSIONS = [
    ("add(@0,@1)", []),
    ("add(@0,@1", ["expected ',' or ')' at 9 in expression 'add(@0,@1'"]),
    ("add(@0,@1))", ["unexpected ')' at 10 in expression 'add(@0,@1))'"]),
    ("add(@0,@5)", ["expr uses @5 but the operator has 2 input(s)"]),
    ("evil(@0,@1)", ["unknown expression function 'evil'"]),
    ("sqrt(@0,@1)", ["sqrt takes 1 operands, got 2"]),
    ("neg(" * 1000 + "@0" + ")" * 1000, ["expression nested deeper than 100 levels"]),
    # issue 33 item 4: past int64 (50 digits ran into OverflowError in _pnnx.py, 5000 into Python's int limit)
    ("mul(@0,9223372036854775807)", []),
    ("mul(@0,9223372036854775808)", ["integer '9223372036854775808' does not fit in int64 in expression "
                                     "'mul(@0,9223372036854775808)'"]),
    ("mul(@0," + "9" * 5000 + ")", [f"integer {'9' * 60!r}...(5000 chars) does not fit in int64 in expression "
                                    f"{('mul(@0,' + '9' * 53)!r}...(5008 chars)"]),
    ("add(@" + "9" * 5000 + ",@1)", [f"input index {('@' + '9' * 59)!r}...(5001 chars) is out of range in expression "
                                     f"{('add(@' + '9' * 55)!r}...(5009 chars)"]),
]


@pytest.mark.parametrize("expr, messages", EXPRESSIONS, ids=[e[:20] for e, _ in EXPRESSIONS])
def test_the_validator_checks_expressions_with_file_and_line(tmp_path, expr, messages):
    param = tmp_path / "m.pnnx.param"
    param.write_text(TWO_INPUTS.format(expr=expr))
    assert [str(p) for p in validate(param)] == [f"{param}:5: pnnx.Expression pnnx_expr_0: {m}" for m in messages]


def test_parsing_is_bounded_in_depth_not_by_the_recursion_limit():
    text = "neg(" * 5000 + "@0" + ")" * 5000
    with pytest.raises(ExpressionError, match=r"^expression nested deeper than 100 levels$"):
        expression.parse(text)
    assert expression.depth("add(@0,mul(@1,[2,3]))") == 3
    expression.parse("neg(" * expression.MAX_DEPTH + "@0" + ")" * expression.MAX_DEPTH)


def test_regenerate_errors_name_the_file(tmp_path, capsys):
    param = tmp_path / "m.pnnx.param"
    for expr, message in (("neg(" * 1000 + "@0" + ")" * 1000, "expression nested deeper than 100 levels"),
                          ("evil(@0,@1)", "unknown expression function 'evil'"),
                          ("mul(@0," + "9" * 50 + ")", f"integer {'9' * 50!r} does not fit in int64 in expression "
                                                       f"{('mul(@0,' + '9' * 50 + ')')!r}")):
        param.write_text(TWO_INPUTS.format(expr=expr))
        assert pnnxref(["regenerate", str(param)]) == 1
        assert capsys.readouterr().err == f"error: {param}: {message}\n"
    assert not list(tmp_path.glob("*.py"))


def test_our_own_list_expressions_are_read_back_and_regenerated(tmp_path):
    class View(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1) * 2

    result = api.export(View(), torch.rand(2, 3, 4), tmp_path, "v", input_shapes2=[[3, 3, 5]])
    assert "expr=[size(@0,0),-1]" in result.paths["pnnxparam"].read_text()
    graph = pnnx_param.load(result.paths["pnnxparam"])
    assert [op.params["expr"] for op in graph.ops if op.type == "pnnx.Expression"][0] == "[size(@0,0),-1]"
    assert pnnx_param.dumps(graph) == result.paths["pnnxparam"].read_text()
    regenerate(result.paths["pnnxparam"], tmp_path / "again_pnnx.py")
    assert validate(result.paths["pnnxparam"]) == []


def test_fusion_stops_before_an_expression_too_deep_or_too_long(tmp_path):
    class Chain(nn.Module):
        def forward(self, x):
            for _ in range(600):
                x = x + 1
            y = x
            for _ in range(30):  # y * y doubles the text at every step
                y = y * y
            return x, y

    result = api.export(Chain(), torch.rand(2, 2) * 0, tmp_path, "c")
    texts = [op.params["expr"] for op in result.graph.ops if op.type == "pnnx.Expression"]
    assert max(expression.depth(t) for t in texts) <= expression.MAX_DEPTH
    assert max(len(t) for t in texts) <= 4096
    assert result.self_check.startswith("passed")
    regenerate(result.paths["pnnxparam"], tmp_path / "again_pnnx.py")  # was a RecursionError


def test_a_moduleop_naming_no_class_of_the_model_lists_the_ones_it_has():
    class Stem(nn.Module):
        def forward(self, x):
            return x * 2

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.head = Stem(), nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.stem(x))

    prefix = f"{__name__}.test_a_moduleop_naming_no_class_of_the_model_lists_the_ones_it_has.<locals>"
    with pytest.raises(ConversionError) as info:
        api.capture(Net(), torch.rand(1, 4), moduleop=["Stem", "models.common.Focus"])
    assert str(info.value) == (f"moduleop models.common.Focus names no module class of the model; its own module "
                               f"classes are {prefix}.Net, {prefix}.Stem")
    api.capture(Net(), torch.rand(1, 4), moduleop=["Stem"])
