"""A pure backend (ncnn) runs byte-identical files once per case and precision: the routes of
one case often write the same ncnn files, and their records are judged on those outputs. Files
that differ in one byte run again."""
from __future__ import annotations

from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend
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


def _parity(ex, converter: str, precision: str = "fp32"):
    return ex.execute(Unit(CASE, f"{__name__}:{converter}", "parity", f"{__name__}:CountingNcnn", precision))


def test_identical_files_run_once_and_every_route_gets_its_record(tmp_path):
    CountingNcnn.runs = 0
    ex = Executor(tmp_path, "full")
    first, second = _parity(ex, "ReferenceConverter"), _parity(ex, "SameFiles")
    assert CountingNcnn.runs == 1
    assert first.status == second.status == "pass" and first.metrics == second.metrics
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
