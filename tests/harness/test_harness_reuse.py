"""A pure backend (ncnn) runs the same network once per case and precision: the routes of one
case often write the same ncnn files, or the same network with other layer names or another
`_ncnn.py` text or other names for the blobs between layers, and their records are judged on
those outputs. Files that differ in anything ncnn computes from (how blobs join layers, an input
or output name, a parameter, a weight, a declared batch index) run again."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from pnnx_conformance.backends import ncnn_backend
from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend, canonical_network, unnamed_layers
from pnnx_conformance.checks import Executor
from pnnx_conformance.converters.reference import ReferenceConverter
from pnnx_conformance.units import Unit

CASE = "nn.Conv2d/k3"


class CountingNcnn(NcnnCpuBackend):
    runs = 0

    def run(self, inputs):
        type(self).runs += 1
        return super().run(inputs)


class SameFiles(ReferenceConverter):
    name = "same-files"


class OtherBytes(ReferenceConverter):
    """The reference's files with one more newline in ncnn.param (ncnn reads it the same)."""
    name = "other-bytes"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        arts = super().convert(case, workdir, model, inputs, fp16=fp16)
        with open(arts.paths["ncnn.param"], "a") as f:
            f.write("\n")
        return arts


class OtherLayerNames(ReferenceConverter):
    """The reference's network with every layer renamed (another length, so another padding)
    and its `_ncnn.py` written otherwise, declaring the same batch indices."""
    name = "other-layer-names"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        arts = super().convert(case, workdir, model, inputs, fp16=fp16)
        param = Path(arts.paths["ncnn.param"])
        head, counts, layers = param.read_text().split("\n", 2)
        param.write_text("\n".join([head, counts, re.sub(r"(?m)^(\S+\s+)(\S+)", r"\1renamed_\2_layer", layers)]))
        ncnn_py = Path(arts.paths["ncnn.py"])
        ncnn_py.write_text("# written by another route\n" + ncnn_py.read_text())
        return arts


class OtherBatchIndex(ReferenceConverter):
    """The reference's files, but `_ncnn.py` feeds in0 with no batch axis."""
    name = "other-batch-index"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        arts = super().convert(case, workdir, model, inputs, fp16=fp16)
        ncnn_py = Path(arts.paths["ncnn.py"])
        ncnn_py.write_text(re.sub(r"batch_index=\d+", "batch_index=233", ncnn_py.read_text()))
        return arts


def _parity(ex, converter: str, precision: str = "fp32"):
    return ex.execute(Unit(CASE, f"{__name__}:{converter}", "parity", f"{__name__}:CountingNcnn", precision))


def _run_once_for_both(ex, first: str, second: str) -> None:
    """Both converters' files make one ncnn run, and both records are that run's."""
    a, b = _parity(ex, first), _parity(ex, second)
    assert CountingNcnn.runs == 1
    assert a.status == b.status == "pass" and a.metrics == b.metrics


def test_identical_files_run_once_and_every_route_gets_its_record(tmp_path):
    CountingNcnn.runs = 0
    ex = Executor(tmp_path, "full")
    _run_once_for_both(ex, "ReferenceConverter", "SameFiles")
    _parity(ex, "OtherBytes")
    assert CountingNcnn.runs == 2
    _parity(ex, "SameFiles", "default")  # another precision (and fp16-rounded files): its own run
    assert CountingNcnn.runs == 3


def test_a_backend_that_is_not_pure_runs_every_time(tmp_path, monkeypatch):
    monkeypatch.setattr(CountingNcnn, "pure", False)
    CountingNcnn.runs = 0
    ex = Executor(tmp_path, "full")
    _parity(ex, "ReferenceConverter"), _parity(ex, "SameFiles")
    assert CountingNcnn.runs == 2


def test_the_same_network_under_other_layer_names_runs_once(tmp_path):
    CountingNcnn.runs = 0
    ex = Executor(tmp_path, "full")
    _run_once_for_both(ex, "ReferenceConverter", "OtherLayerNames")
    moved = _parity(ex, "OtherBatchIndex")  # what ncnn is fed changes: a run of its own
    assert CountingNcnn.runs == 2 and moved.status != "harness-error"


def test_unnamed_layers_blanks_layer_names_only(tmp_path):
    param = tmp_path / "a.ncnn.param"
    long = "n" * 256  # ncnn reads a name with %255s: a longer one is not the same file to it
    param.write_text("7767517\n3 3\nInput            in0     0 1 in0\nReLU relu_1 1 1 in0 mid 0=0.1\n"
                     f"Sigmoid {long} 1 1 mid out0\n")
    assert unnamed_layers(param).decode().splitlines() == [
        "7767517", "3 3", "Input            - 0 1 in0", "ReLU - 1 1 in0 mid 0=0.1", f"Sigmoid {long} 1 1 mid out0"]
    assert unnamed_layers(tmp_path / "missing.param") is None


def _param(tmp_path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.ncnn.param"
    path.write_text("7767517\n5 6\n" + text)
    return path


NET = ("Input in_x 0 1 in0\nSplit s 1 2 in0 {a} {b}\nReLU r 1 1 {relu_in} {c}\nBinaryOp add 2 1 {c} {add_in} {d} 0=1\n"
       "Sigmoid sig 1 1 {d} out0\n")


def test_canonical_network_names_inner_blobs_by_first_appearance(tmp_path):
    one = _param(tmp_path, "one", NET.format(a="0_s0", b="0_s1", relu_in="0_s0", add_in="0_s1", c="2", d="3"))
    other = _param(tmp_path, "other", NET.format(a="x", b="y", relu_in="x", add_in="y", c="relu_out", d="sum"))
    assert canonical_network(one) == canonical_network(other)
    assert canonical_network(one).decode().splitlines()[4] == "ReLU - 1 1 #0 #2"
    # the same names wired otherwise (ReLU reads the Split's second output): another graph
    rewired = _param(tmp_path, "rewired", NET.format(a="x", b="y", relu_in="y", add_in="x", c="relu_out", d="sum"))
    assert canonical_network(rewired) != canonical_network(other)
    assert canonical_network(tmp_path / "missing.param") is None


def test_canonical_network_keeps_names_the_harness_looks_up(tmp_path):
    # inputs or outputs not named in<i> / out<i> are ordered by name: such a file keeps its names
    net = NET.format(a="a", b="b", relu_in="a", add_in="b", c="c", d="d")
    for text in (net.replace("in0", "data"), net.replace("out0", "prob"), net.replace(" c ", f" {'c' * 256} ")):
        path = _param(tmp_path, "kept", text)
        assert canonical_network(path) == unnamed_layers(path)


def _vulkan_outputs(tmp_path, precision: str) -> list:
    unit = Unit(CASE, "reference", "parity", "ncnn-vulkan", precision)
    return Executor(tmp_path, "full").run_parity(unit)[3]


def test_vulkan_nets_share_the_workers_pipeline_cache_and_compute_the_same(tmp_path, monkeypatch):
    """ncnn-vulkan loads every net through the pipeline cache one holder net keeps (ncnn's
    default Option otherwise), renewed after PIPELINE_CACHE_LAYERS layers; a net with a cache
    of its own (ncnn's default) gives the same bits."""
    import ncnn

    shared = {p: _vulkan_outputs(tmp_path / f"shared-{p}", p) for p in ("fp32", "fp16")}
    holder = ncnn_backend._VK["holder"]
    default = ncnn.Option()
    fields = [n for n in dir(default) if not n.startswith("_") and isinstance(getattr(default, n), (bool, int, float))]
    assert [n for n in fields if getattr(holder.opt, n) != getattr(default, n)] == ["use_vulkan_compute"]
    _vulkan_outputs(tmp_path / "again", "fp32")
    assert ncnn_backend._VK["holder"] is holder and ncnn_backend._VK["layers"] > 0
    monkeypatch.setattr(ncnn_backend, "PIPELINE_CACHE_LAYERS", 1)
    _vulkan_outputs(tmp_path / "renewed", "fp32")
    assert ncnn_backend._VK["holder"] is not holder
    monkeypatch.setattr(ncnn_backend, "shared_pipeline_option", lambda vk: ncnn.Net().opt)
    for precision, outputs in shared.items():
        own = _vulkan_outputs(tmp_path / f"own-{precision}", precision)
        assert len(own) == len(outputs) and all(np.array_equal(a, b) for a, b in zip(own, outputs))
