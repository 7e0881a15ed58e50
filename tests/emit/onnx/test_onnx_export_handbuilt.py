"""Hand-built pnnx graphs (as the converter writes them) exported to ONNX and run in
onnxruntime against torch."""
from __future__ import annotations

import copy

import onnx
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from onnx_export_util import GraphMaker, assert_close, export_and_run, op_types
from pnnx_reference.emit.onnx import DEFAULT_OPSET, write_onnx
from pnnx_reference.errors import ConversionError, UnsupportedOperator


def _conv_params(m: nn.Conv2d) -> dict:
    return dict(bias=m.bias is not None, dilation=m.dilation, groups=m.groups,
                in_channels=m.in_channels, kernel_size=m.kernel_size, out_channels=m.out_channels,
                padding=m.padding, padding_mode=m.padding_mode, stride=m.stride)


def test_conv_relu_linear_cat_view_expression(tmp_path):
    torch.manual_seed(0)
    conv, fc = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8, 4)
    x = torch.rand(1, 3, 8, 8)
    g = GraphMaker()
    a = g.input((1, 3, 8, 8))
    c = g.module("nn.Conv2d", conv, [a], [(1, 8, 8, 8)], _conv_params(conv))
    r = g.op("F.relu", [c], [(1, 8, 8, 8)], inputnames=["input"])
    p = g.op("F.adaptive_avg_pool2d", [r], [(1, 8, 1, 1)], {"output_size": (1, 1)}, inputnames=["input"])
    v = g.op("Tensor.view", [p], [(1, 8)], {"shape": (1, 8)}, inputnames=["input"])
    e = g.op("pnnx.Expression", [v, v], [(1, 8)], {"expr": "add(mul(@0,2),sub(@1,0.5))"})
    cat = g.op("torch.cat", [v, e], [(1, 16)], {"dim": 1}, inputnames=["tensors", "tensors"])
    y = g.module("nn.Linear", fc, [v], [(1, 4)], dict(bias=True, in_features=8, out_features=4))
    graph = g.output(y, cat)
    got, model = export_and_run(graph, [x], tmp_path)
    with torch.no_grad():
        pooled = F.adaptive_avg_pool2d(F.relu(conv(x)), 1).view(1, 8)
        want = [fc(pooled), torch.cat([pooled, pooled * 2 + (pooled - 0.5)], 1)]
    assert_close(got, want)
    assert op_types(model) == ["Conv", "Relu", "GlobalAveragePool", "Reshape", "Mul", "Sub",
                               "Add", "Concat", "Gemm"]



def _unsupported_graph():
    g = GraphMaker()
    a = g.input((8, 8))  # rank 2: MaxPool2d takes (C, H, W) or (N, C, H, W) only
    r = g.op("F.relu", [a], [(8, 8)], inputnames=["input"])
    m = g.op("nn.MaxPool2d", [r], [(4, 4)],
             dict(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False))
    w = g.op("nn.Frobnicate", [m], [(4, 4)], name="frob")
    return g.output(w, m)


def test_unsupported_lists_every_operator_and_writes_nothing(tmp_path):
    path = tmp_path / "x.pnnx.onnx"
    with pytest.raises(UnsupportedOperator) as info:
        write_onnx(_unsupported_graph(), path)
    err = info.value
    assert isinstance(err, UnsupportedOperator)
    assert [t for t, _, _ in err.failures] == ["nn.MaxPool2d", "nn.Frobnicate"]
    assert "input of rank 2" in str(err) and "frob" in str(err)
    assert "\n" not in str(err)
    assert list(tmp_path.iterdir()) == []


def test_failed_export_keeps_the_previous_file(tmp_path):
    path = tmp_path / "x.pnnx.onnx"
    path.write_bytes(b"previous")
    with pytest.raises(UnsupportedOperator):
        write_onnx(_unsupported_graph(), path)
    assert path.read_bytes() == b"previous"


def _snapshot(graph):
    return [(op.type, op.name, [o.name for o in op.inputs], [o.name for o in op.outputs],
             copy.deepcopy(op.params), {k: (a.shape, a.dtype, a.data) for k, a in op.attrs.items()},
             list(op.inputnames)) for op in graph.ops], [(o.name, o.shape, o.dtype) for o in graph.operands]


def _linear_graph(batch=1):
    torch.manual_seed(0)
    fc = nn.Linear(6, 3)
    g = GraphMaker()
    a = g.input((batch, 5, 6))
    y = g.module("nn.Linear", fc, [a], [(batch, 5, 3)], dict(bias=True, in_features=6, out_features=3))
    s = g.op("F.silu", [y], [(batch, 5, 3)], inputnames=["input"])
    return g.output(s), fc


def test_export_does_not_modify_the_graph(tmp_path):
    graph, _ = _linear_graph()
    before = _snapshot(graph)
    write_onnx(graph, tmp_path / "a.onnx", fp16=True)
    write_onnx(graph, tmp_path / "b.onnx", fp16=False)
    assert _snapshot(graph) == before


def test_opset_option(tmp_path):
    graph, fc = _linear_graph()
    write_onnx(graph, tmp_path / "default.onnx")
    assert onnx.load(tmp_path / "default.onnx").opset_import[0].version == DEFAULT_OPSET
    x = torch.rand(1, 5, 6)
    got, model = export_and_run(graph, [x], tmp_path, opset=21, name="o21")
    assert model.opset_import[0].domain == "" and model.opset_import[0].version == 21
    assert_close(got, [F.silu(fc(x))])
    with pytest.raises(ConversionError):
        write_onnx(graph, tmp_path / "bad.onnx", opset=99)


def test_linear_on_3d_input_is_matmul_add(tmp_path):
    graph, fc = _linear_graph()
    x = torch.rand(1, 5, 6)
    got, model = export_and_run(graph, [x], tmp_path)
    assert op_types(model) == ["MatMul", "Add", "Sigmoid", "Mul"]
    assert_close(got, [F.silu(fc(x))])


def test_dynamic_dims_become_dim_params(tmp_path):
    graph, fc = _linear_graph(batch=-1)
    for x in (torch.rand(2, 5, 6), torch.rand(7, 5, 6)):
        got, model = export_and_run(graph, [x], tmp_path)
        assert_close(got, [F.silu(fc(x))])
    dim = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param and not dim.HasField("dim_value")


def test_fp16_attribute_is_float16_with_a_cast(tmp_path):
    torch.manual_seed(0)
    k = torch.rand(1, 4, 1, 1)
    g = GraphMaker()
    a = g.input((1, 4, 3, 3))
    c = g.attribute(k)
    y = g.op("pnnx.Expression", [a, c], [(1, 4, 3, 3)], {"expr": "mul(@0,@1)"})
    graph = g.output(y)
    x = torch.rand(1, 4, 3, 3)
    got, model = export_and_run(graph, [x], tmp_path, fp16=True)
    assert [i.data_type for i in model.graph.initializer] == [onnx.TensorProto.FLOAT16]
    assert op_types(model) == ["Cast", "Mul"]
    assert_close(got, [x * k.half().float()], atol=1e-6)


def test_expression_promotes_int_and_folds_sizes(tmp_path):
    g = GraphMaker()
    a = g.input((2, 3), dtype="i64")
    b = g.input((2, 3))
    y = g.op("pnnx.Expression", [a, b], [(2, 3)],
             {"expr": "add(div(@0,size(@1,1)),sqrt(square(@1)))"})
    graph = g.output(y)
    ia, fb = torch.randint(0, 9, (2, 3)), torch.rand(2, 3) - 0.5
    got, model = export_and_run(graph, [ia, fb], tmp_path)
    assert_close(got, [ia / 3 + torch.sqrt(fb * fb)])
    assert "Shape" not in op_types(model)


def test_output_that_is_an_input_gets_an_identity(tmp_path):
    g = GraphMaker()
    a = g.input((2, 3))
    graph = g.output(a, a)
    x = torch.rand(2, 3)
    got, model = export_and_run(graph, [x], tmp_path)
    assert_close(got, [x, x])
    assert op_types(model) == ["Identity", "Identity"]


def test_transposed_matrix_times_vector(tmp_path):
    """onnxruntime 1.31 fuses Transpose->MatMul wrongly for a 1-D right operand; the
    lowering multiplies by a column instead, so this must match."""
    g = GraphMaker()
    a = g.input((6, 4))
    v = g.input((6,))
    t = g.op("Tensor.t", [a], [(4, 6)], inputnames=["input"])
    y = g.op("torch.mv", [t, v], [(4,)], inputnames=["input", "vec"])
    graph = g.output(y)
    torch.manual_seed(0)
    x, vec = torch.rand(6, 4) - 0.5, torch.rand(6)
    got, _ = export_and_run(graph, [x, vec], tmp_path)
    assert_close(got, [x.t() @ vec])


def test_constant_shape_expression_feeds_reshape(tmp_path):
    g = GraphMaker()
    a = g.input((2, 3, 4))
    shape = g.op("pnnx.Expression", [a], [(2,)], {"expr": "[size(@0,0),-1]"}, dtype="i64")
    y = g.op("Tensor.reshape", [a, shape], [(2, 12)], inputnames=["input", "shape"])
    graph = g.output(y)
    x = torch.rand(2, 3, 4)
    got, model = export_and_run(graph, [x], tmp_path)
    assert_close(got, [x.reshape(2, -1)])
    assert op_types(model) == ["Reshape"]


@pytest.mark.parametrize("dtype, torch_dtype", [("i32", torch.int32), ("i64", torch.int64)])
def test_integer_floor_divide_floors_as_torch_does(tmp_path, dtype, torch_dtype):
    """ONNX's integer Div truncates toward zero; floor_divide rounds down (-7 // 2 == -4)."""
    g = GraphMaker()
    a, b = g.input((2, 4), dtype=dtype), g.input((2, 4), dtype=dtype)
    graph = g.output(g.op("pnnx.Expression", [a, b], [(2, 4)], {"expr": "floor_divide(@0,@1)"}, dtype=dtype))
    x = torch.tensor([[-7, 7, -8, 0], [5, -5, 9, -9]], dtype=torch_dtype)
    y = torch.tensor([[2, 2, 2, 3], [-3, -3, 4, 4]], dtype=torch_dtype)
    got, model = export_and_run(graph, [x, y], tmp_path)
    assert got[0].tolist() == torch.floor_divide(x, y).tolist()
    assert "Mod" in op_types(model)


@pytest.mark.parametrize("scalar, in_dtype, out_dtype", [("other", "f32", "f32"), ("input", "f32", "f32"),
                                                          ("other", "i64", "f32")])
def test_where_with_a_number_for_a_branch(tmp_path, scalar, in_dtype, out_dtype):
    """torch.where(c, x, 0.5) / torch.where(c, 0.5, x); an integer x with a float number gives a float."""
    g = GraphMaker()
    cond, x = g.input((2, 3), dtype="bool"), g.input((2, 3), dtype=in_dtype)
    names = ["condition", "other" if scalar == "input" else "input"]
    y = g.op("torch.where", [cond, x], [(2, 3)], {scalar: 0.5}, inputnames=names, dtype=out_dtype)
    c = torch.tensor([[True, False, True], [False, True, False]])
    t = torch.arange(6).reshape(2, 3) if in_dtype == "i64" else torch.rand(2, 3)
    got, _ = export_and_run(g.output(y), [c, t], tmp_path)
    want = torch.where(c, t, 0.5) if scalar == "other" else torch.where(c, 0.5, t)
    assert got[0].dtype == want.numpy().dtype
    assert_close(got, [want])


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_keeps_ties_in_index_order(tmp_path, descending):
    """TopK breaks ties by the lower index, in both directions: torch.sort(stable=True)."""
    g = GraphMaker()
    x = g.input((2, 8))
    values, indices = g.op("torch.sort", [x], [(2, 8), (2, 8)], {"dim": 1, "descending": descending, "stable": True},
                           inputnames=["input"])
    indices.dtype = "i64"
    t = torch.tensor([[3., 1, 3, 2, 1, 3, 2, 1], [0, 0, 0, 0, 5, 5, 5, 5]])
    got, _ = export_and_run(g.output(values, indices), [t], tmp_path)
    want = torch.sort(t, dim=1, descending=descending, stable=True)
    assert got[0].tolist() == want.values.tolist() and got[1].tolist() == want.indices.tolist()


@pytest.mark.parametrize("as_tuple", [False, True])
def test_nonzero(tmp_path, as_tuple):
    g = GraphMaker()
    x = g.input((3, 4))
    outs = g.op("torch.nonzero", [x], [(-1,)] * 2 if as_tuple else [(-1, 2)], {"as_tuple": as_tuple},
                inputnames=["input"], dtype="i64")
    outs = outs if isinstance(outs, list) else [outs]
    t = torch.tensor([[0., 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]])
    graph = g.output(*outs)
    path = tmp_path / "m.pnnx.onnx"
    write_onnx(graph, path, fp16=False)
    from conformance_runs import run_onnx
    got = run_onnx(path, [t])
    want = torch.nonzero(t, as_tuple=as_tuple)
    want = list(want) if as_tuple else [want]
    assert [g_.tolist() for g_ in got] == [w.tolist() for w in want]


@pytest.mark.parametrize("fn", ["lshift", "rshift"])
def test_unsigned_shifts_in_an_expression(tmp_path, fn):
    """The ONNX route reads BitShift back as lshift/rshift in a pnnx.Expression; a shift of 8 or
    more gives 0 for uint8, as torch does."""
    g = GraphMaker()
    a, s = g.input((2, 4), dtype="u8"), g.input((2, 4), dtype="u8")
    graph = g.output(g.op("pnnx.Expression", [a, s], [(2, 4)], {"expr": f"{fn}(@0,@1)"}, dtype="u8"))
    x = torch.tensor([[1, 200, 255, 17], [3, 128, 9, 0]], dtype=torch.uint8)
    y = torch.tensor([[1, 2, 7, 8], [0, 9, 3, 1]], dtype=torch.uint8)
    got, _ = export_and_run(graph, [x, y], tmp_path)
    want = torch.bitwise_left_shift(x, y) if fn == "lshift" else torch.bitwise_right_shift(x, y)
    assert got[0].tolist() == want.tolist()
