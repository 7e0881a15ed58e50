"""moduleop=: a chosen module class stays one operator with its tensors as attrs."""
import sys

import torch
import torch.nn as nn

from converter_helpers import op_of, types
from pnnx_reference.api import capture


class Focus(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(12, 4, 1)
        self.register_buffer("gain", torch.ones(1))

    def forward(self, x):
        x = torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)
        return self.conv(x) * self.gain


class Yolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(Focus(), nn.SiLU())

    def forward(self, x):
        return self.model(x)


QUALIFIED = f"{Focus.__module__}.Focus"


def test_without_moduleop_the_module_is_inlined():
    graph = capture(Yolo(), torch.rand(1, 3, 8, 8))
    assert "torch.cat" in types(graph) and "nn.Conv2d" in types(graph)


def test_moduleop_by_qualified_name_keeps_one_operator():
    graph = capture(Yolo(), torch.rand(1, 3, 8, 8), moduleop=[QUALIFIED])
    assert types(graph) == ["pnnx.Input", QUALIFIED, "nn.SiLU", "pnnx.Output"]
    focus = op_of(graph, QUALIFIED)
    assert focus.name == "model.0"
    assert sorted(focus.attrs) == ["conv.bias", "conv.weight", "gain"]
    assert focus.outputs[0].shape == [1, 4, 4, 4]


def test_moduleop_by_class_object():
    graph = capture(Yolo(), torch.rand(1, 3, 8, 8), moduleop=[Focus])
    assert QUALIFIED in types(graph)
    assert sys.modules[Focus.__module__] is not None


def test_moduleop_of_a_model_file_names_the_class_as_the_user_does(tmp_path, capsys):
    """Issue 33 item 12: `moduleop=net.Focus` for net.py was refused and suggested the internal
    module name (pnnxref_model_net.Focus), which then became the operator type in pnnx.param."""
    from pnnx_reference.cli import main

    model = tmp_path / "net.py"
    model.write_text("import torch\nimport torch.nn as nn\n\nclass Focus(nn.Module):\n"
                     "    def forward(self, x):\n        return torch.cat([x[..., ::2, ::2], x[..., 1::2, 1::2]], 1)\n\n"
                     "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                     "        self.focus = Focus()\n\n    def forward(self, x):\n        return self.focus(x) * 2\n")
    assert main([str(model), "inputshape=[1,3,8,8]", "moduleop=net.Focus"]) == 0, capsys.readouterr().err
    types = [line.split()[0] for line in (tmp_path / "net.pnnx.param").read_text().splitlines()[2:]]
    assert "net.Focus" in types and not [t for t in types if "pnnxref" in t]
    assert main([str(model), "inputshape=[1,3,8,8]", "moduleop=other.Focus"]) == 2
    assert "its own module classes are net.Focus, net.Model" in capsys.readouterr().err
