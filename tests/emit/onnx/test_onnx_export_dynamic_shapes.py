"""Shapes that follow the input (captured at two input shapes, as `inputshape2` does) through
the ONNX emitter: sizes read with x.size(d) are Shape/Gather arithmetic feeding Reshape, Slice
and Resize, so the one `.pnnx.onnx` has symbolic dims and onnxruntime computes torch's result at
both shapes. The models are the ncnn emitter's (dynamic_shape_models)."""
from __future__ import annotations

import onnx
import pytest
import torch

from dynamic_shape_models import MODELS, inputs_at
from onnx_export_util import assert_close, check_shapes, run_onnx
from pnnx_conformance.oracle import to_numpy
from pnnx_reference.api import capture
from pnnx_reference.emit.onnx import write_onnx


def torch_outputs(model, inputs):
    with torch.no_grad():
        return to_numpy(model(*inputs))


@pytest.fixture(scope="module", params=sorted(MODELS))
def converted(request, tmp_path_factory):
    name = request.param
    cls, shapes, shapes2 = MODELS[name]
    model = cls().eval()
    graph = capture(model, tuple(inputs_at(shapes, 0)), inputs2=tuple(inputs_at(shapes2, 0)))
    path = tmp_path_factory.mktemp("dyn") / f"{name}.pnnx.onnx"
    write_onnx(graph, path, fp16=False)  # raises Unsupported naming any operator it refuses
    return name, model, graph, path, (shapes, shapes2)


@pytest.mark.parametrize("which", [0, 1])
def test_both_shapes_match_torch(converted, which):
    name, model, _, path, shapes = converted
    inputs = inputs_at(shapes[which], 1)
    assert_close(run_onnx(path, inputs), torch_outputs(model, inputs))


def test_dims_stay_symbolic(converted):
    """The file checks, its inferred shapes agree with the IR's, and every input dim the two
    shapes disagree on is symbolic in the file."""
    _, _, graph, path, (shapes, shapes2) = converted
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    check_shapes(model, graph)
    for value, a, b in zip(model.graph.input, shapes, shapes2):
        dims = value.type.tensor_type.shape.dim
        assert [bool(d.dim_param) for d in dims] == [x != y for x, y in zip(a, b)], (value.name, dims)


def test_reshape_as_reads_the_other_shape(tmp_path):
    """reshape_as of (N, 3, H, W) to (N, 3, L): the old rule copied dim 2 of the input (ONNX's 0)
    because the dims before it agreed, which onnxruntime refuses (4 is not 20)."""
    name = "same_batch_reshapes"
    cls, shapes, shapes2 = MODELS[name]
    model = cls().eval()
    graph = capture(model, tuple(inputs_at(shapes, 0)), inputs2=tuple(inputs_at(shapes2, 0)))
    write_onnx(graph, tmp_path / "m.pnnx.onnx", fp16=False)
    inputs = inputs_at(shapes, 2)
    assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), torch_outputs(model, inputs))


class PackedSequenceMask(torch.nn.Module):
    """transformers' traced mask construction (use_cache=False): position ids from the length,
    a packed-sequence id from torch.diff with a prepend, and the mask read back with
    position_ids[batch, q] / [batch, kv] index tensors broadcast over the length."""

    def forward(self, x):
        positions = torch.arange(x.size(1)).unsqueeze(0)
        starts = torch.diff(positions, dim=-1, prepend=positions[:, :1] - 1) != 1
        packed = starts.cumsum(-1)
        batch = torch.zeros(1, 1, 1, 1, dtype=torch.long)
        q = torch.arange(x.size(1))[None, None, :, None]
        kv = torch.arange(x.size(1))[None, None, None, :]
        same = packed[batch, q] == packed[batch, kv]
        causal = positions[batch, kv] <= positions[batch, q]
        return torch.where(same & causal, x.unsqueeze(1) @ x.unsqueeze(1).transpose(-1, -2), 0.0)


class Differences(torch.nn.Module):
    def forward(self, x):
        return torch.diff(x, n=2, dim=1, append=x[:, :2] * 3), torch.diff(x > 0.5, dim=-1).float()


@pytest.mark.parametrize("model_class", [PackedSequenceMask, Differences])
def test_diff_and_index_tensors_over_a_length_that_follows_the_input(tmp_path, model_class):
    """"torch.diff: no ONNX lowering" and "Tensor.index: needs static index shape" before."""
    model = model_class().eval()
    graph = capture(model, tuple(inputs_at([(1, 6, 4)], 0)), inputs2=tuple(inputs_at([(1, 9, 4)], 0)))
    write_onnx(graph, tmp_path / "m.pnnx.onnx", fp16=False)
    for length in (6, 9, 3):
        inputs = inputs_at([(1, length, 4)], 1)
        assert_close(run_onnx(tmp_path / "m.pnnx.onnx", inputs), torch_outputs(model, inputs))
