"""A case with a second shape (`Case.inputs2`, the op cases of shapes that follow the input) is
converted at both shapes (in-process `inputs2`, `inputshape2=` on the command lines) and its
parity is checked at both: files that froze a size at the first shape fail at the second."""
from __future__ import annotations

from dataclasses import replace

import pytest

from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend
from pnnx_conformance.cases import load_case
from pnnx_conformance.checks import Executor
from pnnx_conformance.converters.case_files import shape_args, varying_axes
from pnnx_conformance.converters.reference import ReferenceConverter
from pnnx_conformance.converters.reference_export import ReferenceExportConverter
from pnnx_conformance.converters.reference_onnx import ReferenceOnnxConverter
from pnnx_conformance.units import Unit

CASE = "Tensor.reshape/dyn_mul_floordiv"


class CountingNcnn(NcnnCpuBackend):
    runs = 0

    def run(self, inputs):
        type(self).runs += 1
        return super().run(inputs)


class OneShape(ReferenceConverter):
    """The reference converter shown the first shape only."""
    name = "one-shape"

    def convert(self, case, workdir, model=None, inputs=None, *, fp16=False):
        return super().convert(replace(case, inputs2=()), workdir, model, inputs, fp16=fp16)


def _parity(ex, converter: str, case: str = CASE):
    return ex.execute(Unit(case, converter, "parity", f"{__name__}:CountingNcnn", "fp32"))


def test_parity_runs_at_both_shapes(tmp_path):
    CountingNcnn.runs = 0
    result = _parity(Executor(tmp_path, "full"), "reference")
    assert result.status == "pass", result.error
    assert CountingNcnn.runs == 2


def test_a_case_without_a_second_shape_runs_once(tmp_path):
    CountingNcnn.runs = 0
    assert _parity(Executor(tmp_path, "full"), "reference", "Tensor.reshape/r4_to_r3").status == "pass"
    assert CountingNcnn.runs == 1


def test_files_converted_at_one_shape_fail_at_the_second(tmp_path):
    result = _parity(Executor(tmp_path, "full"), f"{__name__}:OneShape")
    assert result.status == "fail-numeric" and "at inputshape2=" in result.error, result.error


def test_command_lines_carry_inputshape2():
    case = load_case(CASE)
    assert shape_args(case) == ["inputshape=[2,4,6,10]f32", "inputshape2=[3,4,9,12]f32"]
    assert shape_args(load_case("Tensor.reshape/r4_to_r3")) == ["inputshape=[1,3,8,8]f32"]


@pytest.mark.parametrize("converter", ["reference-export", "reference-onnx", "reference-onnx-dynamo"])
def test_exporting_routes_convert_at_both_shapes(tmp_path, converter):
    """The .pt2 and ONNX doors export with the axes the second shape changes dynamic and convert
    with inputshape2=: their files pass at both shapes (they froze the first one before)."""
    CountingNcnn.runs = 0
    result = _parity(Executor(tmp_path, "full"), converter)
    assert result.status == "pass", result.error
    assert CountingNcnn.runs == 2


def test_exporting_routes_are_given_the_axes_that_change():
    case = load_case(CASE)
    assert varying_axes(case) == [[0, 2, 3]]
    assert varying_axes(load_case("Tensor.reshape/r4_to_r3")) == [[]]
    assert ReferenceExportConverter().argv(case, False) == ["case.pt2", "inputshape2=[3,4,9,12]f32", "fp16=0"]
    assert ReferenceOnnxConverter().argv(case, False)[1:3] == shape_args(case)


def test_an_axis_torch_export_pins_is_the_exporters_limit(tmp_path):
    """F.max_pool1d pins the pooled axis under Dim.AUTO: the program cannot run at the second
    shape, which is torch.export's limit (unsupported), not a failed conversion."""
    result = _parity(Executor(tmp_path, "full"), "reference-export", "torch.flatten/dyn_batch_mid")
    assert result.status == "not-supported" and "torch.export.export kept a dimension static" in result.error, \
        result.error
