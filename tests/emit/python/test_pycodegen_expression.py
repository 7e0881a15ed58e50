"""The expression grammar: parse / print round trip, Python rendering, evaluation."""
from __future__ import annotations

import pytest
import torch
from profiles import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from pnnx_reference import expression as E
from pnnx_reference.errors import ExpressionError

UPSTREAM_SAMPLES = [
    "sqrt(div(add(mul(@0,2),@1),12))", "sub(@0,mul(abs(@1),-0.5))", "pow(max(@0,0.3),2)",
    "add(add(atan2(@0,@1),pow(@0,2.0)),floor_divide(@0,3))", "[2,-1,int(floor_divide(size(@0,1),2))]",
    "mul(mul(@0,@1),0.5)", "2.000000e-01", "size(@0)", "[]", "mul(@0,1.000000e+00+-2.000000e+00j)",
    "torch.float(@0)", "add(@0,True)", "neg(@0)", "rsqrt(add(@0,1.000000e-5))",
]


@pytest.mark.parametrize("text", UPSTREAM_SAMPLES)
def test_parse_then_print_is_identity(text):
    assert E.to_string(E.parse(text)) == text


@pytest.mark.parametrize("text,python", [
    ("sqrt(div(add(mul(@0,2),@1),12))", "torch.sqrt((((a * 2) + b) / 12))"),
    ("sub(@0,mul(abs(@1),-0.5))", "(a - (torch.abs(b) * -0.5))"),
    ("pow(max(@0,0.3),2)", "torch.pow(torch.max(a, torch.tensor(0.3)), 2)"),
    ("[2,-1,int(floor_divide(size(@0,1),2))]", "[2, -1, int((a.size(1) // 2))]"),
    ("add(neg(@0),size(@1))", "(-(a) + b.shape)"),
    ("and(@0,xor(@1,rshift(@0,lshift(@1,1))))", "(a & (b ^ (a >> (b << 1))))"),
    ("mul(@0,1.0+2.0j)", "(a * (1+2j))"),
    ("add(@0,inf)", "(a + float('inf'))"),
])
def test_render_python_like_upstream(text, python):
    assert E.render_python(E.parse(text), ["a", "b"]) == python


@pytest.mark.parametrize("text", ["", "add(@0)", "add(@0,@1", "@0)", "foo(@0)", "os.system(@0)", "add(@0,x)",
                                  "'a'", "add(@0,@1))", "@", "@x", "[1,2", "add(,@0)", "torch.os(@0)",
                                  "size(@0,1,2)", "add(@0 ,@1)"])
def test_malformed_expressions_raise(text):
    with pytest.raises(ExpressionError):
        E.parse(text)


def test_render_refuses_missing_inputs():
    with pytest.raises(ExpressionError):
        E.render_python(E.parse("add(@0,@2)"), ["a", "b"])


def test_builders_and_input_helpers():
    node = E.call("add", E.input_ref(1), E.call("mul", E.input_ref(0), E.literal(0.1)))
    assert E.to_string(node) == "add(@1,mul(@0,0.1))"
    assert E.input_indices(node) == [0, 1]
    assert E.to_string(E.remap_inputs(node, {0: 1, 1: E.literal(3)})) == "add(3,mul(@1,0.1))"
    assert E.to_string(E.list_expr(E.literal(-1), E.literal(True))) == "[-1,True]"
    with pytest.raises(ExpressionError):
        E.call("eval", E.input_ref(0))


_leaf = st.one_of(st.integers(0, 1).map(E.input_ref), st.integers(-5, 5).map(E.literal),
                  st.floats(0.25, 4.0).map(lambda f: E.literal(float(f"{f:.3f}"))))
_binary = ["add", "sub", "mul", "div", "max", "min", "maximum", "minimum", "atan2", "pow"]
_unary = ["abs", "neg", "exp", "tanh", "sin", "sqrt", "floor", "square"]


def _grow(children):
    return st.one_of(
        st.tuples(st.sampled_from(_binary), children, children).map(lambda t: E.call(t[0], t[1], t[2])),
        st.tuples(st.sampled_from(_unary), children).map(lambda t: E.call(t[0], t[1])))


_tree = st.recursive(_leaf, _grow, max_leaves=6).filter(lambda n: E.input_indices(n))


@settings(max_examples=examples(100), deadline=None)
@given(_tree)
def test_evaluate_equals_running_the_rendered_code(node):
    inputs = [torch.rand(3, 4) + 0.5, torch.rand(3, 4) + 0.5]
    assert E.parse(E.to_string(node)) == E.parse(E.to_string(E.parse(E.to_string(node))))
    code = E.render_python(node, ["a", "b"])
    try:
        rendered = eval(code, {"torch": torch, "float": float}, {"a": inputs[0], "b": inputs[1]})
    except (ZeroDivisionError, RuntimeError) as err:  # e.g. div(0,0): both ways must fail alike
        with pytest.raises(type(err)):
            E.evaluate(node, inputs)
        return
    evaluated = E.evaluate(node, inputs)
    assert torch.equal(torch.as_tensor(rendered), torch.as_tensor(evaluated)) or (
        torch.isnan(torch.as_tensor(rendered)).any() and torch.equal(
            torch.as_tensor(rendered).nan_to_num(), torch.as_tensor(evaluated).nan_to_num()))


def test_evaluate_shapes_and_lists():
    x = torch.rand(2, 6)
    assert E.evaluate(E.parse("[size(@0,0),-1,int(floor_divide(size(@0,1),2))]"), [x]) == [2, -1, 3]
    assert E.evaluate(E.parse("torch.long(mul(@0,10))"), [x]).dtype == torch.long
