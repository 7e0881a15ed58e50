"""Linear-algebra and layout operators (mv, outer, baddbmm, bilinear, tril/triu, argmax/argmin,
narrow, movedim, tile/repeat, repeat_interleave, index_select, gather): captured, lowered to ncnn, run on
ncnn CPU in fp32 and compared with torch, in batch-1 graphs and in batchless ones (an input whose
dim 0 is not 1: every blob keeps all its dims)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from fn_modules import Fn, FnOf
from conformance_runs import assert_close, run_ncnn
from ncnn_export_helpers import FP32, torch_outputs
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param

def _export(model, inputs, tmp_path):
    base = tmp_path / "m"
    write_ncnn(capture(model, tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=False)
    return base


def _check(model, inputs, tmp_path, layers: set[str]):
    """Export, assert the `layers` were emitted, run on ncnn CPU (fp32) and compare with torch.
    ncnn blobs drop the batch axis and 0-d results are 1-element blobs, so ncnn's output is
    compared after checking it has torch's non-1 dims in order."""
    torch.manual_seed(0)
    model = model.eval()
    expected = [e.astype(np.float32) for e in torch_outputs(model, inputs)]
    base = _export(model, inputs, tmp_path)
    emitted = {layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers}
    assert layers <= emitted, emitted
    got = run_ncnn(base, inputs)
    for g, e in zip(got, expected):
        assert [d for d in g.shape if d != 1] == [d for d in e.shape if d != 1], (g.shape, e.shape)
    assert_close([g.reshape(e.shape) for g, e in zip(got, expected)], expected, FP32, str(layers))
    return base


def _refused(model, inputs, tmp_path, reason: str) -> None:
    with pytest.raises(UnsupportedOperator) as info:
        _export(model.eval(), inputs, tmp_path)
    assert reason in str(info.value)


def _rand(*shapes):
    torch.manual_seed(0)
    return [torch.rand(*s) * 2 - 1 for s in shapes]


# --- mv, outer, baddbmm, bilinear -----------------------------------------------------------
def test_mv_matrix_by_vector_is_matmul(tmp_path):
    _check(Fn(torch.mv), _rand((4, 13), (13,)), tmp_path, {"MatMul"})


def test_mv_of_a_transposed_matrix(tmp_path):
    _check(Fn(lambda a, v: torch.mv(a.t(), v)), _rand((6, 4), (6,)), tmp_path, {"MatMul", "Permute"})


def test_mv_by_a_constant_matrix_is_inner_product(tmp_path):
    model = FnOf(lambda s, v: torch.mv(s.w, v), w=torch.randn(8, 16))
    _check(model, _rand((16,)), tmp_path, {"InnerProduct"})


@pytest.mark.parametrize("shapes", [[(4,), (13,)], [(1,), (16,)]])
def test_outer_is_a_broadcast_product(shapes, tmp_path):
    _check(Fn(torch.outer), _rand(*shapes), tmp_path, {"BinaryOp"})


BADDBMM = {
    "basic": ([(2, 4, 8), (2, 4, 13), (2, 13, 8)], {}),
    "beta_alpha": ([(2, 4, 5), (2, 4, 6), (2, 6, 5)], dict(beta=0.5, alpha=2.0)),
    "beta0": ([(2, 6, 7), (2, 6, 16), (2, 16, 7)], dict(beta=0.0, alpha=0.125)),
    "bias_bcast": ([(8,), (3, 4, 5), (3, 5, 8)], {}),  # a 1-d input against a 3-d product
    "batch1": ([(1, 3, 3), (1, 3, 12), (1, 12, 3)], dict(alpha=-1.5)),
}


@pytest.mark.parametrize("name", sorted(BADDBMM))
def test_baddbmm(name, tmp_path):
    shapes, kwargs = BADDBMM[name]
    _check(Fn(lambda i, a, b: torch.baddbmm(i, a, b, **kwargs)), _rand(*shapes), tmp_path, {"MatMul"})


def test_baddbmm_with_beta0_ignores_a_nan_input(tmp_path):
    inputs = _rand((2, 3, 4), (2, 3, 5), (2, 5, 4))
    inputs[0][0, 0, 0] = float("nan")
    _check(Fn(lambda i, a, b: torch.baddbmm(i, a, b, beta=0.0)), inputs, tmp_path, {"MatMul"})


BILINEAR = {
    "rows": [(3, 6), (3, 5)],
    "rank3": [(2, 4, 6), (2, 4, 5)],
    "unbatched": [(6,), (5,)],
    "batch1": [(1, 6), (1, 5)],
}


@pytest.mark.parametrize("name", sorted(BILINEAR))
def test_nn_bilinear(name, tmp_path):
    torch.manual_seed(1)
    _check(nn.Bilinear(6, 5, 8), _rand(*BILINEAR[name]), tmp_path, {"BinaryOp"})


def test_nn_bilinear_one_input_twice(tmp_path):
    torch.manual_seed(1)
    bilinear = nn.Bilinear(8, 8, 4)
    _check(Fn(lambda x: bilinear(x, x)), _rand((3, 8)), tmp_path, {"BinaryOp"})


def test_f_bilinear_without_bias(tmp_path):
    model = FnOf(lambda s, a, b: F.bilinear(a, b, s.w), w=torch.randn(4, 8, 3))
    _check(model, _rand((2, 8), (2, 3)), tmp_path, {"BinaryOp", "Gemm"})


# --- tril / triu --------------------------------------------------------------------------
TRIANGLES = {
    "square": ((5, 5), 0),
    "wide_above": ((4, 6), 1),
    "tall_below": ((6, 4), -2),
    "batched": ((2, 3, 4, 4), 0),
    "batch1": ((1, 3, 4, 5), 1),
}


@pytest.mark.parametrize("fn", [torch.tril, torch.triu])
@pytest.mark.parametrize("name", sorted(TRIANGLES))
def test_tril_triu_multiply_by_a_constant_mask(fn, name, tmp_path):
    shape, diagonal = TRIANGLES[name]
    _check(Fn(lambda x: fn(x, diagonal)), _rand(shape), tmp_path, {"MemoryData", "BinaryOp"})


# --- argmax / argmin ------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [torch.argmax, torch.argmin])
@pytest.mark.parametrize("shape, kwargs", [((1, 3, 8, 8), {}), ((16,), {}), ((2, 13, 5), dict(dim=1)),
                                           ((2, 4, 6), dict(dim=-1, keepdim=True)), ((1, 5, 7), dict(dim=1))])
def test_argmax_argmin(fn, shape, kwargs, tmp_path):
    _check(Fn(lambda x: fn(x, **kwargs)), _rand(shape), tmp_path, {"Reduction", "Threshold"})


@pytest.mark.parametrize("fn", [torch.argmax, torch.argmin])
def test_argmax_argmin_report_the_first_of_equal_extremes(fn, tmp_path):
    x = torch.tensor([[0.5, -2.0, 3.0, 3.0, -2.0, 1.0, 3.0, -2.0],
                      [-1.0, -1.0, 2.0, 2.0, 0.0, -1.0, 1.0, 2.0]])
    _check(Fn(lambda t: fn(t, dim=1)), [x], tmp_path, {"Reduction"})
    _check(Fn(lambda t: fn(t)), [x], tmp_path, {"Reduction"})


# --- narrow, movedim, tile / repeat, repeat_interleave, index_select --------------------------
@pytest.mark.parametrize("shape, dim, start, length", [
    ((1, 8, 6, 6), 1, 1, 2), ((2, 4, 13), -1, 3, 5), ((6, 4), 0, 0, 1), ((2, 5), 1, -2, 2), ((2, 5), 1, -3, 2)])
def test_narrow_is_crop(shape, dim, start, length, tmp_path):
    _check(Fn(lambda x: torch.narrow(x, dim, start, length)), _rand(shape), tmp_path, {"Crop"})


@pytest.mark.parametrize("shape, source, destination", [
    ((1, 3, 8, 8), 1, -1), ((2, 13, 5), -1, 0), ((2, 3, 4), (0, 1), (2, 0)), ((1, 2, 3, 4, 5), 2, 4)])
def test_movedim_is_permute(shape, source, destination, tmp_path):
    _check(Fn(lambda x: torch.movedim(x, source, destination)), _rand(shape), tmp_path, {"Permute"})


def test_moveaxis_noop_is_no_layer(tmp_path):
    base = _check(Fn(lambda x: torch.moveaxis(x, 1, 1) + 1), _rand((4, 12)), tmp_path, {"BinaryOp"})
    assert "Permute" not in {layer.type for layer in ncnn_param.load(f"{base}.ncnn.param").layers}


@pytest.mark.parametrize("shape, fn", [
    ((1, 3, 4, 4), lambda x: torch.tile(x, (1, 1, 2, 3))),
    ((3, 4), lambda x: torch.tile(x, (2,))),            # fewer dims than the input: leading 1s
    ((4, 5), lambda x: torch.tile(x, (2, 1, 1))),       # more dims: new leading dims
    ((13,), lambda x: x.tile((3,))),
    ((4, 5), lambda x: x.repeat(2, 1, 3)),
    ((1, 3, 4), lambda x: x.repeat(1, 1, 2, 1)),        # a new dim after the batch axis
])
def test_tile_and_repeat(shape, fn, tmp_path):
    _check(Fn(fn), _rand(shape), tmp_path, {"Tile"})


@pytest.mark.parametrize("shape, repeats, dim", [
    ((2, 13), 2, 1), ((1, 2, 5, 8), 2, 1), ((2, 3), 3, None), ((3, 4), 2, -1), ((1, 3, 4), 3, 2)])
def test_repeat_interleave_is_reshape_tile_reshape(shape, repeats, dim, tmp_path):
    _check(Fn(lambda x: torch.repeat_interleave(x, repeats, dim)), _rand(shape), tmp_path, {"Tile"})


def test_repeat_interleave_by_constant_counts_is_crop_concat(tmp_path):
    model = FnOf(lambda s, x: torch.repeat_interleave(x, s.r, dim=0), r=torch.tensor([2, 0, 3]))
    _check(model, _rand((3, 4)), tmp_path, {"Crop", "Concat"})


def test_repeat_interleave_along_the_batch_axis_runs_on_the_whole_blob(tmp_path):
    """Along dim 0 it cannot run sample by sample: the batch of 1 is folded into the blob first."""
    _check(Fn(lambda x: torch.repeat_interleave(x, 2, 0)), _rand((1, 3, 4, 4)), tmp_path, {"Reshape"})


@pytest.mark.parametrize("shape, dim, index", [
    ((1, 8, 4), 1, [5, 1, 2]), ((6, 4), 0, [0, 2, 3, 3, 1]), ((2, 3, 16), -1, [4, 5, 6, 7])])
def test_index_select_by_a_constant_index_is_crop_concat(shape, dim, index, tmp_path):
    model = FnOf(lambda s, x: torch.index_select(x, dim, s.idx), idx=torch.tensor(index))
    _check(model, _rand(shape), tmp_path, {"Crop"})


def test_index_select_by_a_runtime_index_is_refused(tmp_path):
    _refused(Fn(lambda x, i: torch.index_select(x, 0, i)), [torch.rand(6, 4), torch.tensor([1, 2])], tmp_path,
             "torch.index_select")


@pytest.mark.parametrize("shape, dim, line, index_shape", [
    ((2, 13, 4), 1, [3, 4, 0], (2, 3, 4)),     # the same entries at every other position: index_select
    ((3, 8), 1, [7, 1, 2], (2, 3)),            # an index shorter than the input along dim 0: cut first
    ((1, 5, 6), -1, [0, 5, 5, 1], (1, 4, 4))])
def test_gather_by_a_constant_index_along_one_line_is_crop_concat(shape, dim, line, index_shape, tmp_path):
    view = [len(line) if d == dim % len(shape) else 1 for d in range(len(shape))]
    index = torch.tensor(line).view(view).expand(index_shape).contiguous()
    model = FnOf(lambda s, x: torch.gather(x, dim, s.idx), idx=index)
    _check(model, _rand(shape), tmp_path, {"Crop"})


def test_gather_by_an_index_that_varies_across_rows_is_refused(tmp_path):
    model = FnOf(lambda s, x: torch.gather(x, 1, s.idx), idx=torch.tensor([[0, 1], [2, 0]]))
    _refused(model, _rand((2, 4)), tmp_path, "differs across the other dims")
