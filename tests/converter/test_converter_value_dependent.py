"""Value-dependent conversions (issue 20, item 1): a model that turns the value of a tensor
computed from its inputs into a Python value is refused with one line naming the conversion
and the user's source line; `allow_value_dependent` accepts it with a warning. Constants,
parameters and traced sizes are not value-dependent. Operators whose output shape depends on
the values stay in the graph (which then computes them for any input); reading such a shape
as a Python int is refused."""
from __future__ import annotations

import importlib.util
import inspect
import sys

import pytest
import torch
import torch.nn as nn

from pnnx_reference.api import capture, export
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.errors import ConversionError, ValueDependentWarning

HERE = __file__


def _line(cls, text: str) -> str:
    """`this_file:N: `code`` of the line of `cls` that contains `text`."""
    lines, start = inspect.getsourcelines(cls)
    number = start + next(i for i, line in enumerate(lines) if text in line)
    return f"{HERE}:{number}: `{text}"


class Branch(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x


class SliceBound(nn.Module):
    def forward(self, x):
        return x[:, :int(x.mean() * 10)]


class Loop(nn.Module):
    def forward(self, x):
        for _ in range(int(x.max() * 3)):
            x = x + 1
        return x


class Scale(nn.Module):
    def forward(self, x):
        return x * float(x.max())


class Item(nn.Module):
    def forward(self, x):
        return x * x.max().item()


class ToList(nn.Module):
    def forward(self, x):
        return x * x.tolist()[0][0]


class Numpy(nn.Module):
    def forward(self, x):
        return x * x.numpy().max()


class Equal(nn.Module):
    def forward(self, x):
        return x if torch.equal(x, x.abs()) else -x


class TensorBound(nn.Module):
    def forward(self, x):
        return x[:, :(x.max() * 3).long()]


CONVERSIONS = [
    (Branch, "if x.sum() > 0:", "Tensor.__bool__"),
    (SliceBound, "return x[:, :int(x.mean() * 10)]", "int()"),
    (Loop, "for _ in range(int(x.max() * 3)):", "int()"),
    (Scale, "return x * float(x.max())", "float()"),
    (Item, "return x * x.max().item()", "item()"),
    (ToList, "return x * x.tolist()[0][0]", "tolist()"),
    (Numpy, "return x * x.numpy().max()", "numpy()"),
    (Equal, "return x if torch.equal(x, x.abs()) else -x", "torch.equal"),
    (TensorBound, "return x[:, :(x.max() * 3).long()]", "a slice bound"),
]


@pytest.mark.parametrize("cls, code, conversion", CONVERSIONS, ids=[c[0].__name__ for c in CONVERSIONS])
def test_value_dependent_conversion_is_refused_naming_it_and_the_line(cls, code, conversion):
    with pytest.raises(ConversionError) as info:
        capture(cls(), torch.rand(2, 5) + 0.5)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(_line(cls, code)), message
    assert f"{conversion}" in message and "value-dependent" in message
    assert "allowvaluedependent=1" in message and "allow_value_dependent=True" in message


@pytest.mark.parametrize("cls, code, conversion", CONVERSIONS, ids=[c[0].__name__ for c in CONVERSIONS])
def test_allowed_conversion_warns_and_is_recorded(cls, code, conversion, tmp_path):
    x = torch.rand(2, 5) + 0.5
    with pytest.warns(ValueDependentWarning, match="value-dependent, accepted"):
        result = export(cls(), x, tmp_path, "m", allow_value_dependent=True)
    assert len(result.value_dependent) == 1 and result.value_dependent[0].startswith(_line(cls, code))
    assert result.self_check.startswith("passed")  # on the example inputs it is right, by construction


def test_a_model_that_catches_the_refusal_is_still_refused():
    class Swallow(nn.Module):
        def forward(self, x):
            try:
                n = int(x.max() * 3)
            except Exception:
                n = 1
            return x[:, :n]

    with pytest.raises(ConversionError, match="int()"):
        capture(Swallow(), torch.rand(2, 5))


def test_constants_parameters_and_sizes_are_not_value_dependent():
    class Fine(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.tensor(3.0))
            self.w = nn.Parameter(torch.tensor([2.0]))

        def forward(self, x):
            n = int(self.k) + int(self.w.sum().item())          # buffers and parameters: constants
            table = torch.arange(4)
            m = int(table.max()) + len(table.tolist())           # a constant made in forward
            return x[:, :n].reshape(x.size(0), -1) * m + x.shape[1]  # sizes stay symbolic

    graph = capture(Fine(), torch.rand(2, 8), optlevel=0)
    assert "Tensor.reshape" in [op.type for op in graph.ops]


# --- value-dependent shapes -------------------------------------------------------------------
def _load(py_path):
    spec = importlib.util.spec_from_file_location(f"vd_{abs(hash(str(py_path)))}", py_path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        return module.Model().eval()
    finally:
        sys.modules.pop(spec.name)


class Nonzero(nn.Module):
    """Operators whose output shape depends on the values, used symbolically: kept."""

    def forward(self, x):
        idx = torch.nonzero(x > 0.5)
        picked = x[x > 0.5]
        return idx * 2, torch.zeros(idx.size(0), 3) + 1, picked.sum() / picked.shape[0]


def test_value_shaped_operators_are_kept_and_compute_right_for_other_inputs(tmp_path):
    torch.manual_seed(0)
    example = torch.rand(3, 4)
    result = export(Nonzero(), example, tmp_path, "m")
    assert result.self_check.startswith("passed")
    types = [op.type for op in result.graph.ops]
    assert "torch.nonzero" in types and "Tensor.index" in types
    assert "?" in result.paths["pnnxparam"].read_text()  # those dims are not the example's
    generated = _load(result.paths["pnnxpy"])
    others = [torch.full((3, 4), 0.9), torch.eye(3, 4), example.flip(0) * 1.5]  # 12, 3, 7 elements > 0.5
    assert len({int((x > 0.5).sum()) for x in [example, *others]}) == 4
    for x in others:
        for got, want in zip(generated(x), Nonzero()(x)):
            torch.testing.assert_close(got, want)


class SizedByInt(nn.Module):
    def forward(self, x):
        idx = torch.nonzero(x > 0.5)
        return torch.zeros(int(idx.size(0)), 3)


class SizedByLen(nn.Module):
    def forward(self, x):
        picked = x[x > 0.5]
        return x * len(picked)


class MeanByNumel(nn.Module):
    def forward(self, x):
        picked = torch.masked_select(x, x > 0.5)
        return picked.sum() / picked.numel()


class BranchOnSize(nn.Module):
    def forward(self, x):
        values = torch.unique(x.round())
        return x * 2 if values.shape[0] > 2 else x


class LoopOverRows(nn.Module):
    def forward(self, x):
        total = x.sum()
        for row in torch.nonzero(x > 0.5):
            total = total + row.sum()
        return total


SPECIALISED = [(SizedByInt, "return torch.zeros(int(idx.size(0)), 3)", "int() of a size"),
               (LoopOverRows, "for row in torch.nonzero(x > 0.5):", "unbind()"),
               (SizedByLen, "return x * len(picked)", "len()"),
               (MeanByNumel, "return picked.sum() / picked.numel()", "numel()"),
               (BranchOnSize, "return x * 2 if values.shape[0] > 2 else x", "> of a size")]


@pytest.mark.parametrize("cls, code, conversion", SPECIALISED, ids=[c[0].__name__ for c in SPECIALISED])
def test_a_value_dependent_shape_read_as_a_python_int_is_refused(cls, code, conversion):
    with pytest.raises(ConversionError) as info:
        capture(cls(), torch.rand(3, 4) * 4)
    assert str(info.value).startswith(_line(cls, code)) and conversion in str(info.value), str(info.value)


def test_command_line_refuses_by_default_and_warns_when_allowed(tmp_path, capsys):
    model = tmp_path / "loop.py"
    model.write_text("import torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
                     "        for _ in range(int(x.max() * 3)):\n            x = x + 1\n        return x\n")
    assert pnnxref([str(model), "inputshape=[2,5]"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {model}:5: `for _ in range(int(x.max() * 3)):`: int()")
    assert not list(tmp_path.glob("loop*.pnnx.*"))
    assert pnnxref([str(model), "inputshape=[2,5]", "allowvaluedependent=1"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if line.startswith("warning: ")] == [
        f"warning: {model}:5: `for _ in range(int(x.max() * 3)):`: int() of a tensor computed from the inputs: "
        "kept as the value of the example inputs (value-dependent, accepted)"]
    assert (tmp_path / "loop.pnnx.param").is_file()


# --- branches that cannot change the graph (issue 29, item 6) ------------------------------
class PaddingWarning(nn.Module):
    """transformers' warn_if_padding_and_no_attention_mask: a branch that only logs."""

    def forward(self, ids):
        if 1 in ids[:, [-1, 0]]:
            print("you may want an attention mask")
        return ids * 2


class SameEitherWay(nn.Module):
    def forward(self, x):
        if (x > 0.5).any():
            y = torch.relu(x)
        else:
            y = torch.relu(x)
        return y


class RaisesOtherwise(nn.Module):
    def forward(self, x):
        if not (x >= 0).all():
            raise ValueError("negative input")
        return x + 1


class BranchesOnlyOnOnePath(nn.Module):
    def forward(self, x):
        if (x > 0.5).any():
            if (x > 0.9).any():
                print("large")
        return x + 1


@pytest.mark.parametrize("ids", [torch.ones(1, 4, dtype=torch.long), torch.full((1, 4), 3)], ids=["pad", "nopad"])
def test_a_branch_whose_outcomes_record_the_same_graph_is_accepted_with_a_note(ids, tmp_path, capsys):
    result = export(PaddingWarning(), (ids,), tmp_path, "m")
    assert result.value_dependent == [f"{_line(PaddingWarning, 'if 1 in ids[:, [-1, 0]]:')}`: `in` of a tensor computed from "
                                      f"the inputs: accepted, a branch whose every outcome records the same graph"]
    assert result.self_check.startswith("passed")
    assert [op.type for op in result.graph.ops] == ["pnnx.Input", "pnnx.Expression", "pnnx.Output"]
    assert capture(SameEitherWay(), (torch.rand(2, 3),)).ops[1].type == "torch.relu"


@pytest.mark.parametrize("cls, code", [
    (Branch, "if x.sum() > 0:"),                      # another graph
    (RaisesOtherwise, "if not (x >= 0).all():"),      # the other outcome fails
    (BranchesOnlyOnOnePath, "if (x > 0.5).any():"),   # a branch the example does not reach
])
def test_a_branch_that_can_change_the_graph_stays_refused_with_its_line(cls, code):
    with pytest.raises(ConversionError, match="value-dependent") as err:
        capture(cls(), (torch.rand(2, 3) + 0.1,))
    assert str(err.value).startswith(_line(cls, code))
