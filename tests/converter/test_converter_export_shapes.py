"""export(): test_inference() shapes agree with the graph inputs even when the example
inputs are nested (tensors in a list) and so are not the graph inputs one for one."""
import torch

from script_modules import import_file
from pnnx_reference import api


class ListInput(torch.nn.Module):
    def forward(self, xs):
        return xs[0] + xs[1] * 2


class TwoInputs(torch.nn.Module):
    def forward(self, x, y):
        return x * y


def test_nested_example_inputs_export_every_artefact(tmp_path):
    result = api.export(ListInput(), ([torch.rand(2, 3), torch.rand(2, 3)],), tmp_path, "m")
    assert "pnnxpy" in result.paths and not result.unsupported.get("python")
    out = import_file(result.paths["pnnxpy"], "export_shapes_nested").test_inference()
    assert out.shape == (2, 3)


def test_flat_example_inputs_give_their_shapes(tmp_path):
    result = api.export(TwoInputs(), (torch.rand(4, 5), torch.rand(1, 5)), tmp_path, "m")
    source = result.paths["pnnxpy"].read_text()
    assert "torch.rand(4, 5, dtype=torch.float)" in source and "torch.rand(1, 5, dtype=torch.float)" in source
