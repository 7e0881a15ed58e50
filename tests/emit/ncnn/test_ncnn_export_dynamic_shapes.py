"""Shapes that follow the input (captured at two input shapes, as `inputshape2` does): the
sizes our IR traced as arithmetic are written as ncnn shape expressions, which ncnn evaluates
at run time, so the same files compute torch's result at both shapes."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conformance_runs import assert_close, run_ncnn
from dynamic_shape_models import MODELS, inputs_at
from ncnn_export_helpers import FP32, LOW_PRECISION, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator


def _convert(name, folder):
    cls, shapes, shapes2 = MODELS[name]
    model = cls().eval()
    base = folder / name
    graph = capture(model, tuple(inputs_at(shapes, 0)), inputs2=tuple(inputs_at(shapes2, 0)))
    write_ncnn(graph, f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=True)
    return name, model, base, (shapes, shapes2)


@pytest.fixture(scope="module", params=sorted(MODELS))
def converted(request, tmp_path_factory):
    return _convert(request.param, tmp_path_factory.mktemp("dyn"))


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("mode", ["fp32", "default"])
def test_both_shapes_match_torch(converted, which, mode):
    name, model, base, shapes = converted
    inputs = inputs_at(shapes[which], 1)
    assert_close(run_ncnn(base, inputs, mode), torch_outputs(model, inputs),
                 FP32 if mode == "fp32" else LOW_PRECISION, f"{name} at {shapes[which]} ({mode})")


# its Crops cut static dims and its Reshape infers the one dynamic dim (-1); the ramps of
# causal_by_length are 1-d blobs whose Reshapes to a row or a column infer it alike, and so is
# the column of indices relative_bias_by_length looks up; zero_bias_by_lengths has no size left
# to write (its mask of zeros is left out), nor has all_true_mask_by_length (its mask true
# everywhere is left out, where() picks the scores)
STATIC_SIZES = {"static_slices_of_dynamic_input", "causal_by_length", "relative_bias_by_length",
                "zero_bias_by_lengths", "all_true_mask_by_length"}


def test_a_mask_of_zeros_is_left_out(tmp_path):
    """Adding zeros to the scores changes none: SDPA reads no mask, and no layer fills one."""
    _, _, base, _ = _convert("zero_bias_by_lengths", tmp_path)
    layers = [ln.split() for ln in open(f"{base}.ncnn.param").read().splitlines()[2:]]
    types = [layer[0] for layer in layers]
    assert sorted(types) == ["BinaryOp", "Input", "Input", "SDPA", "Split"], types  # k * 2 the one BinaryOp
    assert next(layer for layer in layers if layer[0] == "SDPA")[2:4] == ["3", "1"]


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


class FloatFullLike(nn.Module):
    def forward(self, x):
        return torch.full_like(x, 2.0) * x.size(1)


def test_a_fill_like_a_float_tensor_of_dynamic_shape_is_refused(tmp_path):
    """Clip(x, value, value) is the value for any x but NaN, which a float x may hold."""
    graph = capture(FloatFullLike().eval(), (torch.rand(1, 5),), inputs2=(torch.rand(1, 7),))
    with pytest.raises(UnsupportedOperator, match=r"torch.full_like of a f32 tensor .* NaN in it would stay NaN"):
        write_ncnn(graph, tmp_path / "m.ncnn.param", tmp_path / "m.ncnn.bin", tmp_path / "m_ncnn.py")
    assert not list(tmp_path.iterdir())


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
    program = export(model, tuple(inputs_at([(2, 4, 6, 10), (1, 3, 5, 7)], 0)),
                     dynamic_shapes=({0: n, 2: 3 * h, 3: w}, {2: yh}))
    base = tmp_path / "m"
    write_ncnn(capture(program), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py", fp16=False)
    for shapes in ([(2, 4, 6, 10), (1, 3, 5, 7)], [(3, 4, 9, 12), (1, 3, 8, 7)]):
        inputs = inputs_at(shapes, 1)
        assert_close(run_ncnn(base, inputs, "fp32"), torch_outputs(model, inputs), FP32, str(shapes))


class PackedMaskOfSteps(nn.Module):
    """The packed-sequence index over positions 0, 2, 4, ...: their diff is 2, not 1, so each
    position starts a sequence and the mask is the diagonal, not the causal one."""

    def forward(self, x):
        n = x.size(2)
        p = (torch.arange(n) * 2).unsqueeze(0)
        packed = (torch.diff(p, dim=-1, prepend=p[:, :1] - 1) != 1).cumsum(-1)
        q, k = torch.arange(n)[None, None, :, None], torch.arange(n)[None, None, None, :]
        b = torch.zeros(1, 1, 1, 1, dtype=torch.long)
        return F.scaled_dot_product_attention(x, x, x, attn_mask=packed[b, q] == packed[b, k])


def test_a_packed_index_over_positions_not_a_ramp_is_refused(tmp_path):
    """Only positions arange(L) (+ c) fold: any other diff is left for the lowering to refuse."""
    model, shapes = PackedMaskOfSteps().eval(), [(1, 2, 6, 8)]
    graph = capture(model, tuple(inputs_at(shapes, 0)), inputs2=tuple(inputs_at([(1, 2, 11, 8)], 0)))
    with pytest.raises(UnsupportedOperator, match=r"torch\.diff .*no ncnn lowering"):
        write_ncnn(graph, f"{tmp_path}/m.ncnn.param", f"{tmp_path}/m.ncnn.bin", f"{tmp_path}/m_ncnn.py")


def test_the_packed_causal_mask_is_k_at_most_q(tmp_path):
    """transformers' traced mask folds to one comparison of two ramps: no diff, cumsum or
    lookup is left in the file."""
    _, _, base, _ = _convert("packed_causal_mask", tmp_path)
    types = [ln.split()[0] for ln in open(f"{base}.ncnn.param").read().splitlines()[2:]]
    assert types.count("CumulativeSum") == 2 and "Gemm" not in types, types  # the two ramps q and k
