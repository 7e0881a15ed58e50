"""The .pt2 door names an aten call as the model spelled it (the node's meta["torch_fn"]),
so `x.argmax()`, `torch.argmax(x)` and `F.relu(x)` come out as the Python door writes them."""
import torch

from pnnx_reference.api import capture
from pnnx_reference.frontends.aten.spelling import Spelling, from_torch_fn
from pnnx_reference.frontends.export import export_program


class Spelled(torch.nn.Module):
    def forward(self, x):
        a = x.argmax(1) + torch.argmax(x, 1)
        b = torch.relu(x) + torch.nn.functional.relu(x) + x.relu()
        return a, b, x.float(), x[:, 1], x.unflatten(1, (2, 2))


def test_torch_fn_kinds():
    assert from_torch_fn(("argmax_1", "method_descriptor.argmax")) == Spelling("method", "argmax")
    assert from_torch_fn(("relu_1", "builtin_function_or_method.relu")) == Spelling("builtin", "relu")
    assert from_torch_fn(("relu_1", "function.relu")) == Spelling("function", "relu")
    assert from_torch_fn(None) is None and from_torch_fn(("x", "OpOverload.x")) is None


def test_pt2_door_names_calls_as_the_python_door():
    x = torch.rand(2, 4, 3)
    program = export_program(Spelled().eval(), (x,))
    types = [op.type for op in capture(program, (x,)).ops]
    python = [op.type for op in capture(Spelled().eval(), (x,)).ops]
    assert types == python
    for spelled in ("Tensor.argmax", "torch.argmax", "torch.relu", "F.relu", "Tensor.relu", "Tensor.float",
                    "Tensor.unflatten"):
        assert spelled in types, (spelled, types)
