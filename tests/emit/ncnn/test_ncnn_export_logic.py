"""Comparisons, boolean logic, all/any, where/masked_fill, casts and fill (emit/ncnn/families/
logic.py, cast.py, reduce.py, creation.py):
each small module is captured, lowered, run in ncnn (CPU fp32) and compared with torch
exactly; bool results come back as float 0/1 blobs, integer results as whole floats. Bool
inputs are fed as float 0/1, as the conformance backend and the generated `_ncnn.py` feed them."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from fn_modules import Fn
from conformance_runs import assert_close, run_ncnn, tolerance
from ncnn_export_helpers import lowered, torch_outputs
from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend
from pnnx_reference.api import export
from pnnx_reference.errors import UnsupportedOperator
from pnnx_reference.formats import ncnn_param

TINY = float(np.finfo(np.float32).smallest_subnormal)
EXACT = tolerance(0.0, 0.0, "comparisons and selections are exact")


def _ties(*shape, seed=0):
    """Whole numbers in [-2, 2]: comparisons of two such tensors hit every outcome often."""
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randint(-2, 3, shape, generator=g).float()


def _x(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.rand(*shape, generator=g) * 6 - 3


def _bools(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.rand(*shape, generator=g) > 0.5


# neighbours one ulp apart, subnormals against 0 and signed zeros: a - b is never 0 unless a == b
EDGE_A = torch.tensor([1.0, 1.0, TINY, 0.0, -0.0, -TINY, 3e38, -3e38, 2.5]).reshape(1, 1, 9)
EDGE_B = torch.tensor([np.nextafter(np.float32(1), np.float32(2)), 1.0, 0.0, TINY, 0.0, 0.0, -3e38, 3e38,
                       2.5]).reshape(1, 1, 9)

COMPARE = {"eq": torch.eq, "ne": torch.ne, "gt": torch.gt, "ge": torch.ge, "lt": torch.lt, "le": torch.le}
R4, R3 = (1, 3, 8, 8), (2, 4, 6)

CASES = {}
for _name, _fn in COMPARE.items():
    CASES[f"torch.{_name}"] = (Fn(_fn), [_ties(*R4), _ties(*R4, seed=1)])
    CASES[f"torch.{_name}_edges"] = (Fn(_fn), [EDGE_A, EDGE_B])
    CASES[f"torch.{_name}_bcast_batchless"] = (Fn(_fn), [_ties(*R3), _ties(6, seed=1)])
    CASES[f"torch.{_name}_scalar"] = (Fn(lambda x, f=_fn: f(x, 1.0)), [_ties(*R4)])
    CASES[f"Tensor.{_name}"] = (Fn(lambda a, b, n=_name: getattr(a, n)(b)), [_ties(*R3), _ties(*R3, seed=2)])
    CASES[f"torch.{_name}_bool"] = (Fn(_fn), [_bools(3, 5), _bools(3, 5, seed=1)])
CASES.update({
    "torch.greater": (Fn(lambda x: torch.greater(x, 1.0)), [_ties(*R3)]),
    "torch.less_equal": (Fn(torch.less_equal), [_ties(*R3), _ties(*R3, seed=1)]),
    "Tensor.not_equal": (Fn(lambda a, b: a.not_equal(b)), [_ties(*R4), _ties(*R4, seed=1)]),
    "Tensor.to_float_of_compare": (Fn(lambda x: (x > 0).to(x.dtype) * x), [_x(*R4)]),
    "torch.logical_and": (Fn(torch.logical_and), [_bools(3, 8), _bools(3, 8, seed=1)]),
    "torch.logical_or": (Fn(torch.logical_or), [_bools(3, 8), _bools(3, 8, seed=1)]),
    "torch.logical_xor": (Fn(torch.logical_xor), [_bools(3, 8), _bools(3, 8, seed=1)]),
    "torch.logical_not": (Fn(torch.logical_not), [_bools(3, 8)]),
    "torch.logical_and_bcast": (Fn(torch.logical_and), [_bools(2, 3, 8), _bools(8, seed=1)]),
    # float operands: true where nonzero, the subnormal included
    "torch.logical_and_float": (Fn(torch.logical_and), [_ties(*R3) * TINY, _ties(*R3, seed=1)]),
    "torch.logical_or_float": (Fn(torch.logical_or), [_ties(*R3) * TINY, _ties(*R3, seed=1)]),
    "torch.logical_xor_float": (Fn(torch.logical_xor), [_ties(*R3), _ties(*R3, seed=1)]),
    "torch.logical_not_float": (Fn(torch.logical_not), [_ties(*R3) * TINY]),
    "torch.logical_from_compare": (Fn(lambda a, b: torch.logical_xor(a > 0, torch.logical_not(b <= a))),
                                   [_ties(*R4), _ties(*R4, seed=1)]),
    "torch.bitwise_not": (Fn(lambda a: torch.logical_and(~a, a.logical_not())), [_bools(3, 8)]),
    "torch.all": (Fn(torch.all), [_bools(3, 8)]),
    "torch.all_true": (Fn(torch.all), [torch.ones(3, 8, dtype=torch.bool)]),
    "torch.any": (Fn(torch.any), [_bools(3, 8) & False]),
    "torch.all_dim_keep": (Fn(lambda x: torch.all(x, dim=-1, keepdim=True)), [_bools(2, 4, 3)]),
    "torch.any_dim": (Fn(lambda x: torch.any(x, dim=1)), [_bools(2, 4, 3)]),
    "torch.all_float_dim": (Fn(lambda x: torch.all(x, dim=1)), [_ties(3, 4)]),
    "torch.any_float": (Fn(lambda x: torch.any(x * TINY, dim=1)), [_ties(3, 4)]),
    "torch.any_compare_batch1": (Fn(lambda x: (x > 2.5).any(dim=2)), [_x(*R4)]),
    "torch.where": (Fn(torch.where), [_bools(3, 8), _x(3, 8), _x(3, 8, seed=1)]),
    "torch.where_bcast": (Fn(torch.where), [_bools(8), _x(2, 3, 8), _x(3, 1, seed=1)]),
    "torch.where_scalars": (Fn(lambda x: torch.where(x > 0.5, 1.0, -1.0)), [_x(*R4)]),
    "torch.where_scalar_other": (Fn(lambda x: torch.where(x > 0, x, 0.0)), [_x(*R3)]),
    "torch.where_inf": (Fn(lambda x: torch.where(x > 0, float("inf"), x)), [_x(*R3)]),
    "Tensor.masked_fill": (Fn(lambda x, m: x.masked_fill(m, -1.5)), [_x(*R4), _bools(*R4)]),
    "Tensor.masked_fill_neg_inf": (Fn(lambda x, m: x.masked_fill(m, float("-inf"))), [_x(*R3), _bools(4, 6)]),
    "Tensor.masked_fill_inf_compare": (Fn(lambda x: x.masked_fill(x > 1, float("inf"))), [_x(*R4)]),
    "Tensor.masked_fill_bcast": (Fn(lambda x, m: x.masked_fill(m, 0.0)), [_x(2, 4, 5, 5), _bools(1, 1, 5, 5)]),
    "Tensor.float_from_bool": (Fn(lambda m: m.float() * 3), [_bools(3, 8)]),
    "Tensor.float": (Fn(lambda x: x.float()), [_x(*R3)]),
    "Tensor.bool": (Fn(lambda x: x.bool()), [_ties(*R3) * TINY]),
    "Tensor.long": (Fn(lambda x: x.long()), [_x(*R3) * 10]),
    "Tensor.int": (Fn(lambda x: x.int()), [_x(*R4) * 10]),
    "Tensor.to_i32": (Fn(lambda x: x.to(torch.int32)), [_x(3, 4) * 10]),
    "Tensor.to_bool": (Fn(lambda x: x.to(torch.bool)), [_ties(3, 4)]),
    "Tensor.type_as_bool": (Fn(lambda m, x: m.type_as(x) + x), [_bools(3, 4), _x(3, 4)]),
    "Tensor.fill": (Fn(lambda x: (x * 1.0).fill_(2.5)), [_x(*R4)]),
    "Tensor.fill_batchless": (Fn(lambda x: (x + 0.0).fill_(-7.25) + x), [_x(*R3)]),
    "Tensor.fill_tensor_value": (Fn(lambda x, v: (x * 1.0).fill_(v.sum())), [_x(2, 13), _x(4)]),
    "Tensor.fill_tensor_value_batch1": (Fn(lambda x, v: (x * 1.0).fill_(v.max())), [_x(*R4), _x(1, 5)]),
})


@pytest.mark.parametrize("name", sorted(CASES))
def test_logic_matches_torch_exactly_on_ncnn_cpu(tmp_path, name):
    model, inputs = CASES[name]
    expected = torch_outputs(model.eval(), inputs)
    got = run_ncnn(lowered(tmp_path, model, inputs), inputs)
    for g, e in zip(got, expected):
        g = g.reshape(e.shape) if g.size == e.size == 1 else g
        assert_close([g], [e.astype(np.float32)], EXACT, name)


@pytest.mark.parametrize("name", ["torch.where_inf", "Tensor.masked_fill_neg_inf", "Tensor.masked_fill_inf_compare"])
def test_infinite_fills_use_scalars_finite_in_fp16(tmp_path, name):
    """A GPU in fp16 arithmetic reads each BinaryOp scalar as fp16: FLT_MAX would already be
    inf there, and 0 * inf is NaN. Every scalar must be a finite fp16 number."""
    model, inputs = CASES[name]
    base = lowered(tmp_path, model, inputs)
    scalars = [layer.params[2] for layer in ncnn_param.load(f"{base}.ncnn.param").layers
               if layer.type == "BinaryOp" and layer.params.get(1) == 1]
    assert scalars and all(np.isfinite(np.float16(v)) for v in scalars), scalars


@pytest.mark.parametrize("fn, inputs, reason", [
    (lambda a, b: a & b, [torch.arange(12).reshape(3, 4), torch.arange(12).reshape(3, 4) + 3],
     "and on integers has no exact ncnn form"),
    (lambda x: torch.sigmoid(x), [torch.arange(12).reshape(3, 4).float(), torch.arange(12).reshape(3, 4)][1:],
     "is i64: ncnn blobs hold floats"),
    (lambda x: x.to(torch.bfloat16), [_x(3, 4)], "from f32 to bf16 has no exact ncnn form"),
    (lambda x: x.to(torch.uint8), [_x(3, 4)], "from f32 to u8"),
    (lambda x, m: x.masked_fill(m, float("nan")), [_x(3, 4), _bools(3, 4)], "NaN number"),
    (lambda m: torch.nn.functional.pad(m, (1, 1)), [_bools(3, 4)], "is bool: ncnn blobs hold floats"),
    (lambda x: torch.where(x > 0), [_x(3, 4)], "argument input is neither a tensor nor a number"),
])
def test_refusals_name_the_reason(tmp_path, fn, inputs, reason):
    with pytest.raises(UnsupportedOperator, match=reason):
        lowered(tmp_path, Fn(fn), inputs)


def _artefacts(tmp_path, model, inputs) -> Artefacts:
    res = export(model, tuple(inputs), tmp_path, "m", fp16=False)
    assert "ncnn" not in res.unsupported, res.unsupported
    paths = {"ncnn.param": res.paths["ncnnparam"], "ncnn.bin": res.paths["ncnnbin"], "ncnn.py": res.paths["ncnnpy"]}
    return Artefacts("reference", "t", tmp_path, paths)


@pytest.mark.parametrize("precision", ["fp32", "default"])
def test_conformance_backend_feeds_bool_inputs_as_float(tmp_path, precision):
    """A True fed as int32 1 would read as a subnormal float, which 1 - x rounds back to 1."""
    model, inputs = Fn(lambda a, b: torch.logical_and(torch.logical_not(a), b)), [_bools(3, 8), _bools(3, 8, seed=1)]
    backend = NcnnCpuBackend()
    backend.prepare(_artefacts(tmp_path, model, inputs), precision)
    try:
        got = backend.run([t.numpy() for t in inputs])[0]
    finally:
        backend.release()
    assert_close([got], [torch_outputs(model, inputs)[0].astype(np.float32)], EXACT)


def test_generated_ncnn_py_feeds_bool_inputs_as_float_0_1(tmp_path):
    model, inputs = Fn(lambda a, x: torch.where(a, x, -x)), [_bools(2, 5), _x(2, 5)]
    ncnn_py = _artefacts(tmp_path, model, inputs).paths["ncnn.py"]
    spec = importlib.util.spec_from_file_location("m_ncnn", ncnn_py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    got = module.test_inference()
    torch.manual_seed(0)  # the inputs the script draws
    a = torch.randint(2, (2, 5)).bool()
    x = torch.rand(2, 5, dtype=torch.float)
    assert 0 < a.sum() < a.numel()
    torch.testing.assert_close(got, torch.where(a, x, -x), rtol=0, atol=0)
