"""Lazy modules draw their weights at the first forward: the oracle, the rebuilt oracle and
a converter (which receives the module still uninitialized) must all draw the same ones."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from pnnx_conformance.backends.torch_eager import TorchBackend
from pnnx_conformance.cases import load_case, use_provider
from pnnx_conformance.oracle import Subject, build_model, has_lazy_weights, seed_lazy_weights

CASE = "nn.LazyConv2d/k3_uninitialized"


@pytest.fixture(autouse=True)
def _registry_cases():
    use_provider(None)  # an in-process run elsewhere may have left its own provider


class _Artefacts:
    case_id = CASE


def test_the_rebuilt_oracle_reproduces_a_lazy_case_bitwise():
    subject = Subject(load_case(CASE))
    torch.manual_seed(1234)  # whatever state the worker's RNG is in
    backend = TorchBackend()
    backend.prepare(_Artefacts(), "fp32")
    got = backend.run(subject.numpy_inputs)
    assert all(np.array_equal(g, e) for g, e in zip(got, subject.expected))


def test_a_converter_receives_the_module_uninitialized_and_its_first_forward_draws_the_oracles_weights():
    case = load_case(CASE)
    subject = Subject(case)
    model = build_model(case, keep_lazy=True)
    assert has_lazy_weights(model)
    torch.randn(100)  # unrelated draws between building and converting
    seed_lazy_weights(case)
    with torch.no_grad():
        out = model(*[x.clone() for x in subject.inputs])
    assert np.array_equal(out.numpy(), subject.expected[0])


def test_a_pre_rounded_model_is_materialised_first():
    model = build_model(load_case(CASE), "fp16")
    assert not has_lazy_weights(model)
    w = next(model.parameters())
    assert torch.equal(w, w.half().float())


def test_the_pt2_route_initialises_a_lazy_module_with_the_oracles_weights(tmp_path):
    """torch.export cannot trace uninitialized parameters: reference-export runs the model once,
    as a user would, under the RNG state the harness seeded; the .pt2 holds the oracle's weights."""
    from pnnx_conformance.backends.pnnx_python import load_generated_model
    from pnnx_conformance.converters import load_converter

    case = load_case(CASE)
    subject = Subject(case)
    model = build_model(case, keep_lazy=True)
    seed_lazy_weights(case)
    converter = load_converter("reference-export")
    try:
        arts = converter.convert(case, tmp_path, model, [x.clone() for x in subject.inputs])
    finally:
        converter.close()
    with torch.no_grad():
        out = load_generated_model(arts.paths["pnnx.py"])(*[x.clone() for x in subject.inputs])
    assert np.allclose(out.numpy(), subject.expected[0], rtol=1e-5, atol=1e-6)
