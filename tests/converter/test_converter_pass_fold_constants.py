import torch
import torch.nn as nn
import torch.nn.functional as F

from converter_helpers import check_links, op_of, types
from pnnx_reference.frontends.python import trace
from pnnx_reference.frontends.python.dynamic import merge_shapes
from pnnx_reference.passes import PassContext, dead_code, fold_constants


class Consts(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.rand(4))

    def forward(self, x):
        scale = torch.sigmoid(self.w) * 2  # depends on the weight only: folds
        noise = torch.rand(4)              # random: must stay an operator
        return x * scale + noise


def _fold(captured):
    fold_constants.run(captured.graph, PassContext(captured.values))
    dead_code.run(captured.graph)
    return captured.graph


class Draws(nn.Module):
    """Noise drawn in place into a tensor of the input's shape (F.gumbel_softmax's way)."""

    def forward(self, x):
        return x - torch.empty_like(x).exponential_().log(), x + torch.zeros_like(x).uniform_(), \
            x * torch.ones_like(x).bernoulli_(0.5)


def test_a_draw_into_a_shape_only_tensor_stays_an_operator():
    """Every random operator the self-check knows stays: a folded draw would repeat the traced
    one at every run."""
    graph = _fold(trace(Draws(), torch.rand(2, 4)))
    assert {"Tensor.exponential", "Tensor.uniform", "Tensor.bernoulli"} <= set(types(graph)), types(graph)


def test_weight_only_computation_becomes_one_attribute():
    model = Consts()
    graph = _fold(trace(model, torch.rand(2, 4)))
    folded = [op for op in graph.ops if op.name.startswith("pnnx_fold_")]
    assert len(folded) == 1
    assert torch.equal(folded[0].attrs["data"].to_torch(), torch.sigmoid(model.w.detach()) * 2)
    assert "torch.sigmoid" not in types(graph) and "torch.rand" in types(graph)
    check_links(graph)


class Reshape(nn.Module):
    def forward(self, x):
        return x.reshape(x.size(0), -1)


def test_shape_input_folds_when_shapes_are_static():
    graph = _fold(trace(Reshape(), torch.rand(2, 3, 4)))
    reshape = op_of(graph, "Tensor.reshape")
    assert reshape.params == {"shape": [2, -1]} and reshape.inputnames == ["input"]
    assert "pnnx.Expression" not in types(graph)


def test_shape_input_stays_when_a_dim_is_dynamic():
    first, second = trace(Reshape(), torch.rand(2, 3, 4)), trace(Reshape(), torch.rand(5, 3, 4))
    graph = _fold(merge_shapes(first, second))
    reshape = op_of(graph, "Tensor.reshape")
    assert reshape.inputnames == ["input", "shape"] and "shape" not in reshape.params
    assert op_of(graph, "pnnx.Expression").params["expr"] == "[size(@0,0),-1]"


def test_values_made_from_an_input_shape_fold_when_static():
    class Zeros(nn.Module):
        def forward(self, x):
            return x + (x.new_zeros(4) + torch.ones_like(x))

    graph = _fold(trace(Zeros(), torch.rand(2, 4)))
    assert types(graph) == ["pnnx.Input", "pnnx.Attribute", "pnnx.Expression", "pnnx.Output"]
    assert torch.equal(graph.ops[1].attrs["data"].to_torch(), torch.ones(2, 4))


def test_static_sizes_inside_tensor_expressions_become_literals():
    class Scale(nn.Module):
        def forward(self, x, y):
            return x * x.size(1) + y.size(0)

    captured = trace(Scale(), (torch.rand(2, 3), torch.rand(5)))
    assert [op.params["expr"] for op in captured.graph.ops if op.type == "pnnx.Expression"] == \
        ["mul(@0,size(@0,1))", "add(@0,size(@1,0))"]
    graph = _fold(captured)
    assert [op.params["expr"] for op in graph.ops if op.type == "pnnx.Expression"] == ["mul(@0,3)", "add(@0,5)"]
    assert [len(op.inputs) for op in graph.ops if op.type == "pnnx.Expression"] == [1, 1]
    check_links(graph)


class DroppedWeight(nn.Module):
    def __init__(self, training: bool):
        super().__init__()
        self.w, self.training_dropout = nn.Parameter(torch.rand(4)), training

    def forward(self, x):
        return x * F.dropout(self.w * 2, p=0.5, training=self.training_dropout)


def test_a_dropout_is_kept_only_where_it_draws():
    """One list says which operators draw (random_ops.py): a training-mode dropout of a constant
    stays an operator, an eval-mode one (the identity) folds with the constant."""
    assert "F.dropout" in types(_fold(trace(DroppedWeight(True), torch.rand(2, 4))))
    graph = _fold(trace(DroppedWeight(False), torch.rand(2, 4)))
    assert "F.dropout" not in types(graph) and any(op.name.startswith("pnnx_fold_") for op in graph.ops)
