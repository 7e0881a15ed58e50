"""Bool and integer tensors in ncnn, which blobs hold as floats: a bool as 0/1, an integer as
its float value (fed so by `_ncnn.py` and the harness). Each lowering registered as exact on
them (bool_operands / int_operands) must match torch bit for bit on every ncnn mode; what is
not exact stays a clear refusal; f32 -> f16 rounds as torch does."""
from __future__ import annotations

import ncnn
import numpy as np
import pytest
import torch

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn, tolerance
from ncnn_export_helpers import torch_outputs
from pnnx_conformance.backends.ncnn_backend import declared_value_feeds
from pnnx_reference.api import capture
from pnnx_reference.emit.ncnn import write_ncnn
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param
from pnnx_reference.ir import Graph

EXACT = tolerance(0.0, 0.0, "bool and integer results are exact")
MODES = ["fp32", "default"] + (["vulkan-fp32", "vulkan"] if ncnn.get_gpu_count() else [])


def _bools(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.rand(*shape, generator=g) > 0.5


def _ints(*shape, low=-999, high=1000, dtype=torch.int64, seed=0):
    """Integers below 2048 in magnitude: exact in fp16 storage too."""
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randint(low, high, shape, generator=g, dtype=dtype)


def _divisors(*shape, seed=1):
    """Nonzero integers in [-13, 13], so exact multiples (where a reciprocal multiply rounds
    across an integer) are frequent."""
    d = _ints(*shape, low=-13, high=13, seed=seed)
    return torch.where(d == 0, torch.full_like(d, 7), d)


CASES = {
    "bool_mul_is_and": (Fn(torch.mul), [_bools(3, 4), _bools(3, 4, seed=1)]),
    "bool_add_is_or": (Fn(torch.add), [_bools(3, 4), _bools(3, 4, seed=1)]),
    "bool_xor": (Fn(lambda a, b: a ^ b), [_bools(3, 4), _bools(3, 4, seed=1)]),
    "bool_and_or": (Fn(lambda a, b, c: (a & b) | c), [_bools(2, 8), _bools(2, 8, seed=1), _bools(2, 8, seed=2)]),
    "bool_sum_all": (Fn(lambda m: m.sum()), [_bools(5, 6)]),
    "bool_sum_dim": (Fn(lambda m: m.sum(1)), [_bools(3, 40, 2)]),
    "bool_cumsum": (Fn(lambda m: m.cumsum(1)), [_bools(2, 6)]),
    "bool_unsqueeze": (Fn(lambda m: m.unsqueeze(2)), [_bools(3, 4)]),
    "bool_expand": (Fn(lambda m: m.expand(3, 4)), [_bools(1, 4)]),
    "bool_reshape": (Fn(lambda m: m.reshape(-1)), [_bools(3, 5)]),
    "bool_times_float": (Fn(lambda m, x: m * x), [_bools(3, 4), _ints(3, 4).float()]),
    # slicing only moves values: Slice, Crop (strided through a reshape), CopyTo
    "int_chunk": (Fn(lambda a: torch.chunk(a, 2, 1)), [_ints(3, 8)]),
    "int_unbind": (Fn(lambda a: a.unbind(1)), [_ints(2, 3, 4)]),
    "int_strided_slice": (Fn(lambda a: a[:, 1::2]), [_ints(3, 8)]),
    "int_narrow": (Fn(lambda a: a.narrow(1, 2, 3)), [_ints(3, 8)]),
    "bool_select": (Fn(lambda m: m.select(1, 2)), [_bools(3, 5, 4)]),
    "int_slice_scatter": (Fn(lambda a, b: torch.slice_scatter(a, b, 1, 2, 5)), [_ints(3, 8), _ints(3, 3, seed=2)]),
    "int_floor_divide": (Fn(torch.floor_divide), [_ints(4, 64), _divisors(4, 64)]),
    "int_floor_divide_scalar": (Fn(lambda a: a // 7), [_ints(4, 64)]),
    "int_remainder": (Fn(torch.remainder), [_ints(4, 64), _divisors(4, 64)]),
    # truncating division: the truncated float quotient is one off at exact multiples where ncnn's
    # CPU divides through the reciprocal (here: rows of 8)
    "int_trunc_divide": (Fn(lambda a, b: torch.div(a * 7, b, rounding_mode="trunc")),
                         [_ints(3, 8, low=-280, high=280), _divisors(3, 8)]),
    "int_trunc_divide_bcast": (Fn(lambda a, b: torch.div(a * 7, b, rounding_mode="trunc")),
                               [_ints(3, 8, low=-280, high=280), _ints(8, low=-9, high=-1)]),
    "int_trunc_of_true_quotient": (Fn(lambda a, b: torch.trunc((a * 7) / b)),
                                   [_ints(3, 8, low=-280, high=280), _ints(8, low=-9, high=-1)]),
    "int_floor_divide_small": (Fn(lambda a, b: torch.floor_divide(a * 7, b)),
                               [_ints(3, 8, low=-280, high=280), _divisors(3, 8)]),
    "int_floor_of_true_quotient": (Fn(lambda a, b: torch.floor((a * 7) / b)),
                                   [_ints(3, 8, low=-280, high=280), _ints(8, low=-9, high=-1)]),
    "int_ceil_of_true_quotient": (Fn(lambda a, b: torch.ceil((a * 7) / b)),
                                  [_ints(3, 8, low=-280, high=280), _ints(8, low=-9, high=-1)]),
    "int_fmod": (Fn(torch.fmod), [_ints(4, 64), _divisors(4, 64)]),
    "int_fmod_small": (Fn(lambda a, b: torch.fmod(a * 7, b)), [_ints(3, 8, low=-280, high=280), _divisors(3, 8)]),
    "int_arithmetic": (Fn(lambda a, b: (a - b) * 3 + abs(b) - torch.maximum(a, b)),
                       [_ints(3, 8, low=-200, high=200), _ints(3, 8, low=-200, high=200, seed=1)]),
    "int_compare": (Fn(lambda a, b: a > b), [_ints(3, 8, low=-3, high=3), _ints(3, 8, low=-3, high=3, seed=1)]),
    "int_zeros_like": (Fn(lambda a: torch.zeros_like(a) * a), [_ints(3, 4)]),
    "int_bitwise_not": (Fn(lambda a: ~a), [_ints(3, 8, dtype=torch.int32)]),
    "int_sum": (Fn(lambda a: a.sum(1)), [_ints(3, 4, low=-100, high=100)]),
    "int_to_float": (Fn(lambda a: a.float() * 0.5 - 3), [_ints(2, 13)]),
    "int_permute_cat": (Fn(lambda a, b: torch.cat([a.t(), b], 0)), [_ints(4, 3), _ints(2, 4, seed=1)]),
}


def _export(tmp_path, model, inputs, fp16=False):
    base = tmp_path / "m"
    write_ncnn(capture(model.eval(), tuple(inputs)), f"{base}.ncnn.param", f"{base}.ncnn.bin", f"{base}_ncnn.py",
               fp16=fp16)
    return base


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_bool_and_integer_results_are_exact_on_every_mode(tmp_path, name, mode):
    model, inputs = CASES[name]
    expected = torch_outputs(model.eval(), inputs)
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    assert_close([g.reshape(e.shape) if g.size == e.size else g for g, e in zip(got, expected)], expected,
                 EXACT, f"{name} on {mode}")


FLOAT_RESULTS = {
    "true_division": (Fn(torch.div), [_ints(3, 8, low=1, high=20), _ints(3, 8, low=1, high=7, seed=1)]),
    "cast_then_divide": (Fn(lambda a: a.float() / 3), [_ints(2, 13)]),
    "sqrt_of_int": (Fn(torch.sqrt), [_ints(2, 13, low=0, high=500)]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(FLOAT_RESULTS))
def test_float_functions_of_integers_are_float_functions(tmp_path, name, mode):
    model, inputs = FLOAT_RESULTS[name]
    expected = torch_outputs(model, inputs)
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    rel = 1e-3 if mode in ("fp32", "vulkan-fp32") else 5e-3  # a reciprocal multiply; fp16 storage of the quotient
    assert_close(got, expected, tolerance(0.0, rel, "ncnn divides by multiplying with the reciprocal"), mode)


# ties to even, the largest half, overflow to inf, fp16 subnormals
HALF_EDGES = torch.tensor([[1 + 2 ** -11, 1 + 3 * 2 ** -11, 65504.0, 65519.0, 65520.0, 1e6, -1e6, 3e-5],
                           [1e-6, 2 ** -24, 2 ** -25, 3 * 2 ** -26, -(1 + 2 ** -11), 0.1, 1 / 3, 2049.0]])


@pytest.mark.parametrize("mode", MODES)
def test_f32_to_f16_rounds_as_torch_on_every_mode(tmp_path, mode):
    """A Cast to fp16 and back, kept on the CPU (Vulkan's Cast does not round fp32 storage)."""
    model, inputs = Fn(lambda x: x.to(torch.float16)), [HALF_EDGES]
    base = _export(tmp_path, model, inputs)
    casts = [l for l in ncnn_param.load(f"{base}.ncnn.param").layers if l.type == "Cast"]
    assert [(l.params[0], l.params[1], l.params[31]) for l in casts] == [(1, 2, 16), (2, 1, 16)]
    got = run_ncnn(base, inputs, mode)[0]
    expected = HALF_EDGES.half().float().numpy()
    assert np.array_equal(got, expected), (got, expected)


class _EmbedPlus(torch.nn.Module):
    """embedding(indices) + the sum of an integer tensor; `route(a, i)` picks (indices, summed)."""

    def __init__(self, route=lambda a, i: (i, a)):
        super().__init__()
        self.embed, self.route = torch.nn.Embedding(4, 5), route

    def forward(self, a, i):
        indices, summed = self.route(a, i)
        return self.embed(indices) + summed.float().sum()


def test_integer_inputs_are_fed_as_values_unless_embed_reads_them(tmp_path):
    """`_ncnn.py` names the float values it feeds (`in0_values = in0.float()`), which the harness
    reads as its declaration; Embed's indices stay int32 bits."""
    model = _EmbedPlus()
    inputs = [_ints(3), torch.tensor([0, 2, 1])]
    base = _export(tmp_path, model, inputs)
    text = open(f"{base}_ncnn.py").read()
    assert "in0_values = in0.float().numpy()" in text and "in1_values" not in text
    assert declared_value_feeds(f"{base}_ncnn.py") == {"in0"}


@pytest.mark.parametrize("name", ["int", "bool"])
def test_generated_ncnn_py_returns_torch_dtypes(tmp_path, name):
    model, inputs = {"int": (Fn(lambda a, b: a // b), [_ints(2, 5), _divisors(2, 5)]),
                     "bool": (Fn(lambda a, b: a & b), [_bools(2, 5), _bools(2, 5, seed=1)])}[name]
    base = _export(tmp_path, model, inputs)
    namespace = {"__file__": f"{base}_ncnn.py"}
    exec(compile(open(f"{base}_ncnn.py").read(), f"{base}_ncnn.py", "exec"), namespace)
    out = namespace["test_inference"]()
    assert out.dtype == (torch.int64 if name == "int" else torch.bool)


def _graph(shape, dtype, op_type, params, out_shape):
    g = Graph()
    x = g.new_operand("0", shape, dtype)
    g.connect(g.new_operator("pnnx.Input", "pnnx_input_0"), outputs=[x])
    y = g.new_operand("1", out_shape, "i64")
    op = g.new_operator(op_type, "op_0")
    op.params.update(params)
    g.connect(op, inputs=[x], outputs=[y])
    g.connect(g.new_operator("pnnx.Output", "pnnx_output_0"), inputs=[y])
    return g


def _refusal(graph, tmp_path) -> str:
    with pytest.raises(UnsupportedOperator) as info:
        write_ncnn(graph, tmp_path / "m.param", tmp_path / "m.bin", tmp_path / "m_ncnn.py")
    assert not (tmp_path / "m.param").exists()
    return str(info.value)


def test_a_count_past_2_to_the_24_is_refused(tmp_path):
    message = _refusal(_graph([4097, 4097], "bool", "torch.sum", {"dim": None}, []), tmp_path)
    assert "a count of up to 16785409 bools" in message and "2^24" in message
    write_ncnn(  # 2^24 itself is exact
        _graph([4096, 4096], "bool", "torch.sum", {"dim": None}, []), tmp_path / "ok.param",
               tmp_path / "ok.bin", tmp_path / "ok_ncnn.py")


def test_a_cumsum_past_2_to_the_24_is_refused(tmp_path):
    message = _refusal(_graph([1, 2 ** 24 + 1], "bool", "torch.cumsum", {"dim": 1}, [1, 2 ** 24 + 1]), tmp_path)
    assert "bools" in message and "2^24" in message


@pytest.mark.parametrize("fn, reason", [
    (lambda a, b: a & b, "and on integers has no exact ncnn form"),
    (lambda a, b: torch.pow(a, b), "pow on integers has no exact ncnn form"),
    (lambda a, b: a | b, "or on integers has no exact ncnn form"),
])
def test_inexact_integer_arithmetic_is_refused(tmp_path, fn, reason):
    with pytest.raises(UnsupportedOperator, match=reason):
        _export(tmp_path, Fn(fn), [_ints(3, 4), _divisors(3, 4)])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("route, indices", [
    (lambda a, i: (i.reshape(-1), a), [[0, 2], [1, 3]]),  # computed by ncnn layers: carried as float values
    (lambda a, i: (i, i), [0, 2, 1]),                     # a graph input read as a value too: fed so
], ids=["computed", "read_as_a_value_too"])
def test_embed_indices_carried_as_float_values_are_looked_up_by_value(tmp_path, mode, route, indices):
    """Embed reads int32 bits; indices ncnn carries as float values pick their rows by a one-hot
    product instead (issue 29, item 5), exact: the one-hot layers stay in fp32 on the CPU."""
    model, inputs = _EmbedPlus(route), [_ints(3), torch.tensor(indices)]
    base = _export(tmp_path, model, inputs)
    assert "Embed " not in (tmp_path / "m.ncnn.param").read_text()
    got = run_ncnn(base, inputs, mode)
    tol = EXACT if mode in ("fp32", "vulkan-fp32") else tolerance(1e-2, 1e-2, "fp16 storage of the table rows")
    assert_close(got, torch_outputs(model, inputs), tol, mode)


@pytest.mark.parametrize("mode", MODES)
def test_f16_rounding_between_gpu_layers(tmp_path, mode):
    """The CPU-only Cast pair in the middle of a graph: ncnn moves the blob off the GPU and back."""
    model = Fn(lambda x: torch.relu((x * 3).half().float() - x))
    inputs = [torch.linspace(-4, 4, 16).reshape(2, 8) + 1 / 3]
    expected = torch_outputs(model, inputs)
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    tol = EXACT if mode in ("fp32", "vulkan-fp32") else tolerance(1e-2, 1e-2, "fp16 storage, as the table's fp16 modes")
    assert_close(got, expected, tol, mode)


class _MaskedConstant(torch.nn.Module):
    """An attention bias built from a constant that already holds -inf (torch.export folds a
    bool attn_mask so), masked again by a run-time mask."""

    def __init__(self, fill: float, stored: float) -> None:
        super().__init__()
        self.fill = fill
        bias = torch.zeros(4, 6)
        bias[::2, 1::3] = stored
        self.register_buffer("bias", bias)

    def forward(self, mask, x):
        return x + self.bias.masked_fill(mask, self.fill)


@pytest.mark.parametrize("fill, stored", [(float("-inf"), float("-inf")), (0.0, float("-inf")),
                                         (float("inf"), float("-inf"))])
@pytest.mark.parametrize("mode", MODES)
def test_a_fill_of_a_constant_holding_infinities_is_exact(tmp_path, mode, fill, stored):
    """mask * fill + (1 - mask) * bias would give -inf * 0 = NaN where the bias is -inf and the
    mask is not set (and inf - inf where both are infinite): selected by min/max instead."""
    model, inputs = _MaskedConstant(fill, stored), [_bools(4, 6), _ints(4, 6).float()]
    expected = torch_outputs(model.eval(), inputs)
    assert np.isneginf(expected[0]).any() and np.isfinite(expected[0]).any()
    got = run_ncnn(_export(tmp_path, model, inputs), inputs, mode)
    assert np.array_equal(got[0].reshape(expected[0].shape), expected[0]), (got, expected)


def test_a_constant_holding_nan_is_refused(tmp_path):
    model, inputs = _MaskedConstant(1.0, float("nan")), [_bools(4, 6), _ints(4, 6).float()]
    with pytest.raises(UnsupportedOperator, match="constant tensor holding NaN"):
        _export(tmp_path, model, inputs)
