"""Inputs too large for the machine (issue 33 item 6): the user's input named, one line, exit 2,
through every door; never "internal error ... please report it"."""
from __future__ import annotations


import onnx
import pytest
import torch
import torch.nn as nn
from onnx import helper

from onnx_models import FLOAT, graph_model
from pnnx_reference import api
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.errors import ConversionError
from pnnx_reference.input_sizes import machine_memory


def _doors(tmp_path) -> dict:
    py = tmp_path / "m.py"
    py.write_text("import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n")
    pt = tmp_path / "m_ts.pt"
    torch.jit.trace(nn.ReLU(), torch.rand(1, 3, 4, 4)).save(str(pt))
    model = graph_model([helper.make_node("Relu", ["x"], ["y"])], [("x", FLOAT, [1, 3, 4, 4])],
                        [("y", FLOAT, [1, 3, 4, 4])])
    onnx.save(model, tmp_path / "m_onnx.onnx")
    return {"py": py, "pt": pt, "onnx": tmp_path / "m_onnx.onnx"}


@pytest.mark.parametrize("door", ["py", "pt", "onnx"])
@pytest.mark.parametrize("arg, message", [
    ("inputshape=[1,3,10000000,10000000]", "inputshape [1,3,10000000,10000000]: the input needs 1.12e+06 GiB, more than this "
                                       "machine's"),
    ("inputshape=[1,3,99999999999999999999,64]", "inputshape [1,3,99999999999999999999,64]: a dimension is larger "
                                                 "than 2^63-1"),
    ("inputshape=[1,3,4,4] inputshape2=[1,3,10000000,10000000]", "inputshape2 [1,3,10000000,10000000]: the input needs"),
])
def test_an_input_larger_than_the_machine_is_the_users(tmp_path, capsys, door, arg, message):
    assert machine_memory() is not None and machine_memory() < 1 << 50  # what the message assumes
    path = _doors(tmp_path)[door]
    before = sorted(p.name for p in tmp_path.iterdir())
    assert pnnxref([str(path), *arg.split()]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and len(err.splitlines()) == 1 and "internal error" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_api_says_it_too(tmp_path):
    with pytest.raises(ConversionError, match=r"^input shape \[1, 3, 10000000, 10000000\]f32: the input needs 1\.12e\+06 GiB"):
        api.export(nn.ReLU(), None, tmp_path, "m", input_shapes=[[1, 3, 10000000, 10000000]])


def test_running_out_of_memory_later_is_said_as_such(tmp_path, monkeypatch):
    def allocator_gives_up(*args, **kwargs):
        raise RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
                           "memory: you tried to allocate 4800000000 bytes. Error code 12 (Cannot allocate memory)")

    monkeypatch.setattr(api, "write_ncnn", allocator_gives_up)
    with pytest.raises(ConversionError, match=r"^out of memory: the model at these input sizes needs more memory "
                                              r"than this machine has \(\[enforce fail"):
        api.export(nn.ReLU(), torch.rand(2, 3), tmp_path, "m")
    assert list(tmp_path.iterdir()) == []
