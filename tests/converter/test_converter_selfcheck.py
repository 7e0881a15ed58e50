"""The self-check after every conversion (issue 20, item 2): the regenerated `_pnnx.py` runs on
the example inputs (and the inputshape2 ones) against the original model under the tolerance
table; a mismatch is one error line naming the first operator whose output differs, and no
artefact is left. On by default in the API and the command line, off with an option."""
from __future__ import annotations

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from pnnx_reference import api, expression
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.errors import ConversionError
from pnnx_reference.tolerances import OP_OVERRIDES, self_check_tolerance


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.conv(x))
        z = torch.sigmoid(y) + 1          # the only `add` of the graph: pnnx.Expression
        return z.flatten(1).tanh()


def _x():
    torch.manual_seed(0)
    return torch.rand(1, 3, 8, 8)


@pytest.fixture
def broken_add(monkeypatch):
    """A converter bug: `_pnnx.py` renders add as subtraction."""
    monkeypatch.setitem(expression.INFIX, "add", "-")


def test_a_faithful_conversion_passes_and_says_so(tmp_path):
    torch.manual_seed(0)
    result = api.export(Net().eval(), _x(), tmp_path, "m")
    assert result.self_check.startswith("passed: 1 output(s) on 1 input set(s)")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["m.pnnx.param", "m.pnnx.bin", "m_pnnx.py", "m.pnnx.onnx", "m.ncnn.param", "m.ncnn.bin", "m_ncnn.py"])


def test_a_wrong_regenerated_model_is_an_error_naming_the_first_differing_operator(tmp_path, broken_add):
    with pytest.raises(ConversionError) as info:
        api.export(Net().eval(), _x(), tmp_path, "m")
    message = str(info.value)
    assert message.startswith("self-check failed on the example inputs: the regenerated model differs from "
                              "the original: first differing operator pnnx.Expression pnnx_expr_0 (output "), message
    assert "selfcheck=0" in message and "\n" not in message
    assert list(tmp_path.iterdir()) == []  # nothing written: the artefacts are wrong


class NormedNet(Net):
    """Net with a batchnorm after its conv: optlevel 2 folds it into the conv's weights."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.2, 3)

    def forward(self, x):
        return (torch.sigmoid(torch.relu(self.bn(self.conv(x)))) + 1).flatten(1).tanh()


@pytest.mark.parametrize("shape2", [None, (1, 3, 6, 6)], ids=["one_input_set", "inputshape2"])
def test_a_conv_with_its_batchnorm_folded_in_is_not_named_as_the_difference(tmp_path, broken_add, shape2):
    """The folded conv computes what the batchnorm did: it is held to the batchnorm's traced value,
    so the error names the broken add, not the conv (which differs from its own pre-batchnorm value)."""
    torch.manual_seed(0)
    inputs2 = torch.rand(shape2) if shape2 else None
    with pytest.raises(ConversionError) as info:
        api.export(NormedNet().eval(), _x(), tmp_path, "m", inputs2=inputs2)
    assert "first differing operator pnnx.Expression pnnx_expr_0 (output " in str(info.value), str(info.value)


def test_the_check_can_be_switched_off(tmp_path, broken_add):
    result = api.export(Net().eval(), _x(), tmp_path, "m", self_check=False)
    assert result.self_check == "off" and result.paths["pnnxpy"].is_file()


def test_a_mismatch_only_on_the_inputshape2_inputs_is_caught(tmp_path, monkeypatch):
    """A converter bug that specialises the graph on the first example shape (here: merging the
    two traces forgets the dims that change, so shape arithmetic folds to constants)."""
    class Reshape(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1) * 2

    monkeypatch.setattr(api, "merge_shapes", lambda first, second: first)
    with pytest.raises(ConversionError, match=r"^self-check on the inputshape2 inputs: the regenerated model "
                                              r"fails: RuntimeError: shape '\[2, -1\]' is invalid"):
        api.export(Reshape(), torch.rand(2, 3, 4), tmp_path, "m", input_shapes2=[[3, 3, 5]])
    assert list(tmp_path.iterdir()) == []


def test_both_input_sets_are_checked(tmp_path):
    class Reshape(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1) * 2

    result = api.export(Reshape(), torch.rand(2, 3, 4), tmp_path, "m", input_shapes2=[[3, 3, 5]])
    assert result.self_check.startswith("passed: 1 output(s) on 2 input set(s)")


def test_random_outputs_are_not_compared(tmp_path):
    class Noisy(nn.Module):
        def forward(self, x):
            return x * 2, F.dropout(x, 0.5, training=True), x + torch.rand_like(x)

    result = api.export(Noisy(), torch.rand(2, 3), tmp_path, "m")
    assert result.self_check == ("passed: 1 output(s) on 1 input set(s) within atol 1e-05 rtol 1e-05, "
                                 "2 random output(s) not compared")


@pytest.mark.parametrize("rrelu", [F.rrelu, F.rrelu_])
def test_rrelu_in_training_mode_is_a_random_output(rrelu, tmp_path):
    """F.rrelu(training=True) and its in-place F.rrelu_ draw a slope per element."""
    class Leaky(nn.Module):
        def forward(self, x):
            y = x - 0.5
            return rrelu(y, 0.1, 0.3, training=True), x * 2

    result = api.export(Leaky(), torch.rand(2, 8, 8), tmp_path, "m")
    assert result.self_check.endswith("1 random output(s) not compared")


def test_attention_dropout_is_a_random_output(tmp_path):
    """F.scaled_dot_product_attention(dropout_p > 0) draws its mask whatever the module's mode."""
    class Attention(nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, dropout_p=0.5), q * 2

    q = torch.rand(1, 2, 4, 8)
    result = api.export(Attention(), (q, q.clone(), q.clone()), tmp_path, "m")
    assert result.self_check.endswith("1 random output(s) not compared")


def test_the_command_line_checks_by_default_and_selfcheck_0_skips(tmp_path, capsys, broken_add):
    model = tmp_path / "net.py"
    model.write_text("import torch, torch.nn as nn\n\nclass Model(nn.Module):\n"
                     "    def forward(self, x):\n        return torch.sigmoid(x) + 1\n")
    assert pnnxref([str(model), "inputshape=[1,3]"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: self-check failed on the example inputs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.py"]
    assert pnnxref([str(model), "inputshape=[1,3]", "selfcheck=0"]) == 0
    assert "selfcheck: off" in capsys.readouterr().err


def test_the_tolerance_is_the_tables_whole_network_entry():
    assert self_check_tolerance() is OP_OVERRIDES[("models.*", "pnnx-python", "fp32")]


def _deep_stack(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(*[nn.Linear(64, 64) for _ in range(12)]).eval()


def _rounding_run(model, offset_in_roundings: float):
    """A Run whose original outputs are the fp64 result moved by `offset_in_roundings` times this
    model's own fp32 rounding (|fp32 - fp64|, max over the output)."""
    from pnnx_reference.selfcheck import Run

    x = torch.rand(2, 64, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        fp32 = model(x)
        fp64 = model.double()(x.double())
    model.float()
    rounding = float((fp32.double() - fp64).abs().max())
    assert rounding > 0
    original = (fp64 + offset_in_roundings * rounding).float()
    return Run("example", [x], [original], {}), fp32, rounding


@pytest.mark.parametrize("offset, passes", [(2.0, True), (40.0, False)])
def test_a_miss_within_the_networks_own_fp32_rounding_passes_and_beyond_it_fails(offset, passes):
    """The fp64 second look: the original's fp32 output may be as far from the regenerated model's
    fp64 result as SELF_CHECK_ROUNDING_FACTOR times the regenerated fp32 rounding, not further."""
    from pnnx_reference.selfcheck import within_own_rounding
    from pnnx_reference.tolerances import Tolerance

    model = _deep_stack()
    run, fp32, _ = _rounding_run(model, offset)
    exact = Tolerance(0.0, 0.0, "test: rounding only")
    assert within_own_rounding(model, run.inputs, {0: run.outputs[0]}, {0: fp32}, exact) is passes
    assert all(p.dtype == torch.float32 for p in model.parameters())  # narrowed back
    with torch.no_grad():
        assert torch.equal(model(run.inputs[0]), fp32)  # with the same values


def test_no_second_look_for_a_model_with_other_precisions():
    from pnnx_reference.selfcheck import within_own_rounding

    model = _deep_stack()
    run, fp32, _ = _rounding_run(model, 1.0)
    model[0].register_buffer("mask16", torch.zeros(2, dtype=torch.float16))
    assert not within_own_rounding(model, run.inputs, {0: run.outputs[0]}, {0: fp32}, self_check_tolerance())
    assert model[0].mask16.dtype == torch.float16


@pytest.fixture
def nan_add(monkeypatch):
    """A converter bug that yields NaN: `_pnnx.py` renders add as `* nan +`-like garbage."""
    monkeypatch.setitem(expression.INFIX, "add", "* float('nan') *")


def test_nan_where_torch_is_finite_is_a_mismatch(tmp_path, nan_add):
    """Issue 33 item 3: NaN in the regenerated model is never 'within tolerance'."""
    with pytest.raises(ConversionError, match="^self-check failed on the example inputs"):
        api.export(Net().eval(), _x(), tmp_path, "m")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_difference_counts_a_non_finite_element_against_a_finite_one(value):
    from pnnx_reference.selfcheck import difference

    got = torch.tensor([1.0, value])
    assert difference(got, torch.tensor([1.0, 2.0]), self_check_tolerance()).startswith("1/2 elements")
    assert difference(got, got.clone(), self_check_tolerance()) == ""


class AllNan(nn.Module):
    def forward(self, x):
        return torch.log(x - 2)  # x in [0, 1): NaN everywhere in torch itself


def test_an_output_nan_everywhere_in_torch_is_a_warning(tmp_path, capsys):
    model = tmp_path / "allnan.py"
    model.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                     "        return torch.log(x - 2)\n")
    assert pnnxref([str(model), "inputshape=[2,3]"]) == 0
    err = capsys.readouterr().err
    assert ("warning: output 0 of the original model is NaN in every element on the example inputs: the "
            "self-check compares nothing there") in err
    result = api.export(AllNan(), torch.rand(2, 3), tmp_path, "m")
    assert any("NaN in every element" in note for note in result.warnings)


def test_the_check_runs_the_generated_forward_without_its_dead_locals(tmp_path):
    """The regenerated forward keeps every intermediate until it returns (the conversion's peak
    memory on a network: convnext_tiny ~100 MB); the check runs it with each local deleted after
    its last use, and gets the same outputs."""
    import ast

    from pnnx_reference import selfcheck

    result = api.export(Net().eval(), [_x()], tmp_path, "net")
    model = selfcheck.load_model(result.paths["pnnxpy"], torch.device("cpu"))
    lean = selfcheck.lean_forward(model, result.paths["pnnxpy"])
    assert lean is not model
    with torch.no_grad():
        assert torch.equal(lean(_x()), model(_x()))
    (function,) = ast.parse("def forward(self, v_0):\n    v_1 = self.conv(v_0)\n"
                            "    v_2 = v_1 + v_0\n    return v_2 * v_1\n").body
    assert [ast.unparse(s) for s in selfcheck._with_dels(function)] == [
        "v_1 = self.conv(v_0)", "v_2 = v_1 + v_0", "del v_0", "return v_2 * v_1"]


@pytest.mark.parametrize("source", ["def forward(self, x):\n    if x.sum() > 0:\n        x = x + 1\n    return x\n",
                                    "def forward(self, x):\n    f = lambda: x\n    del x\n    return f()\n",
                                    "def forward(self, x):\n    return locals()['x']\n"])
def test_a_forward_other_than_straight_line_code_is_run_as_written(source):
    import ast

    from pnnx_reference import selfcheck

    (function,) = ast.parse(source).body
    assert not selfcheck._straight_line(function)
