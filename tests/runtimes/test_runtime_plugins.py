"""The third-party runtime plug-ins (vendors/*) without their runtimes: the shared environment
never holds OpenVINO, MNN or TVM (their tox environments do), so the runtime is either absent
(the one-line install hint) or a fake standing in for the few calls a plug-in makes."""
from __future__ import annotations

import configparser
import importlib.util
import json
import sys
import tomllib
import types
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pnnx_conformance.artefacts import Artefacts
from pnnx_conformance.backends import GROUP, load_backend
from pnnx_conformance.backends.plugin_kit import (case_outputs, cause_line, complex_positions, real_inputs,
                                                  require, runtime_error)
from pnnx_conformance.errors import HarnessError, NotSupported

ROOT = Path(__file__).resolve().parents[2]
VENDORS = ROOT / "vendors"


def _script(path: Path):
    """A script of vendors/ (no package: the tox environments run it) as a module."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


share_env = _script(VENDORS / "share_env.py")
# tox environment -> (package folder, import package, backend name, class, PyPI pin)
PLUGINS = {
    "openvino": ("pnnx-conformance-openvino", "pnnx_conformance_openvino", "openvino-cpu", "OpenVinoCpuBackend",
                 "openvino==2026.4.1", "openvino"),
    "mnn": ("pnnx-conformance-mnn", "pnnx_conformance_mnn", "mnn-cpu", "MnnCpuBackend", "mnn==3.6.1", "MNN"),
    "tvm": ("pnnx-conformance-tvm", "pnnx_conformance_tvm", "tvm-llvm", "TvmLlvmBackend",
            "apache-tvm==0.27.0.post1", "tvm"),
}
OV_LOAD_ERROR = """Exception from src/inference/src/cpp/core.cpp:84:
FrontEnd API failed with OpConversionFailure:
Model wasn't fully converted. Failed operations detailed log:
-- DFT-23 with a message:
While validating ONNX node '<Node(DFT): torch.fft.ifft_0_dft>': Check 'is_axis_valid(axis, r)' failed at src/core/src/validation_util.cpp:336:
While validating node 'opset7::IDFT IDFT_1 (...) -> (dynamic[...])' with friendly_name 'IDFT_1':
Axis 1 out of the tensor rank range [-1, 0].
"""


@pytest.fixture
def plugins_path(monkeypatch):
    for folder, *_ in PLUGINS.values():
        monkeypatch.syspath_prepend(str(VENDORS / folder))


def _backend_module(runtime: str):
    import importlib

    return importlib.import_module(f"{PLUGINS[runtime][1]}.backend")


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_package_declares_its_backend_and_pins_its_runtime(runtime):
    folder, package, name, cls, pin, _ = PLUGINS[runtime]
    project = tomllib.loads((VENDORS / folder / "pyproject.toml").read_text())["project"]
    assert project["entry-points"][GROUP] == {name: f"{package}.backend:{cls}"}
    assert project["dependencies"][1:] == [pin]  # after the suite (tests/setup/test_packaging.py)
    assert share_env.runtime_requirements(VENDORS / folder) == [pin]  # what the tox environment installs


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_tox_environment_is_its_own(runtime):
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(ROOT / "tox.ini")
    env = ini[f"testenv:{runtime}"]
    assert env["env_dir"] == "{toxworkdir}/" + runtime != ini["testenv"]["env_dir"]
    assert ini["runtime"]["runner"] == "virtualenv"  # not the shared-virtualenv runner of the shared env
    # tox installs nothing (its package step would resolve the suite's dependencies): share_env.py does
    assert (ini["runtime"]["package"], env["package"], env["deps"].strip()) == ("skip", "{[runtime]package}", "")
    assert env["commands_pre"] == f"python vendors/share_env.py {{[runtime]shared_env}} vendors/{PLUGINS[runtime][0]}"
    assert f"--backend {PLUGINS[runtime][2]}" in env["commands"]


@pytest.mark.parametrize("runtime", sorted(PLUGINS))
def test_missing_runtime_is_one_line_with_the_install_command(runtime, plugins_path, monkeypatch):
    folder, package, name, cls, pin, module = PLUGINS[runtime]
    monkeypatch.setitem(sys.modules, module, None)  # importing it raises ImportError, installed or not
    with pytest.raises(HarnessError) as info:
        load_backend(f"{package}.backend:{cls}")
    assert info.value.message.endswith(f"runtime {module} not installed: pip install {pin}")
    assert "\n" not in info.value.message


def test_require_returns_the_module():
    assert require("json", "json") is sys.modules["json"]


def test_cause_line_skips_locations_and_wrappers(plugins_path):
    noise = _backend_module("openvino").NOISE
    assert cause_line(OV_LOAD_ERROR, noise) == "Axis 1 out of the tensor rank range [-1, 0]."
    assert cause_line("only line", noise) == "only line"
    assert cause_line(OV_LOAD_ERROR, ()) == "Exception from src/inference/src/cpp/core.cpp:84:"


def test_runtime_error_first_line_is_the_cause():
    err = runtime_error(ValueError("Exception from x.cpp:1:\nbad axis"), (r"^Exception from",))
    lines = str(err).splitlines()
    assert isinstance(err, RuntimeError) and lines[0] == "ValueError: bad axis"
    assert lines[1] == "ValueError: Exception from x.cpp:1:"
    assert str(runtime_error(RuntimeError("Exception from x.cpp:1:\nbad axis"), (r"^Exception from",))).startswith(
        "bad axis\n")


def test_complex_convention_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    z = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    x = rng.standard_normal(4).astype(np.float32)
    fed = real_inputs([z, x, np.float32(2.0)], {0})
    assert fed[0].shape == (2, 3, 2) and fed[0].flags.c_contiguous and fed[2].shape == ()
    back = case_outputs(fed, {0})
    assert back[0].dtype == np.complex64 and np.array_equal(back[0], z) and back[1] is fed[1]


def _onnx_with_metadata(path: Path, meta: dict) -> Path:
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    model = helper.make_model(graph)
    helper.set_model_props(model, meta)
    onnx.save(model, str(path))
    return path


def test_complex_positions_read_from_metadata(tmp_path):
    path = _onnx_with_metadata(tmp_path / "case.pnnx.onnx", {"pnnx.complex_outputs": "0,2"})
    assert complex_positions(path) == (set(), {0, 2})


# --- OpenVINO -------------------------------------------------------------------------------


def test_openvino_precision_mapping(plugins_path):
    ov = _backend_module("openvino")
    assert ov.rounding_of("<Type: 'bfloat16'>") == "bf16"
    assert ov.rounding_of("bf16") == "bf16" and ov.rounding_of("f32") is None and ov.rounding_of("f16") == "fp16"
    with pytest.raises(ValueError):
        ov.rounding_of("u1")
    assert ov.compile_config("fp32") == {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1, "INFERENCE_PRECISION_HINT": "f32"}
    assert ov.compile_config("default", 3) == {"INFERENCE_NUM_THREADS": 3, "NUM_STREAMS": 1}
    assert ov.compile_config("default") == {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}


class _FakeType:
    def __init__(self, name):
        self.name = name

    def get_type_name(self):
        return self.name


def _fake_openvino(hint: str, read_error: str | None = None, compile_error: str | None = None):
    class Core:
        def get_property(self, device, key):
            return {"INFERENCE_PRECISION_HINT": _FakeType(hint), "FULL_DEVICE_NAME": "Fake CPU"}[key]

        def read_model(self, path):
            if read_error:
                raise RuntimeError(read_error)
            return "model"

        def compile_model(self, model, device, config):
            raise RuntimeError(compile_error)

    return types.SimpleNamespace(Core=Core, get_version=lambda: "fake")


@pytest.mark.parametrize("hint, rounding", [("bf16", "bf16"), ("f32", None)])
def test_openvino_default_mode_is_what_the_device_reports(plugins_path, monkeypatch, hint, rounding):
    monkeypatch.setitem(sys.modules, "openvino", _fake_openvino(hint))
    backend = load_backend("pnnx_conformance_openvino.backend:OpenVinoCpuBackend")
    assert backend.precisions == {"fp32": None, "default": rounding}
    assert backend.device == "CPU: Fake CPU" and backend.describe()["precisions"]["default"].endswith(hint)


def test_openvino_load_failure_names_the_cause(plugins_path, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "openvino", _fake_openvino("f32", OV_LOAD_ERROR))
    backend = load_backend("pnnx_conformance_openvino.backend:OpenVinoCpuBackend")
    path = _onnx_with_metadata(tmp_path / "case.pnnx.onnx", {})
    with pytest.raises(RuntimeError) as info:
        backend.prepare(Artefacts("reference", "c", tmp_path, {"pnnx.onnx": path}), "fp32")
    assert str(info.value).splitlines()[0] == "Axis 1 out of the tensor rank range [-1, 0]."


def test_openvino_compile_failure_is_the_compile_stage(plugins_path, monkeypatch, tmp_path):
    error = "Exception from src/plugins/intel_cpu/src/node.cpp:1:\nUnsupported operation of type: DFT\n"
    monkeypatch.setitem(sys.modules, "openvino", _fake_openvino("bf16", compile_error=error))
    backend = load_backend("pnnx_conformance_openvino.backend:OpenVinoCpuBackend")
    path = _onnx_with_metadata(tmp_path / "case.pnnx.onnx", {})
    backend.prepare(Artefacts("reference", "c", tmp_path, {"pnnx.onnx": path}), "default")
    assert backend.config == {"INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
    with pytest.raises(RuntimeError) as info:
        backend.compile()
    assert str(info.value).splitlines()[0] == "Unsupported operation of type: DFT"
    assert backend.compute_type("default") == "bf16" and backend.compute_type("fp32") == "fp32"


# --- MNN ------------------------------------------------------------------------------------


def test_mnn_artefact_and_dtypes(plugins_path):
    mnn = _backend_module("mnn")
    assert mnn.mnn_path(Path("/w/case.pnnx.onnx")) == Path("/w/case.pnnx.mnn")
    command = mnn.convert_command(Path("a.onnx"), Path("a.mnn"))
    assert command[:2] == [sys.executable, "-c"] and "_tools" in command[2] and "mnnconvert" not in command[0]
    assert command[command.index("--modelFile") + 1] == "a.onnx"
    fed, name = mnn.mnn_input(np.array([[1, 2]], np.int64))
    assert fed.dtype == np.int32 and name == "int" and fed.tolist() == [[1, 2]]
    assert mnn.mnn_input(np.array([True]))[0].dtype == np.int32 and mnn.mnn_input(np.zeros(1, np.float32))[1] == "float"
    with pytest.raises(TypeError):
        mnn.mnn_input(np.zeros(1, np.complex64))
    ints = np.array([0, 3, -1], np.int32)
    assert mnn.as_declared(ints, np.dtype(bool)).tolist() == [False, True, True]
    assert mnn.as_declared(ints, np.dtype(np.int64)).dtype == np.int64
    assert mnn.as_declared(ints, np.dtype(np.float32)) is ints and mnn.as_declared(ints, None) is ints


def test_mnn_converter_refusal_is_the_failure(plugins_path, monkeypatch, tmp_path):
    mnn = _backend_module("mnn")
    monkeypatch.setitem(sys.modules, "MNN", types.SimpleNamespace(version=lambda: "fake"))
    transcript = ("Start to Convert Other Model Format To MNN Model..., target version: 3.6\n"
                  "[12:34:37] :220: These Op Not Support: ONNX::DFT \nConverted Failed!\n")
    monkeypatch.setattr(mnn, "convert_command",
                        lambda onnx_path, out: [sys.executable, "-c", f"print({transcript!r})"])
    backend = load_backend("pnnx_conformance_mnn.backend:MnnCpuBackend")
    path = _onnx_with_metadata(tmp_path / "case.pnnx.onnx", {})
    with pytest.raises(NotSupported) as info:
        backend.prepare(Artefacts("reference", "c", tmp_path, {"pnnx.onnx": path}), "fp32")
    assert info.value.message == "unsupported: MNN's converter: These Op Not Support: ONNX::DFT"
    odd = "Start to Optimize\nsomething odd\nConverted Failed!\n"
    assert mnn.refusal(odd) == "something odd"
    monkeypatch.setattr(mnn, "convert_command", lambda onnx_path, out: [sys.executable, "-c", f"print({odd!r})"])
    with pytest.raises(RuntimeError) as info:  # no model and no refusal of an operator: a failure
        backend.prepare(Artefacts("reference", "c", tmp_path, {"pnnx.onnx": path}), "fp32")
    assert str(info.value).splitlines()[0] == "MNN's converter wrote no model: something odd"


# --- TVM ------------------------------------------------------------------------------------


class _FakeTensor:
    def __init__(self, value):
        self.value = value

    def numpy(self):
        return self.value


def test_tvm_flattens_nested_results(plugins_path):
    tvm = _backend_module("tvm")
    a, b, c = (_FakeTensor(i) for i in range(3))
    assert tvm.flatten(a) == [a]
    assert tvm.flatten([a, (b, [c])]) == [a, b, c]


def test_tvm_one_thread_before_the_runtime_starts(plugins_path, monkeypatch):
    monkeypatch.delenv("TVM_NUM_THREADS", raising=False)
    seen = {}

    def fake_import(module, pip):
        import os

        seen["threads"] = os.environ.get("TVM_NUM_THREADS")
        return types.SimpleNamespace(__version__="fake")

    tvm = _backend_module("tvm")
    monkeypatch.setattr(tvm, "require", fake_import)
    backend = tvm.TvmLlvmBackend()
    assert seen["threads"] == "1" and backend.describe()["threads"] == 1


# --- the tox environments' view of the shared one -------------------------------------------


def test_share_env_writes_one_pth_and_refuses_what_is_not_an_environment(tmp_path):
    shared = tmp_path / "env"
    site = share_env.site_packages(shared)
    own = tmp_path / "own"
    own.mkdir()
    with pytest.raises(SystemExit, match="no torch there"):
        share_env.share(shared, own)
    (site / "torch").mkdir(parents=True)
    assert share_env.share(shared, own).read_text() == f"{site.resolve()}\n"
    with pytest.raises(SystemExit, match="shared environment itself"):
        share_env.share(shared, site)


def _record_editable(site: Path, name: str, folder: Path) -> None:
    info = site / f"{name}-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "direct_url.json").write_text(json.dumps({"url": folder.resolve().as_uri(), "dir_info": {"editable": True}}))


def test_share_env_installs_the_runtime_then_the_suite_without_its_dependencies(tmp_path):
    """The plug-in requires the suite, on no index, whose dependencies (torch) the shared environment
    holds: pip gets the runtime alone, then the converter, the suite and the plug-in with --no-deps,
    and nothing of them once they are installed editable from there."""
    plugin = VENDORS / PLUGINS["openvino"][0]
    runtime, editable = share_env.install_commands(plugin, tmp_path)
    assert runtime[-3:] == ["-c", str(ROOT / "requirements" / "runtime.txt"), PLUGINS["openvino"][4]]
    assert not any("pnnx" in arg for arg in runtime) and "--no-deps" not in runtime
    assert editable[editable.index("--no-deps"):] == ["--no-deps", "-e", str(ROOT / "reference"), "-e", str(ROOT),
                                                      "-e", str(plugin)]
    _record_editable(tmp_path, "pnnx_reference", ROOT / "reference")
    _record_editable(tmp_path, "pnnx_conformance", ROOT)
    assert share_env.install_commands(plugin, tmp_path)[1][-2:] == ["-e", str(plugin)]
    _record_editable(tmp_path, "pnnx_conformance_openvino", plugin)
    assert share_env.install_commands(plugin, tmp_path) == [runtime]


def test_tvm_operator_refusal_is_not_supported_other_import_errors_fail(plugins_path, monkeypatch, tmp_path):
    class OpNotImplemented(NotImplementedError):
        pass

    errors = iter([OpNotImplemented("The following operators are not supported for frontend ONNX: DFT"),
                   ValueError("Traceback (most recent call last):\n  0: tvm::relax::Foo\nbad shape for Reshape")])

    def from_onnx(model, keep_params_in_input):
        raise next(errors)

    fake = types.SimpleNamespace(__version__="fake", error=types.SimpleNamespace(OpNotImplemented=OpNotImplemented))
    monkeypatch.setitem(sys.modules, "tvm", fake)
    monkeypatch.setitem(sys.modules, "tvm.relax", types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "tvm.relax.frontend", types.SimpleNamespace())
    monkeypatch.setitem(sys.modules, "tvm.relax.frontend.onnx", types.SimpleNamespace(from_onnx=from_onnx))
    backend = load_backend("pnnx_conformance_tvm.backend:TvmLlvmBackend")
    arts = Artefacts("reference", "c", tmp_path, {"pnnx.onnx": _onnx_with_metadata(tmp_path / "case.pnnx.onnx", {})})
    with pytest.raises(NotSupported, match="^unsupported: TVM's ONNX frontend: The following operators"):
        backend.prepare(arts, "fp32")
    with pytest.raises(RuntimeError) as info:
        backend.prepare(arts, "fp32")
    assert str(info.value).splitlines()[0] == "ValueError: bad shape for Reshape"
