"""The Python-API capture: one operator per API call, named as upstream names them."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from converter_helpers import check_links, op_of, types
from pnnx_reference.api import capture
from pnnx_reference.frontends.python import trace
from pnnx_reference.errors import ConversionError, ValueDependentWarning


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.scale = nn.Parameter(torch.rand(8, 1, 1))
        self.register_buffer("offset", torch.rand(8, 1, 1))

    def forward(self, x):
        y = F.relu(self.conv(x))
        y = y * self.scale + self.offset
        a, b = torch.chunk(y, 2, 1)
        return torch.cat([b, a], dim=1).flatten(1)


class Nested(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))

    def forward(self, x):
        return self.layer1(x)


def test_nn_module_is_a_leaf_with_constructor_params_and_weights():
    graph = trace(Block(), torch.rand(1, 3, 8, 8)).graph
    conv = op_of(graph, "nn.Conv2d")
    assert conv.name == "conv"
    assert conv.params == {"bias": False, "dilation": [1, 1], "groups": 1, "in_channels": 3,
                           "kernel_size": [3, 3], "out_channels": 8, "padding": [1, 1],
                           "padding_mode": "zeros", "stride": [1, 1]}
    assert list(conv.attrs) == ["weight"] and conv.attrs["weight"].shape == (8, 3, 3, 3)
    assert conv.inputnames == []


def test_functions_keep_their_api_path_and_keywords():
    graph = trace(Block(), torch.rand(1, 3, 8, 8)).graph
    assert types(graph) == ["pnnx.Input", "nn.Conv2d", "F.relu", "pnnx.Attribute", "pnnx.Expression",
                            "pnnx.Attribute", "pnnx.Expression", "torch.chunk", "torch.cat",
                            "Tensor.flatten", "pnnx.Output"]
    assert op_of(graph, "F.relu").name == "F.relu_0"
    chunk = op_of(graph, "torch.chunk")
    assert chunk.params == {"chunks": 2, "dim": 1} and len(chunk.outputs) == 2
    cat = op_of(graph, "torch.cat")
    assert cat.inputnames == ["tensors", "tensors"]
    assert cat.inputs == [chunk.outputs[1], chunk.outputs[0]]
    assert op_of(graph, "Tensor.flatten").params == {"start_dim": 1, "end_dim": -1}


def test_parameters_and_buffers_used_directly_become_attributes():
    graph = trace(Block(), torch.rand(1, 3, 8, 8)).graph
    attributes = {op.name: op for op in graph.ops if op.type == "pnnx.Attribute"}
    assert sorted(attributes) == ["offset", "scale"]
    assert attributes["scale"].attrs["data"].shape == (8, 1, 1)
    assert attributes["scale"].outputs[0].shape == [8, 1, 1]


def test_module_path_names_nested_modules():
    graph = trace(Nested(), torch.rand(2, 4)).graph
    assert [op.name for op in graph.ops[1:-1]] == ["layer1.0.0", "layer1.0.1"]


def test_every_operand_has_shape_and_dtype():
    captured = trace(Block(), torch.rand(1, 3, 8, 8))
    check_links(captured.graph)
    for operand in captured.graph.operands:
        assert operand.shape is not None and operand.dtype == "f32", operand


def test_inplace_calls_rebind_the_tensor():
    class InPlace(nn.Module):
        def forward(self, x):
            y = x * 2
            y.add_(1)
            y += x
            return y.relu_()

    graph = capture(InPlace(), torch.rand(2, 3), optlevel=0)
    exprs = [op for op in graph.ops if op.type == "pnnx.Expression"]
    assert [op.params["expr"] for op in exprs] == ["mul(@0,2)", "add(@0,1)", "add(@0,@1)"]
    assert exprs[1].inputs[0] is exprs[0].outputs[0] and exprs[2].inputs[0] is exprs[1].outputs[0]
    assert graph.ops[-2].type == "Tensor.relu" and graph.ops[-2].inputs[0] is exprs[2].outputs[0]


def test_reflected_and_constant_operands():
    class Reflected(nn.Module):
        def forward(self, x):
            return (1 - x, 2 / x, x ** 2, -x, torch.add(x, x, alpha=3), x * x)

    graph = capture(Reflected(), torch.rand(2), optlevel=0)
    assert [op.params["expr"] for op in graph.ops if op.type == "pnnx.Expression"] == \
        ["sub(1,@0)", "div(2,@0)", "pow(@0,2)", "neg(@0)", "add(@0,mul(@0,3))", "mul(@0,@0)"]


def test_slicing_becomes_tensor_slice():
    class Slices(nn.Module):
        def forward(self, x):
            return x[..., ::2, 1], x[0, 1:3]

    graph = capture(Slices(), torch.rand(2, 4, 6, 8), optlevel=0)
    first, second = [op for op in graph.ops if op.type == "Tensor.slice"]
    assert first.params == {"dims": [-2, -1], "ends": [2147483647, 2147483647],
                            "selects": [2147483647, 1], "starts": [0, 0], "steps": [2, 1]}
    assert second.params["dims"] == [0, 1] and second.params["selects"] == [0, 2147483647]
    assert first.outputs[0].shape == [2, 4, 3] and second.outputs[0].shape == [2, 6, 8]


def test_shape_arithmetic_is_an_expression_then_folds():
    class Reshape(nn.Module):
        def forward(self, x):
            b, c, h, w = x.shape
            return x.view(b, c // 2, -1)

    x = torch.rand(2, 4, 3, 3)
    raw = capture(Reshape(), x, optlevel=1)
    shape_expr = raw.ops[1]
    assert shape_expr.type == "pnnx.Expression"
    assert shape_expr.params["expr"] == "[size(@0,0),floor_divide(size(@0,1),2),-1]"
    view = op_of(raw, "Tensor.view")
    assert view.inputnames == ["input", "shape"] and "shape" not in view.params
    folded = op_of(capture(Reshape(), x, optlevel=2), "Tensor.view")
    assert folded.params == {"shape": [2, 2, -1]} and len(folded.inputs) == 1


def test_model_that_cannot_run_gives_conversion_error():
    with pytest.raises(ConversionError, match="cannot run on the given inputs"):
        capture(nn.Linear(4, 2), torch.rand(2, 5))


def test_non_module_is_rejected():
    with pytest.raises(ConversionError, match="must be a torch.nn.Module"):
        trace(lambda x: x, torch.rand(2))


def test_data_dependent_control_flow_is_refused_or_follows_the_example_when_allowed():
    class Branchy(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x) if x.sum() > 0 else torch.tanh(x)

    with pytest.raises(ConversionError, match="Tensor.__bool__"):
        capture(Branchy(), torch.ones(3))
    with pytest.warns(ValueDependentWarning):
        graph = capture(Branchy(), torch.ones(3), allow_value_dependent=True)
    assert types(graph) == ["pnnx.Input", "torch.sigmoid", "pnnx.Output"]


def test_constant_tensor_made_in_forward_folds_at_optlevel2():
    class Const(nn.Module):
        def forward(self, x):
            return x + torch.arange(4).float() * 2

    graph = capture(Const(), torch.rand(3, 4))
    assert types(graph) == ["pnnx.Input", "pnnx.Attribute", "pnnx.Expression", "pnnx.Output"]
    attribute = op_of(graph, "pnnx.Attribute")
    assert attribute.name.startswith("pnnx_fold_")
    assert torch.equal(attribute.attrs["data"].to_torch(), torch.arange(4).float() * 2)


def test_setitem_is_captured_not_dropped():
    class SetItem(nn.Module):
        def forward(self, x):
            x[:, 0] = 0
            return x

    graph = trace(SetItem(), torch.rand(2, 3)).graph
    write = [op for op in graph.ops if op.type == "Tensor.slice_copy"]
    assert len(write) == 1 and write[0].params["selects"] == [0]
    output = [op for op in graph.ops if op.type == "pnnx.Output"][0]
    assert output.inputs[0] is write[0].outputs[0]  # `x` now names the written tensor


def test_namespaced_functions_keep_their_path():
    class Norm(nn.Module):
        def forward(self, x):
            return torch.linalg.norm(x, dim=1), torch.special.expit(x)

    graph = trace(Norm(), torch.rand(2, 3)).graph
    assert types(graph)[1:3] == ["torch.linalg.norm", "torch.special.expit"]


def test_boolean_dispatched_functions_bind_their_keywords():
    class Pool(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 2)

    op = op_of(trace(Pool(), torch.rand(1, 2, 4, 4)).graph, "F.max_pool2d")
    assert op.params == {"kernel_size": 2, "stride": None, "padding": 0, "dilation": 1,
                         "ceil_mode": False, "return_indices": False}


def test_transformer_layer_params_are_read_back_from_submodules():
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, activation="gelu", batch_first=True)
    graph = trace(nn.TransformerEncoder(layer, 2), torch.rand(1, 3, 16)).graph
    first, second = [op for op in graph.ops if op.type == "nn.TransformerEncoderLayer"]
    assert (first.name, second.name) == ("layers.0", "layers.1")
    op = first
    assert op.params == {"activation": "gelu", "batch_first": True, "bias": True, "d_model": 16,
                         "dim_feedforward": 32, "dropout": 0.1, "layer_norm_eps": 1e-5, "nhead": 4,
                         "norm_first": False}


def test_inplace_on_a_view_is_refused():
    class ViewInPlace(nn.Module):
        def forward(self, x):
            x.t()[:2].mul_(2)  # a slice of a transpose: no plain tensor to write it back into
            return x

    with pytest.raises(ConversionError, match="on a view"):
        trace(ViewInPlace(), torch.rand(2, 3))


def test_varargs_sizes_and_operand_lists_bind():
    class Varargs(nn.Module):
        def forward(self, x):
            return torch.einsum("ii", x) + torch.zeros(2, 3).sum(), x.view(9)

    graph = trace(Varargs(), torch.rand(3, 3)).graph
    einsum = op_of(graph, "torch.einsum")
    assert einsum.params == {"equation": "ii", "path": None} and einsum.inputnames == ["tensors"]
    assert op_of(graph, "torch.zeros").params["size"] == [2, 3]
    assert op_of(graph, "Tensor.view").params == {"shape": [9]}


def test_leaf_module_tensor_keywords_are_named():
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(8, 2)

        def forward(self, x, mask):
            return self.attention(x, x, x, attn_mask=mask)[0]

    graph = trace(Masked(), (torch.rand(3, 1, 8), torch.zeros(3, 3))).graph
    op = op_of(graph, "nn.MultiheadAttention")
    assert op.inputnames == ["query", "key", "value", "attn_mask"]
    assert op.inputs[3] is graph.ops[1].outputs[0]


def test_a_bare_nn_module_is_one_operator():
    graph = trace(nn.Linear(4, 2), torch.rand(3, 4)).graph
    assert types(graph) == ["pnnx.Input", "nn.Linear", "pnnx.Output"]
    assert graph.ops[1].name == "linear"


def test_conv_transpose_output_size_becomes_output_padding():
    class Up(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(2, 2, 3, stride=2)

        def forward(self, x):
            return self.up(x, output_size=[10, 9])

    op = op_of(trace(Up(), torch.rand(1, 2, 4, 4)).graph, "nn.ConvTranspose2d")
    assert op.params["output_padding"] == [1, 0] and op.outputs[0].shape == [1, 2, 10, 9]


def test_overload_is_chosen_without_binding_an_argument_twice():
    class Var(nn.Module):
        def forward(self, x):
            return torch.var(x, 1, unbiased=False)

    op = op_of(trace(Var(), torch.rand(2, 3)).graph, "torch.var")
    assert op.params == {"dim": [1], "unbiased": False, "keepdim": False}


def test_constructor_arguments_stored_under_other_names():
    op = op_of(trace(nn.PairwiseDistance(p=1.0), (torch.rand(2, 3), torch.rand(2, 3))).graph,
               "nn.PairwiseDistance")
    assert op.params == {"eps": 1e-6, "keepdim": False, "p": 1.0}


def test_adaptive_none_output_size_is_written_as_zero():
    graph = trace(nn.AdaptiveAvgPool2d((None, 3)), torch.rand(1, 2, 4, 4)).graph
    assert [op.params["output_size"] for op in graph.ops if op.type == "nn.AdaptiveAvgPool2d"] == [[0, 3]]


def test_nested_list_is_not_a_param():
    from pnnx_reference.errors import NotAParam
    from pnnx_reference.frontends.python.params import to_param

    with pytest.raises(NotAParam, match="nested"):
        to_param([[1], [2]], "output_size")


@pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions.*:UserWarning")
def test_quantized_tensors_are_annotated_with_their_storage_dtype():
    """As upstream writes them: a quint8 tensor is `u8`, and the dtype parameter stays
    torch.quint8 so that the generated Python quantizes the same way."""
    class Quantize(nn.Module):
        def forward(self, x):
            return torch.quantize_per_tensor(x, 0.05, 10, torch.quint8).int_repr()

    graph = capture(Quantize(), (torch.rand(1, 3, 4, 4),))
    quantize = op_of(graph, "torch.quantize_per_tensor")
    assert quantize.params["dtype"] == "torch.quint8"
    assert quantize.outputs[0].dtype == "u8"
