import pytest
import torch
import torch.nn as nn

from converter_helpers import types
from pnnx_reference.api import capture
from pnnx_reference.errors import ConversionError
from pnnx_reference.passes import run_passes


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.drop = nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4), nn.Dropout()

    def forward(self, x):
        return self.drop(self.bn(self.conv(x))) * 2 + 1


@pytest.mark.parametrize("optlevel, expected", [
    (0, ["pnnx.Input", "nn.Conv2d", "nn.BatchNorm2d", "nn.Dropout", "pnnx.Expression",
         "pnnx.Expression", "pnnx.Output"]),
    (1, ["pnnx.Input", "nn.Conv2d", "nn.BatchNorm2d", "nn.Dropout", "pnnx.Expression", "pnnx.Output"]),
    (2, ["pnnx.Input", "nn.Conv2d", "pnnx.Expression", "pnnx.Output"]),
])
def test_optlevels_apply_upstreams_passes(optlevel, expected):
    graph = capture(Net(), torch.rand(1, 3, 4, 4), optlevel=optlevel)
    assert types(graph) == expected
    names = [o.name for o in graph.operands]
    assert (names == [str(i) for i in range(len(names))]) == (optlevel == 2)


def test_bad_optlevel():
    with pytest.raises(ValueError):
        run_passes(capture(Net(), torch.rand(1, 3, 4, 4), optlevel=0), 3)
    with pytest.raises(ConversionError, match="optlevel"):
        capture(Net(), torch.rand(1, 3, 4, 4), optlevel=5)


def test_model_is_converted_in_eval_mode_and_left_as_it_was():
    model = Net().train()
    graph = capture(model, torch.rand(1, 3, 4, 4))
    assert "nn.Dropout" not in types(graph) and "nn.BatchNorm2d" not in types(graph)
    assert model.training is True
