"""pnnx.param writer and strict reader: exact text, value kinds, one test per error."""
import os

import numpy as np
import pytest
from profiles import examples
from hypothesis import HealthCheck, given, settings

from formats_graphs import assert_graphs_equal, graphs
from pnnx_reference.errors import FormatError
from pnnx_reference.formats import pnnx_param
from pnnx_reference.ir import Attribute, Graph

HEAD = "7767517\n"


def _tiny_graph() -> Graph:
    g = Graph()
    x = g.new_operand("0", [1, 3, -1, -1], "f32")
    y = g.new_operand("1", [1, 8, -1, -1], "f32")
    z = g.new_operand("2", [1, 16, -1, -1], "f32")
    g.connect(g.new_operator("pnnx.Input", "in0"), outputs=[x])
    conv = g.new_operator("nn.Conv2d", "conv_0")
    g.connect(conv, [x], [y])
    conv.params = {"stride": [1, 1], "bias": True, "padding_mode": "zeros", "in_channels": 3,
                   "Zed": None, "eps": 1e-5, "kernel_size": [3], "scale": [0.5, 2.0], "10": 1, "2": 2}
    conv.attrs = {"weight": Attribute((8, 3, 3, 3), "f32"), "bias": Attribute((8,), "f32")}
    conv.inputnames = ["input"]
    cat = g.new_operator("torch.cat", "torch.cat_0")
    g.connect(cat, [y, y], [z])
    cat.params = {"dim": 1, "c": 1 + 2j, "names": ["a", "b"], "empty": []}
    g.connect(g.new_operator("pnnx.Output", "out0"), [z])
    return g


TINY_TEXT = HEAD + "4 3\n" + "\n".join([
    "pnnx.Input               in0                      0 1 0 #0=(1,3,?,?)f32",
    "nn.Conv2d                conv_0                   1 1 0 1 10=1 2=2 Zed=None bias=True eps=1.000000e-5"
    " in_channels=3 kernel_size=(3) padding_mode=zeros scale=(0.5,2.0) stride=(1,1)"
    " @bias=(8)f32 @weight=(8,3,3,3)f32 $input=0 #0=(1,3,?,?)f32 #1=(1,8,?,?)f32",
    "torch.cat                torch.cat_0              2 1 1 1 2 c=1.000000e+00+2.000000e+00j dim=1"
    " empty=() names=(a,b) #1=(1,8,?,?)f32 #1=(1,8,?,?)f32 #2=(1,16,?,?)f32",
    "pnnx.Output              out0                     1 0 2 #2=(1,16,?,?)f32",
]) + "\n"


def test_dumps_exact_text():
    assert pnnx_param.dumps(_tiny_graph()) == TINY_TEXT


def test_loads_then_dumps_is_identity():
    graph = pnnx_param.loads(TINY_TEXT)
    assert pnnx_param.dumps(graph) == TINY_TEXT
    assert_graphs_equal(_tiny_graph(), graph)


def test_partial_inputnames_and_negative_complex():
    g = pnnx_param.loads(HEAD + "2 2\npnnx.Input i 0 1 a\nF.x f 1 1 a b c=1.000000e+00+-2.000000e+00j\n")
    assert g.ops[1].params["c"] == complex(1, -2)
    assert g.ops[1].inputnames == []
    assert "c=1.000000e+00+-2.000000e+00j" in pnnx_param.dumps(g)


@pytest.mark.parametrize("text, value", [
    ("None", None), ("True", True), ("False", False), ("-7", -7), ("2147483647", 2147483647),
    ("0.5", 0.5), ("1.000000e-05", 1e-5), ("zeros", "zeros"), ("torch.float", "torch.float"),
    ("inf", "inf"), ("-inf", "-inf"), ("nan", "nan"), ("%pad", "%pad"), ("(%a,%b)", "(%a,%b)"),
    ("(1,2)", [1, 2]), ("[1,2]", [1, 2]), ("(5)", [5]), ("()", []), ("(1,2.5)", [2.5]),
    ("(0.5,1.0)", [0.5, 1.0]), ("(a,b)", ["a", "b"]), ("(1,a)", ["a"]), ("add(@0,1)", "add(@0,1)"),
    ("", ""), ("a=b", "a=b"),
])
def test_value_kinds_when_reading(text, value):
    graph = pnnx_param.loads(HEAD + f"1 1\npnnx.Input in0 0 1 x k={text}\n")
    got = graph.ops[0].params["k"]
    assert got == (np.float32(value) if isinstance(value, float) else value)
    assert type(got) is type(value)


def _line(body: str, count="2 2") -> str:
    return HEAD + count + "\npnnx.Input in0 0 1 x\n" + body + "\n"


ERRORS = [
    ("bad magic", "7767518\n1 1\n", "<string>:1: bad magic '7767518', expected 7767517"),
    ("missing counts", HEAD, "<string>:1: file ends before the operator/operand count line"),
    ("bad counts", HEAD + "1\n", "<string>:2: expected '<operator count> <operand count>', got '1'"),
    ("huge count", HEAD + "99999999999999999999 1\n",
     "<string>:2: expected '<operator count> <operand count>', got '99999999999999999999 1'"),
    ("operator count", _line("F.relu r 1 1 x y", "3 2"), "<string>:2: header declares 3 operators but the file has 2"),
    ("operand count", _line("F.relu r 1 1 x y", "2 5"), "<string>:2: header declares 5 operands but the file has 2"),
    ("short line", _line("F.relu r 1"), "<string>:4: expected '<type> <name> <inputs> <outputs>', got 3 fields"),
    ("bad nin", _line("F.relu r one 1 x y"), "<string>:4: bad input count 'one'"),
    ("huge nin", _line("F.relu r 4294967297 1 x y"), "<string>:4: bad input count '4294967297'"),
    ("too few names", _line("F.relu r 2 1 x y"), "<string>:4: operator r declares 2 inputs and 1 outputs but lists 2 names"),
    ("duplicate op", _line("F.relu in0 1 1 x y"), "<string>:4: duplicate operator name in0 (first on line 3)"),
    ("used before produced", _line("F.relu r 1 1 q y"), "<string>:4: operand q is used before it is produced"),
    ("produced twice", _line("F.relu r 1 1 x x"), "<string>:4: operand x is produced twice (first on line 3)"),
    ("no equals", _line("F.relu r 1 1 x y inplace"), "<string>:4: expected key=value, got 'inplace'"),
    ("empty key", _line("F.relu r 1 1 x y =3"), "<string>:4: parameter with empty key: =3"),
    ("duplicate param", _line("F.relu r 1 1 x y a=1 a=2"), "<string>:4: duplicate parameter a"),
    ("int32 overflow", _line("F.relu r 1 1 x y a=2147483648"), "<string>:4: parameter a: integer 2147483648 does not fit in int32"),
    ("malformed int", _line("F.relu r 1 1 x y a=12ab"), "<string>:4: parameter a: malformed integer '12ab'"),
    ("malformed float", _line("F.relu r 1 1 x y a=1.2.3"), "<string>:4: parameter a: malformed float '1.2.3'"),
    ("float overflow", _line("F.relu r 1 1 x y a=1e39"), "<string>:4: parameter a: float 1e39 does not fit in float32"),
    ("unclosed list", _line("F.relu r 1 1 x y a=(1,2"), "<string>:4: parameter a: list '(1,2' has no closing ')'"),
    ("attr shape", _line("F.relu r 1 1 x y @w=8f32"), "<string>:4: attribute @w: expected (d0,d1,...)dtype, got '8f32'"),
    ("attr dtype", _line("F.relu r 1 1 x y @w=(8)f31"), "<string>:4: attribute @w: unknown dtype 'f31'"),
    ("attr dim", _line("F.relu r 1 1 x y @w=(?)f32"), "<string>:4: attribute @w: bad dimension '?'"),
    ("attr huge dim", _line("F.relu r 1 1 x y @w=(99999999999)f32"), "<string>:4: attribute @w: bad dimension '99999999999'"),
    ("duplicate attr", _line("F.relu r 1 1 x y @w=(1)f32 @w=(1)f32"), "<string>:4: duplicate attribute @w"),
    ("empty attr", _line("F.relu r 1 1 x y @=(1)f32"), "<string>:4: attribute with empty name"),
    ("$ not input", _line("F.relu r 1 1 x y $input=y"), "<string>:4: $input=y: y is not an input of r"),
    ("$ twice", _line("F.relu r 1 1 x y $input=x $other=x"), "<string>:4: $other=x: input x is already named"),
    ("# not operand", _line("F.relu r 1 1 x y #z=(1)f32"), "<string>:4: #z: z is not an operand of r"),
    ("# empty shape", _line("F.relu r 1 1 x y #y=()f32"), "<string>:4: #y: empty shape (upstream never writes one)"),
    ("# not at producer", _line("F.relu r 1 1 x y #x=(1)f32"),
     "<string>:4: #x: operand x is annotated here but not where it is produced (line 3)"),
    ("# differs", HEAD + "2 2\npnnx.Input in0 0 1 x #x=(1)f32\nF.relu r 1 1 x y #x=(2)f32\n",
     "<string>:4: #x: annotation (2)f32 differs from the one on line 3"),
    ("# bad dim", _line("F.relu r 1 1 x y #y=(1,-3)f32"), "<string>:4: #y: bad dimension '-3'"),
    ("empty line", _line(""), "<string>:4: empty line"),
]


@pytest.mark.parametrize("text, message", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_each_rule_has_its_exact_error(text, message):
    with pytest.raises(FormatError) as err:
        pnnx_param.loads(text)
    assert str(err.value) == message


def test_dumps_refuses_values_the_format_cannot_hold():
    g = _tiny_graph()
    g.ops[1].params["bad"] = "has space"
    with pytest.raises(ValueError, match="whitespace"):
        pnnx_param.dumps(g)
    g.ops[1].params["bad"] = 2**31
    with pytest.raises(ValueError, match="int32"):
        pnnx_param.dumps(g)
    g.ops[1].params["bad"] = [1, "a"]
    with pytest.raises(ValueError, match="mixes kinds"):
        pnnx_param.dumps(g)
    del g.ops[1].params["bad"]
    g.ops[1].params["@w"] = 1
    with pytest.raises(ValueError, match="starts with @"):
        pnnx_param.dumps(g)
    del g.ops[1].params["@w"]
    g.operands[0].name = "a=b"
    with pytest.raises(ValueError, match="contains '='"):
        pnnx_param.dumps(g)
    g.operands[0].name = "0"
    g.ops[0].name = "in 0"
    with pytest.raises(ValueError, match="operator name"):
        pnnx_param.dumps(g)


def _with_data(graph: Graph) -> Graph:
    for op in graph.ops:
        for attr in op.attrs.values():
            attr.data = np.arange(attr.nbytes_expected, dtype=np.uint8).tobytes()
    return graph


def test_save_load_round_trip(tmp_path):
    graph = _with_data(_tiny_graph())
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    assert (tmp_path / "m.pnnx.param").read_text() == TINY_TEXT
    loaded = pnnx_param.load(tmp_path / "m.pnnx.param")
    assert_graphs_equal(graph, loaded, data=True)
    assert sorted(os.listdir(tmp_path)) == ["m.pnnx.bin", "m.pnnx.param"]


def test_save_leaves_nothing_behind_on_failure(tmp_path):
    graph = _tiny_graph()  # attributes without data
    with pytest.raises(ValueError, match="conv_0.bias: 0 bytes of data"):
        pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    assert os.listdir(tmp_path) == []


def test_load_reports_a_missing_or_short_bin_entry(tmp_path):
    graph = _with_data(_tiny_graph())
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    (tmp_path / "m.pnnx.param").write_text(TINY_TEXT.replace("@bias=(8)f32", "@bias=(9)f32"))
    with pytest.raises(FormatError) as err:
        pnnx_param.load(tmp_path / "m.pnnx.param")
    assert str(err.value) == f"{tmp_path / 'm.pnnx.bin'}: entry conv_0.bias has 32 bytes, (9,) f32 needs 36"


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_property_dumps_loads_dumps(graph):
    text = pnnx_param.dumps(graph)
    loaded = pnnx_param.loads(text)
    assert_graphs_equal(graph, loaded)
    assert pnnx_param.dumps(loaded) == text


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(graphs(with_data=True))
def test_property_save_load(tmp_path, graph):
    pnnx_param.save(graph, tmp_path / "g.pnnx.param", tmp_path / "g.pnnx.bin")
    assert_graphs_equal(graph, pnnx_param.load(tmp_path / "g.pnnx.param"), data=True)


OLD_ERA = HEAD + """3 3
pnnx.Input               pnnx_input_0             0 1 0 #0=(1,32)f32
nn.LayerNorm             ln                       1 1 0 1 elementwise_affine=True eps=1.000000e-05 normalized_shape=(32) @bias=(32)f32 @weight=(32)f32 #0=(1,32)f32 #1=(1,32)f32
pnnx.Expression          pnnx_expr_0              1 1 1 2 expr=mul(@0,2.000000e-01) scale=(5.000000e-01,5.000000e-01) #1=(1,32)f32 #2=(1,32)f32
"""


def test_old_float_era_reads_and_is_rewritten_in_head_format():
    graph = pnnx_param.loads(OLD_ERA)
    assert graph.ops[1].params["eps"] == float(np.float32(1e-5))
    assert graph.ops[2].params["scale"] == [0.5, 0.5]
    text = pnnx_param.dumps(graph)
    assert "eps=1.000000e-5 " in text and "scale=(0.5,0.5)" in text
    assert "expr=mul(@0,2.000000e-01)" in text  # expressions are strings: kept verbatim
    assert pnnx_param.dumps(pnnx_param.loads(text)) == text


def test_weightless_graph_loads_without_bin(tmp_path):
    (tmp_path / "w.pnnx.param").write_text(HEAD + "1 1\npnnx.Input in0 0 1 x\n")
    assert len(pnnx_param.load(tmp_path / "w.pnnx.param").ops) == 1
    (tmp_path / "w.pnnx.param").write_text(HEAD + "1 1\npnnx.Attribute a 0 1 x @data=(2)f32\n")
    with pytest.raises(FormatError, match="cannot read: No such file or directory"):
        pnnx_param.load(tmp_path / "w.pnnx.param")
