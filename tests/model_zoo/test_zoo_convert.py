"""Zoo networks through the reference converter: the generated _pnnx.py and pnnx.onnx
match torch, and ncnn on the CPU where upstream's ncnn export of the same model works
(see `python -m pnnx_model_zoo.run`: resnet18, mobilenet_v2, shufflenet_v2_x1_0, the
LSTM, GRU and Transformer-encoder models).

One conversion per model (fp16=0, so every artefact holds the model's own fp32 weights);
ncnn runs with its fp16/bf16 options off. Bounds come from the harness's tolerance table, with
the zoo's whole-network override for pnnx-python (`models.*` in pnnx_conformance.tolerances.OP_OVERRIDES).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from pnnx_conformance.artefacts import Artefacts, kind_name
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend
from pnnx_conformance.backends.onnxruntime_cpu import OnnxRuntimeBackend
from pnnx_conformance.backends.pnnx_python import PnnxPythonBackend
from pnnx_conformance.compare import compare
from pnnx_conformance.oracle import Subject
from pnnx_conformance.tolerances import tolerance_for
from pnnx_model_zoo.zoo import zoo_cases
from pnnx_reference import api

CASES = {c.op.removeprefix("models."): c for c in zoo_cases()}
FAST = ["resnet18", "mobilenet_v2", "transformer_encoder", "lstm_seq", "gru_seq", "yolov5_focus"]
SLOW = ["shufflenet_v2_x1_0"]
NCNN_UPSTREAM_WORKS = {"resnet18", "mobilenet_v2", "shufflenet_v2_x1_0", "lstm_seq", "gru_seq", "transformer_encoder"}
NAMES = FAST + [pytest.param(n, marks=pytest.mark.slow) for n in SLOW]
# one worker takes the whole module (tox.ini runs `--dist loadgroup`): each network converted once per session
pytestmark = pytest.mark.xdist_group("zoo_convert")


class Converted:
    def __init__(self, name: str, folder) -> None:
        self.case = CASES[name]
        self.subject = Subject(self.case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.result = api.export(self.subject.model, [x.clone() for x in self.subject.inputs], folder,
                                     "case", fp16=False, **self.case.options)
        self.artefacts = Artefacts("reference", self.case.id, folder,
                                   {kind_name(k): p for k, p in self.result.paths.items()}, self.result.unsupported)

    def run(self, backend, precision: str = "fp32") -> list[np.ndarray]:
        if not self.artefacts.has(*backend.consumes):
            pytest.fail(self.artefacts.missing_reason(backend.consumes))
        backend.prepare(self.artefacts, precision)
        try:
            return backend.run(self.subject.numpy_inputs)
        finally:
            backend.release()

    def check(self, backend, precision: str = "fp32") -> float:
        outputs = self.run(backend, precision)
        tol = tolerance_for(self.case, backend.name, precision)
        verdict = compare(outputs, self.subject.expected, tol, loose_rank=backend.name.startswith("ncnn"))
        assert verdict.ok, f"{self.case.id} on {backend.name}: {verdict.message} ({tol.reason})"
        return verdict.metrics.max_abs


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    made: dict[str, Converted] = {}

    def get(name: str) -> Converted:
        if name not in made:
            made[name] = Converted(name, tmp_path_factory.mktemp(name))
        return made[name]

    return get


@pytest.mark.parametrize("name", NAMES)
def test_zoo_pnnx_python_matches_torch(converted, name):
    """Same torch kernels; conv + batchnorm fusion (optlevel 2) changes the arithmetic, so
    the CNNs are held to the harness's tight pnnx-python bound rather than bitwise."""
    converted(name).check(PnnxPythonBackend())


@pytest.mark.parametrize("name", ["lstm_seq", "gru_seq", "transformer_encoder"])
def test_zoo_pnnx_python_bitwise_where_nothing_is_fused(converted, name):
    """Recurrent and attention models keep their nn modules whole: the same torch kernels
    run in the same order, so the regenerated model reproduces torch exactly."""
    conv = converted(name)
    outputs = conv.run(PnnxPythonBackend())
    for got, want in zip(outputs, conv.subject.expected):
        assert np.array_equal(got, want), f"max abs {np.abs(got - want).max():.3g}"


@pytest.mark.parametrize("name", NAMES)
def test_zoo_onnxruntime_matches_torch(converted, name):
    converted(name).check(OnnxRuntimeBackend())


@pytest.mark.parametrize("name", [n for n in NAMES if (n.values[0] if hasattr(n, "values") else n)
                                  in NCNN_UPSTREAM_WORKS])
def test_zoo_ncnn_cpu_matches_torch(converted, name):
    conv = converted(name)
    conv.check(NcnnCpuBackend(), "fp32")


def test_zoo_param_counts_every_operator(converted):
    """pnnx.param's header counts agree with its lines, and the network's convolutions are
    all there (resnet18 has 20 Conv2d after batchnorm fusion, which folds into them)."""
    conv = converted("resnet18")
    lines = conv.result.paths["pnnxparam"].read_text().splitlines()
    n_ops, n_operands = map(int, lines[1].split())
    assert len(lines) - 2 == n_ops
    types = [line.split()[0] for line in lines[2:]]
    assert types.count("nn.Conv2d") == 20
    assert "nn.BatchNorm2d" not in types
    assert types.count("nn.Linear") == 1


def test_zoo_focus_stays_one_operator_with_moduleop():
    """YOLOv5's Focus (four strided slices, a cat, a conv block) is one operator with
    moduleop=Focus, and its insides (the slices and the cat) are not in the graph."""
    case = CASES["yolov5_focus"]
    graph = api.capture(case.make_model(), case.make_inputs(), **case.options)
    types = [op.type for op in graph.ops]
    focus = [t for t in types if t.split(".")[-1] == "Focus"]
    assert len(focus) == 1, types
    assert "torch.cat" not in types
    plain = [op.type for op in api.capture(case.make_model(), case.make_inputs()).ops]
    assert not any(t.split(".")[-1] == "Focus" for t in plain) and "torch.cat" in plain


def test_zoo_focus_moduleop_writes_pnnx_param_line(tmp_path):
    case = CASES["yolov5_focus"]
    from pnnx_reference.formats import pnnx_param

    graph = api.capture(case.make_model(), case.make_inputs(), **case.options)
    pnnx_param.save(graph, tmp_path / "m.pnnx.param", tmp_path / "m.pnnx.bin")
    lines = (tmp_path / "m.pnnx.param").read_text().splitlines()[2:]
    assert sum(1 for line in lines if line.split()[0].split(".")[-1] == "Focus") == 1


def test_zoo_focus_exports_every_artefact(tmp_path):
    """Focus's captured body becomes a `_pnnx.py` class, an ONNX function and, inlined, ncnn
    layers named after the module (no custom layer to register)."""
    case = CASES["yolov5_focus"]
    res = api.export(case.make_model(), case.make_inputs(), tmp_path, "m", **case.options)
    assert {"pnnxparam", "pnnxbin", "pnnxpy", "pnnxonnx", "ncnnparam", "ncnnbin", "ncnnpy"} <= set(res.paths)
    assert not res.unsupported
    assert "focus." in res.paths["ncnnparam"].read_text()
