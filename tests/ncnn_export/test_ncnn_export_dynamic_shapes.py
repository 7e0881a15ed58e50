"""Shapes that follow the input (captured at two input shapes, as `inputshape2` does): the
sizes our IR traced as arithmetic are written as ncnn shape expressions, which ncnn evaluates
at run time, so the same files compute torch's result at both shapes."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn


class ReshapeBySizes(nn.Module):
    def forward(self, x, y, z):
        x = x.reshape(x.size(0) // 128, y.size(1), -1)
        z = z.reshape(z.size(0), -1, z.size(3) * 3, z.size(2) // 3)
        return F.relu(x), F.relu(z)


class ReshapeAsFlatten(nn.Module):
    def forward(self, x, y):
        return x.reshape_as(y) + 1, torch.flatten(y, 1) * 2


class FlattenBatch(nn.Module):
    def forward(self, x):
        return torch.flatten(F.relu(x), 1), x.view(x.size(0), x.size(1), -1).unsqueeze(1) * 3


class InterpolateToOtherSize(nn.Module):
    def forward(self, x, y):
        return F.interpolate(x, size=(y.size(2) * 2, y.size(3) + 3), mode="bilinear", align_corners=False)


class BroadcastLowerRank(nn.Module):
    """Operands of lower rank than the other get outer 1s: a Reshape of dynamic dims."""

    def forward(self, x, y, z):
        return x + y, y * z, x - z


class SliceBySizes(nn.Module):
    def forward(self, x, y):
        # -9 is past the start of dim 1 at both shapes (6 and 8): Python clamps it to 0
        return x[:, :y.size(1)] * 2, x[:, 1:x.size(2) - 1, 2:] + 1, x[..., -3:] - 1, x[:, -9:] * 3


class StaticSlicesOfDynamicInput(nn.Module):
    """Strided and selecting slices of static dims of an input whose batch follows the input."""

    def forward(self, x):
        return x[:, :, ::2] * 2, x[:, 1] + 1


class SameBatchReshapes(nn.Module):
    """Reshapes that keep dim 0 (the batch the pools want) run per sample."""

    def forward(self, x, y):
        out0 = x.reshape(x.size(0), x.size(1), -1)
        out1 = x.reshape_as(y)
        out2 = torch.flatten(x, 1, 2)
        return F.max_pool1d(out0, 1), F.max_pool1d(out1, 1), F.max_pool1d(out2, 1)


class ReshapeReusingBatch(nn.Module):
    def forward(self, x):
        x = F.max_pool2d(x, 1)
        return F.max_pool1d(x.reshape(x.size(0), x.size(0), -1), 1)


MODELS = {
    "reshape_by_sizes": (ReshapeBySizes, [(256, 5), (1, 2, 3), (2, 4, 6, 10)], [(512, 5), (1, 4, 3), (3, 4, 9, 12)]),
    "reshape_as_flatten": (ReshapeAsFlatten, [(1, 3, 16), (1, 6, 8)], [(1, 3, 32), (1, 6, 16)]),
    "flatten_batch": (FlattenBatch, [(2, 3, 4, 5)], [(3, 3, 6, 7)]),
    "broadcast_lower_rank": (BroadcastLowerRank, [(2, 3, 4, 5), (4, 5), (5,)], [(3, 3, 6, 7), (6, 7), (7,)]),
    "same_batch_reshapes": (SameBatchReshapes, [(2, 3, 4, 5), (2, 3, 20)], [(4, 3, 6, 7), (4, 3, 42)]),
    "reshape_reusing_batch": (ReshapeReusingBatch, [(2, 4, 5, 7)], [(4, 4, 5, 7)]),
    "slice_by_sizes": (SliceBySizes, [(1, 6, 10), (1, 3, 7)], [(1, 8, 14), (1, 5, 7)]),
    "static_slices_of_dynamic_input": (StaticSlicesOfDynamicInput, [(2, 3, 8)], [(4, 3, 8)]),
    "interpolate_to_other_size": (InterpolateToOtherSize, [(1, 3, 8, 9), (1, 3, 4, 5)], [(1, 3, 8, 9), (1, 3, 6, 7)]),
}


def _inputs(shapes, seed):
    torch.manual_seed(seed)
    return [torch.rand(*s) for s in shapes]


def _convert(name, folder):
    cls, shapes, shapes2 = MODELS[name]
    model = cls().eval()
    base = folder / name
    graph = capture(model, tuple(_inputs(shapes, 0)), inputs2=tuple(_inputs(shapes2, 0)))
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=True)
    return name, model, base, (shapes, shapes2)


@pytest.fixture(scope="module", params=sorted(MODELS))
def converted(request, tmp_path_factory):
    return _convert(request.param, tmp_path_factory.mktemp("dyn"))


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("mode", ["fp32", "default"])
def test_both_shapes_match_torch(converted, which, mode):
    name, model, base, shapes = converted
    inputs = _inputs(shapes[which], 1)
    assert_close(run_ncnn(base, inputs, mode), torch_outputs(model, inputs),
                 FP32 if mode == "fp32" else LOW_PRECISION, f"{name} at {shapes[which]} ({mode})")


# its Crops cut static dims and its Reshape infers the one dynamic dim (-1)
STATIC_SIZES = {"static_slices_of_dynamic_input"}


@pytest.mark.parametrize("name", sorted(set(MODELS) - STATIC_SIZES))
def test_sizes_are_expressions(tmp_path, name):
    """No size of a dynamic dim is frozen: each Reshape/Interp/Crop reading one is an expression."""
    _, _, base, _ = _convert(name, tmp_path)
    lines = [ln for ln in open(f"{base}.ncnn.param").read().splitlines()
             if ln.startswith(("Reshape", "Interp", "Crop"))]
    assert lines and all(any(k in ln for k in ('6="', '9="', '19="')) for ln in lines), lines


def test_reshapes_keeping_the_batch_run_per_sample(tmp_path):
    """Only reshape_as (whose dim 0 comes from the other input) moves the batch axis."""
    _, _, base, _ = _convert("same_batch_reshapes", tmp_path)
    lines = [ln for ln in open(f"{base}.ncnn.param").read().splitlines() if ln.startswith("Reshape")]
    assert sum(" 12=" in ln for ln in lines) <= 2, lines


class ExportedDims(nn.Module):
    def forward(self, x, y):
        a = x.reshape(x.size(0), -1, x.size(3) * 3, x.size(2) // 3)
        b = F.interpolate(y, size=(x.size(2) * 2, x.size(3)), mode="nearest")
        return F.relu(a), b, y[:, :, 1:y.size(2) - 1] * 2


def test_exported_program_dims_follow_the_input(tmp_path):
    """torch.export's Dim dims come out as the same ncnn expressions (the .pt2 door)."""
    from torch.export import Dim, export

    n, h, w, yh = Dim("n", min=1, max=8), Dim("h", min=2, max=64), Dim("w", min=2, max=64), Dim("yh", min=4, max=64)
    model = ExportedDims().eval()
    program = export(model, tuple(_inputs([(2, 4, 6, 10), (1, 3, 5, 7)], 0)),
                     dynamic_shapes=({0: n, 2: 3 * h, 3: w}, {2: yh}))
    base = tmp_path / "m"
    write_ncnn(capture(program), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    for shapes in ([(2, 4, 6, 10), (1, 3, 5, 7)], [(3, 4, 9, 12), (1, 3, 8, 7)]):
        inputs = _inputs(shapes, 1)
        assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, str(shapes))
