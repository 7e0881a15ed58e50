"""A `.pt2` converted at sizes its program does not allow (issue 33 item 7): a dynamic dimension
outside its torch.export.Dim range, a fixed size changed, a rank changed; one line naming the
input, the dimension and the range, never an internal symbol; nothing written."""
import pytest
import torch
import torch.nn as nn

from pnnx_reference.cli import main as pnnxref


@pytest.fixture
def pt2(tmp_path):
    torch.manual_seed(0)
    batch = torch.export.Dim("batch", max=32)
    program = torch.export.export(nn.Linear(8, 4).eval(), (torch.rand(2, 8),), dynamic_shapes=({0: batch},))
    torch.export.save(program, tmp_path / "m.pt2")
    return tmp_path / "m.pt2"


@pytest.mark.parametrize("args, message", [
    (["inputshape=[40,8]"], "example input 0 dimension 0 is 40: the exported program's dynamic dimension there "
                            "allows 0..32 (its torch.export.Dim range)"),
    (["inputshape=[33,8]"], "example input 0 dimension 0 is 33: the exported program's dynamic dimension there "
                            "allows 0..32"),
    (["inputshape=[2,8]", "inputshape2=[50,8]"], "inputshape2 input 0 dimension 0 is 50: the exported program's "
                                                 "dynamic dimension there allows 0..32"),
    (["inputshape=[2,9]"], "example input 0 dimension 1 is 9: the exported program fixes it at 8"),
    (["inputshape=[2,8,1]"], "example input 0 has 3 dimensions, the exported program's input has 2"),
])
def test_sizes_the_program_does_not_allow_are_named(pt2, capsys, args, message):
    assert pnnxref([str(pt2), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and len(err.splitlines()) == 1
    assert sorted(p.name for p in pt2.parent.iterdir()) == ["m.pt2"]


@pytest.mark.parametrize("size", [1, 32])
def test_sizes_inside_the_range_convert(pt2, capsys, size):
    assert pnnxref([str(pt2), f"inputshape=[{size},8]"]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("dim", [torch.export.Dim("batch"), torch.export.Dim.AUTO], ids=["unbounded", "auto"])
def test_an_unbounded_dim_converts_at_any_size(tmp_path, capsys, dim):
    """A Dim without max (or Dim.AUTO) has torch's int_oo as its upper bound, which says it
    `is_finite`: it was read as an int and crashed the converter."""
    torch.manual_seed(0)
    program = torch.export.export(nn.Linear(8, 4).eval(), (torch.rand(2, 8),), dynamic_shapes=({0: dim},))
    torch.export.save(program, tmp_path / "m.pt2")
    assert pnnxref([str(tmp_path / "m.pt2"), "inputshape2=[300,8]"]) == 0, capsys.readouterr().err
    assert pnnxref([str(tmp_path / "m.pt2"), "inputshape=[5,8]"]) == 0, capsys.readouterr().err


class _PoolOfFlatten(nn.Module):
    def forward(self, x):
        return torch.nn.functional.max_pool1d(torch.flatten(x, 1, 2), 1)


def test_a_dim_torch_export_pinned_is_fixed_in_memory_as_once_saved():
    """Dim.AUTO on the pooled axis: torch.export pins it at 5 (a SymInt holding the Integer 5, an
    int once saved); the program in memory is checked as the saved one is."""
    from pnnx_reference.errors import ConversionError
    from pnnx_reference.frontends.export import check_sizes

    auto = torch.export.Dim.AUTO
    program = torch.export.export(_PoolOfFlatten(), (torch.rand(2, 3, 4, 5),), dynamic_shapes=({0: auto, 3: auto},))
    with pytest.raises(ConversionError, match="inputshape2 input 0 dimension 3 is 7: the exported program fixes it at 5"):
        check_sizes(program, (torch.rand(4, 3, 4, 7),), "inputshape2")
