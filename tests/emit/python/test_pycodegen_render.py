"""Each rendering rule of the `_pnnx.py` generator, on hand-built graphs; the generated Model
must reproduce eager PyTorch bit for bit."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from pycodegen_helpers import Builder, assert_bitwise, generate, run_generated

INT_MAX = 2147483647


def _check(tmp_path, graph, inputs, expected, snippets=()):
    py = generate(graph, tmp_path)
    source = py.read_text()
    for snippet in snippets:
        assert snippet in source, f"{snippet!r} not in generated code:\n{source}"
    assert_bitwise(run_generated(py, *inputs), expected)
    return source


def test_nn_module_weights_and_buffers(tmp_path):
    torch.manual_seed(1)
    conv, bn = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4).eval()
    bn.running_mean.uniform_()
    bn.running_var.uniform_(0.5, 1.5)
    x = torch.rand(1, 3, 8, 8)
    b = Builder()
    i = b.input(x)
    c = b.op("nn.Conv2d", "layer1.0.conv", [i], params=dict(
        in_channels=3, out_channels=4, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1],
        dilation=[1, 1], groups=1, bias=True, padding_mode="zeros"),
        attrs=dict(weight=conv.weight, bias=conv.bias))
    n = b.op("nn.BatchNorm2d", "bn", [c], params=dict(num_features=4, eps=1e-5, momentum=0.1, affine=True,
                                                      track_running_stats=True),
             attrs=dict(weight=bn.weight, bias=bn.bias, running_mean=bn.running_mean, running_var=bn.running_var))
    _check(tmp_path, b.output(n), [x], (bn(conv(x)),), snippets=[
        "self.layer1 = nn.ModuleDict()", "self.layer1['0'] = nn.ModuleDict()",
        "self.layer1['0'].conv = nn.Conv2d(bias=True, dilation=(1, 1), groups=1, in_channels=3",
        "self.layer1['0'].conv.weight = self.load_pnnx_bin_as_parameter(archive, 'layer1.0.conv.weight', (4, 3, 3, 3), 'float32')",
        "self.bn.running_var = self.load_pnnx_bin_as_tensor(archive, 'bn.running_var', (4,), 'float32')",
        "v_1 = self.layer1['0'].conv(v_0)"])


def test_function_positional_input_and_keyword_inputs(tmp_path):
    torch.manual_seed(2)
    x, w, bias = torch.rand(1, 3, 6, 6), torch.rand(5, 3, 3, 3), torch.rand(5)
    b = Builder()
    i = b.input(x)
    wv = b.op("pnnx.Attribute", "w", attrs=dict(data=w), examples=[w])
    bv = b.op("pnnx.Attribute", "b", attrs=dict(data=bias), examples=[bias])
    y = b.op("F.conv2d", "F.conv2d_0", [i, wv, bv], params=dict(stride=[2, 2], padding=[1, 1], dilation=[1, 1], groups=1),
             inputnames=["input", "weight", "bias"])
    z = b.op("F.leaky_relu", "F.leaky_relu_1", [y], params=dict(negative_slope=0.1), inputnames=["input"])
    expected = F.leaky_relu(F.conv2d(x, w, bias, stride=2, padding=1), 0.1)
    _check(tmp_path, b.output(z), [x], (expected,), snippets=[
        "self.w = self.load_pnnx_bin_as_parameter(archive, 'w.data', (5, 3, 3, 3), 'float32')",
        "v_3 = F.conv2d(v_0, weight=v_1, bias=v_2, dilation=(1, 1), groups=1, padding=(1, 1), stride=(2, 2))",
        "v_4 = F.leaky_relu(v_3, negative_slope=0.1)"])


def test_tensor_methods_positional_sizes_and_keywords(tmp_path):
    x = torch.rand(2, 3, 4)
    b = Builder()
    i = b.input(x)
    p = b.op("Tensor.permute", "Tensor.permute_0", [i], params=dict(dims=[0, 2, 1]), inputnames=["input"])
    r = b.op("Tensor.reshape", "Tensor.reshape_1", [p], params=dict(shape=[2, -1]), inputnames=["input"])
    e = b.op("Tensor.expand", "Tensor.expand_2", [b.op("Tensor.unsqueeze", "u", [r], params=dict(dim=0))],
             params=dict(sizes=[3, 2, 12]))
    s = b.op("Tensor.sum", "Tensor.sum_3", [e], params=dict(dim=[1], keepdim=True))
    expected = x.permute(0, 2, 1).reshape(2, -1).unsqueeze(0).expand(3, 2, 12).sum(dim=[1], keepdim=True)
    _check(tmp_path, b.output(s), [x], (expected,), snippets=[
        "v_1 = v_0.permute(dims=(0, 2, 1))", "v_2 = v_1.reshape(2, -1)", ".expand(3, 2, 12)",
        "v_5 = v_4.sum(dim=(1,), keepdim=True)"])


def test_shape_operand_is_spread(tmp_path):
    x = torch.rand(2, 6)
    b = Builder()
    i = b.input(x)
    shape = b.op("pnnx.Expression", "pnnx_expr_0", [i], params=dict(expr="[size(@0,1),size(@0,0)]"))
    v = b.op("Tensor.view", "Tensor.view_0", [i, shape], inputnames=["input", "shape"])
    _check(tmp_path, b.output(v), [x], (x.view(6, 2),), snippets=[
        "v_1 = [v_0.size(1), v_0.size(0)]", "v_2 = v_0.view(*v_1)"])


def test_expression_infix(tmp_path):
    x, y = torch.rand(2, 3), torch.rand(2, 3)
    b = Builder()
    i, j = b.input(x), b.input(y)
    e = b.op("pnnx.Expression", "pnnx_expr_0", [i, j], params=dict(expr="sqrt(div(add(mul(@0,2),@1),12))"))
    m = b.op("pnnx.Expression", "pnnx_expr_1", [e, j],
             params=dict(expr="add(pow(max(@0,0.3),2),sub(neg(@1),floor_divide(@0,0.25)))"))
    a = torch.sqrt((2 * x + y) / 12)
    expected = torch.pow(torch.max(a, torch.tensor(0.3)), 2) + (-y - a // 0.25)
    _check(tmp_path, b.output(m), [x, y], (expected,), snippets=[
        "v_2 = torch.sqrt((((v_0 * 2) + v_1) / 12))",
        "v_3 = (torch.pow(torch.max(v_2, torch.tensor(0.3)), 2) + (-(v_1) - (v_2 // 0.25)))"])


def test_cat_stack_take_a_tuple(tmp_path):
    x, y = torch.rand(2, 3), torch.rand(2, 3)
    b = Builder()
    i, j = b.input(x), b.input(y)
    c = b.op("torch.cat", "torch.cat_0", [i, j], params=dict(dim=1))  # upstream: no $ names
    s = b.op("torch.stack", "torch.stack_1", [i, j, i], params=dict(dim=0), inputnames=["tensors"] * 3)
    one = b.op("torch.cat", "torch.cat_2", [j], params=dict(dim=0), inputnames=["tensors"])
    _check(tmp_path, b.output(c, s, one), [x, y], (torch.cat((x, y), 1), torch.stack((x, y, x)), y), snippets=[
        "v_2 = torch.cat((v_0, v_1), dim=1)", "v_3 = torch.stack((v_0, v_1, v_0), dim=0)",
        "v_4 = torch.cat((v_1,), dim=0)", "return v_2, v_3, v_4"])


def test_einsum_equation_first(tmp_path):
    x, y = torch.rand(2, 3), torch.rand(3, 4)
    b = Builder()
    i, j = b.input(x), b.input(y)
    e = b.op("torch.einsum", "torch.einsum_0", [i, j], params=dict(equation="ij,jk->ik"),
             inputnames=["operands", "operands"])
    _check(tmp_path, b.output(e), [x, y], (torch.einsum("ij,jk->ik", x, y),),
           snippets=["v_2 = torch.einsum('ij,jk->ik', v_0, v_1)"])


def test_multi_output_and_max_with_dim(tmp_path):
    x = torch.rand(2, 6)
    b = Builder()
    i = b.input(x)
    u, v = b.op("torch.chunk", "torch.chunk_0", [i], params=dict(chunks=2, dim=1), inputnames=["input"], outputs=2)
    m = b.op("torch.max", "torch.max_1", [i], params=dict(dim=1, keepdim=False), inputnames=["input"])
    vals, idx = b.op("torch.sort", "torch.sort_2", [i], params=dict(dim=-1, descending=True), outputs=2)
    a, c = torch.chunk(x, 2, dim=1)
    s = torch.sort(x, dim=-1, descending=True)
    _check(tmp_path, b.output(u, v, m, vals, idx), [x], (a, c, torch.max(x, dim=1)[0], s[0], s[1]), snippets=[
        "v_1, v_2 = torch.chunk(v_0, chunks=2, dim=1)", "v_3, _ = torch.max(v_0, dim=1, keepdim=False)"])


def test_slice_rendering(tmp_path):
    x = torch.rand(2, 5, 6, 7)
    b = Builder()
    i = b.input(x)
    s1 = b.op("Tensor.slice", "s1", [i], params=dict(dims=[1, 2, 3], starts=[1, 0, 0], ends=[3, INT_MAX, 0],
                                                    steps=[1, 2, 0], selects=[INT_MAX, INT_MAX, -1]))
    s2 = b.op("Tensor.slice", "s2", [i], params=dict(dim=-2, start=-4, end=INT_MAX, step=1, select=INT_MAX))
    s3 = b.op("Tensor.slice", "s3", [i], params=dict(dims=[0, -1], starts=[1, 0], ends=[2, 5], steps=[1, 3],
                                                    selects=[INT_MAX, INT_MAX]))
    _check(tmp_path, b.output(s1, s2, s3), [x], (x[:, 1:3, ::2, -1], x[..., -4:, :], x[1:2, ..., :5:3]),
           snippets=["v_1 = v_0[:,1:3,::2,-1]", "v_2 = v_0[...,-4:,:]", "v_3 = v_0[1:2,...,:5:3]"])


def test_slice_with_operand_bounds(tmp_path):
    x = torch.rand(4, 8)
    b = Builder()
    i = b.input(x)
    end = b.op("pnnx.Expression", "e", [i], params=dict(expr="floor_divide(size(@0,1),2)"))
    idx = b.op("pnnx.SliceIndexes", "idx", [end], params=dict(indexes=["0", "@0"]))
    s = b.op("Tensor.slice", "s", [i, idx], params=dict(dims=[0, 1], starts=[1, 0], steps=[1, 1],
                                                        selects=[INT_MAX, INT_MAX]),
             inputnames=["input", "ends"])
    _check(tmp_path, b.output(s), [x], (x[1:0][:, :4] if False else x[1:0:1, :4],), snippets=["v_0[1:0,:v_1]"])


def test_index_expression(tmp_path):
    x = torch.rand(3, 5)
    idx = torch.tensor([4, 0, 2])
    b = Builder()
    i = b.input(x)
    t = b.op("pnnx.Attribute", "indices", attrs=dict(data=idx), examples=[idx])
    y = b.op("Tensor.index", "Tensor.index_0", [i, t], params=dict(expr="[None,@1]"))
    source = _check(tmp_path, b.output(y), [x], (x[:, idx],), snippets=["v_2 = v_0[:,v_1]"])
    assert "'int64', requires_grad=False)" in source


def test_tuple_and_list_unpack(tmp_path):
    x = torch.rand(3)
    b = Builder()
    i = b.input(x)
    t = b.op("prim::TupleConstruct", "t", [i, i])
    u, v = b.op("prim::TupleUnpack", "u", [t], outputs=2)
    lst = b.op("prim::ListConstruct", "l", [u, v])
    (w,) = [b.op("prim::ListUnpack", "lu", [lst], outputs=2)[0]]
    _check(tmp_path, b.output(w, t), [x], (x, (x, x)), snippets=[
        "v_1 = (v_0, v_0)", "v_2, v_3 = v_1", "v_4 = [v_2, v_3]", "v_5, v_6 = v_4"])


def test_lstm_and_attention_unpacking(tmp_path):
    torch.manual_seed(3)
    lstm = nn.LSTM(4, 5, batch_first=True).eval()
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x, q = torch.rand(2, 3, 4), torch.rand(2, 3, 8)
    b = Builder()
    i, j = b.input(x), b.input(q)
    lstm_params = dict(input_size=4, hidden_size=5, num_layers=1, bias=True, batch_first=True,
                       bidirectional=False, proj_size=0)
    o, h, c = b.op("nn.LSTM", "lstm", [i], params=lstm_params, outputs=3,
                   attrs={k: v for k, v in lstm.named_parameters()})
    mha_params = dict(embed_dim=8, num_heads=2, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                      batch_first=True)
    (a,) = [b.op("nn.MultiheadAttention", "attn", [j, j, j], params=mha_params, outputs=1,
                 attrs={k: v for k, v in mha.named_parameters()})]
    with torch.no_grad():
        eo, (eh, ec) = lstm(x)
        ea = mha(q, q, q)[0]
    _check(tmp_path, b.output(o, h, c, a), [x, q], (eo, eh, ec, ea), snippets=[
        "v_2, (v_3, v_4) = self.lstm(v_0)", "self.attn.out_proj.weight = ", "v_5, _ = self.attn(v_1, v_1, v_1)"])


def test_attribute_feeding_batch_norm_stats_is_a_tensor(tmp_path):
    x, mean, var = torch.rand(2, 3, 4), torch.rand(3), torch.rand(3) + 0.5
    b = Builder()
    i = b.input(x)
    m = b.op("pnnx.Attribute", "m", attrs=dict(data=mean), examples=[mean])
    v = b.op("pnnx.Attribute", "v", attrs=dict(data=var), examples=[var])
    y = b.op("F.batch_norm", "F.batch_norm_0", [i, m, v], params=dict(eps=1e-3),
             inputnames=["input", "running_mean", "running_var"])
    _check(tmp_path, b.output(y), [x], (F.batch_norm(x, mean, var, eps=1e-3),), snippets=[
        "self.register_buffer('m', self.load_pnnx_bin_as_tensor(archive, 'm.data', (3,), 'float32'))",
        "v_3 = F.batch_norm(v_0, running_mean=v_1, running_var=v_2, eps=0.001)"])


def test_special_values_and_dtypes(tmp_path):
    x = torch.rand(2, 3) * 4 - 2
    b = Builder()
    i = b.input(x)
    c = b.op("torch.clamp", "torch.clamp_0", [i], params=dict(min=-1.5, max="inf"), inputnames=["input"])
    t = b.op("Tensor.to", "Tensor.to_1", [c], params=dict(dtype="torch.double", copy=False))
    p = b.op("F.pad", "F.pad_2", [t], params=dict(pad=[1, 1], mode="reflect", value=None))
    _check(tmp_path, b.output(p), [x], (F.pad(torch.clamp(x, min=-1.5).to(torch.double), (1, 1), mode="reflect"),),
           snippets=["torch.clamp(v_0, max=float('inf'), min=-1.5)", "v_1.to(copy=False, dtype=torch.double)",
                     "F.pad(v_2, mode='reflect', pad=(1, 1))"])


def test_float32_extremes_stay_inside_float32(tmp_path):
    """transformers masks with torch.finfo(float32).min: its shortest float32 spelling
    -3.4028235e+38 is a double past float32's range, which torch.where refuses ("without overflow")."""
    lowest = torch.finfo(torch.float32).min
    x, keep = torch.rand(2, 3), torch.tensor([[True, False, True], [False, True, True]])
    b = Builder()
    i, k = b.input(x), b.input(keep)
    w = b.op("torch.where", "torch.where_0", [k, i], params=dict(other=lowest), inputnames=["condition", "input"])
    _check(tmp_path, b.output(w), [x, keep], (torch.where(keep, x, lowest),),
           snippets=[f"torch.where(v_1, v_0, {lowest!r})"])


def test_names_are_sanitised_and_never_collide(tmp_path):
    x = torch.rand(3)
    b = Builder()
    i = b.input(x, name="x.1")
    ops = []
    for name, operand in [("a.b", "x_1"), ("a_b", "y"), ("forward", "1"), ("class", "v"), ("0", "v_")]:
        ops.append(b.op("nn.ReLU", name, [ops[-1] if ops else i], params=dict(inplace=False), output_names=[operand]))
    source = _check(tmp_path, b.output(ops[-1]), [x], (torch.relu(x),))
    # `a.b` keeps its path (a container `a`); `a_b` is a flat name of its own
    for member in ("self.a = nn.ModuleDict()", "self.a.b =", "self.a_b =", "self.m_forward =", "self.m_class =",
                   "self.m_0 ="):
        assert member in source
    assert "def forward(self, v_x_1):" in source and "v_x_1_1 = self.a.b(v_x_1)" in source


def test_bin_path_is_relative_to_generated_file(tmp_path, monkeypatch):
    torch.manual_seed(4)
    lin = nn.Linear(3, 2)
    x = torch.rand(1, 3)
    b = Builder()
    i = b.input(x)
    y = b.op("nn.Linear", "fc", [i], params=dict(in_features=3, out_features=2, bias=True),
             attrs=dict(weight=lin.weight, bias=lin.bias))
    py = generate(b.output(y), tmp_path / "out")
    monkeypatch.chdir(tmp_path)  # not the folder holding the files
    assert_bitwise(run_generated(py, x), (lin(x).detach(),))
