"""No foreign exception leaves a public entry point (issue 20, item 3): `pnnx_reference.api.
export` / `capture` raise only PnnxError (one line); `pnnxref` (factory, .py, .pt, regenerate)
and `pnnx-validate` print one error line and exit non-zero, whatever they are fed: models
that raise, bad options, unwritable folders, corrupt files, strings pnnx.param cannot hold.
Also: an einsum equation with spaces is written without them and read back."""
from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest
import torch
import torch.nn as nn

from pnnx_reference import api
from pnnx_reference.cli import main as pnnxref
from pnnx_reference.errors import PnnxError
from pnnx_reference.formats import pnnx_param
from pnnx_reference.validate import main as validate


class Ok(nn.Module):
    def forward(self, x):
        return x.relu()


class Raises(nn.Module):
    def forward(self, x):
        raise RuntimeError("boom\nsecond line")


class Recurses(nn.Module):
    def forward(self, x):
        return self.forward(x)


class Exits(nn.Module):
    def forward(self, x):
        sys.exit(3)


class NoTensor(nn.Module):
    def forward(self, x):
        return 3


class Einsum(nn.Module):
    def forward(self, a, b):
        return torch.einsum("B G H I D, B G H J D -> B G H I J", a, b)


@torch.library.custom_op("pnnx_trust::tagged", mutates_args=())
def tagged(x: torch.Tensor, tag: str) -> torch.Tensor:
    return x * len(tag)


class SpacedString(nn.Module):
    def forward(self, x):
        return tagged(x, "two words")


def _x():
    return torch.rand(2, 3)


API_CASES = {
    "model raises": lambda d: api.export(Raises(), _x(), d),
    "model recurses": lambda d: api.export(Recurses(), _x(), d),
    "model calls sys.exit": lambda d: api.export(Exits(), _x(), d),
    "model returns no tensor": lambda d: api.export(NoTensor(), _x(), d),
    "not a module": lambda d: api.capture(lambda x: x, _x()),
    "inputs not tensors": lambda d: api.capture(Ok(), "abc"),
    "input_shapes a string": lambda d: api.capture(Ok(), input_shapes="abc"),
    "negative dimension": lambda d: api.capture(Ok(), input_shapes=[[1, -3]]),
    "no inputs": lambda d: api.capture(Ok()),
    "unknown input type": lambda d: api.capture(Ok(), input_shapes=[[2]], input_types=["f99"]),
    "optlevel": lambda d: api.export(Ok(), _x(), d, optlevel=7),
    "device": lambda d: api.capture(Ok(), _x(), device="tpu"),
    "customop missing": lambda d: api.capture(Ok(), _x(), customop=["/nonexistent/ops.so"]),
    "customop not a library": lambda d: api.capture(Ok(), _x(), customop=[__file__]),
    "moduleop names no class": lambda d: api.capture(Ok(), _x(), moduleop=["Nope"]),
    "inputs2 of another arity": lambda d: api.export(Ok(), _x(), d, inputs2=(_x(), _x())),
    "empty name": lambda d: api.export(Ok(), _x(), d, ""),
    "folder under a file": lambda d: api.export(Ok(), _x(), d / "file" / "sub"),
    "target is a folder": lambda d: api.export(Ok(), _x(), d, pnnxbin=d / "folder"),
    "string with whitespace": lambda d: api.export(SpacedString(), _x(), d),
    "value-dependent": lambda d: api.capture(type("Branchy", (nn.Module,), {
        "forward": lambda self, x: x if x.sum() > 0 else -x})(), _x()),
}


@pytest.mark.parametrize("name", sorted(API_CASES))
def test_the_api_raises_only_one_line_pnnx_errors(name, tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "folder").mkdir()
    with pytest.raises(PnnxError) as info:
        API_CASES[name](tmp_path)
    assert str(info.value) and "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]  # nothing written


def test_a_converter_bug_is_one_line_naming_it_as_such(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise KeyError("a lowering table lost an entry")

    import pnnx_reference.emit.onnx as onnx_emitter

    monkeypatch.setattr(onnx_emitter, "write_onnx", broken)  # api imports it when it writes
    with pytest.raises(PnnxError, match=r"^internal error in the converter: KeyError: 'a lowering table lost "
                                        r"an entry' \(please report it with the model\)$") as info:
        api.export(Ok(), _x(), tmp_path)
    assert isinstance(info.value.__cause__, KeyError)  # the original stays reachable for a developer
    assert list(tmp_path.iterdir()) == []


def test_einsum_equation_with_spaces_is_written_without_them_and_read_back(tmp_path):
    a, b = torch.rand(1, 2, 3, 4, 5), torch.rand(1, 2, 3, 6, 5)
    result = api.export(Einsum(), (a, b), tmp_path, "e")
    assert result.self_check.startswith("passed")
    graph = pnnx_param.load(result.paths["pnnxparam"])
    einsum = next(op for op in graph.ops if op.type == "torch.einsum")
    assert einsum.params["equation"] == "BGHID,BGHJD->BGHIJ"


def test_a_string_pnnx_param_cannot_hold_is_refused_naming_the_operator():
    with pytest.raises(PnnxError, match=r"pnnx\.custom_op\.pnnx_trust\.tagged: argument arg_1: 'two words' "
                                        r"contains whitespace, which pnnx\.param cannot hold"):
        api.capture(SpacedString(), _x())


def test_the_writer_names_the_operator_of_a_value_it_cannot_write():
    graph = api.capture(Ok(), _x())
    relu = next(op for op in graph.ops if op.type not in ("pnnx.Input", "pnnx.Output"))
    relu.params["mode"] = "a b"
    with pytest.raises(ValueError, match=rf"^{relu.type} {relu.name}: string 'a b' contains whitespace"):
        pnnx_param.dumps(graph)


# --- the command lines ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    (d / "ok.py").write_text("import torch.nn as nn\nclass Model(nn.Module):\n"
                             "    def forward(self, x):\n        return x.relu()\n")
    (d / "import_fails.py").write_text("raise ValueError('broken\\nmodel')\n")
    (d / "ctor_fails.py").write_text("import torch.nn as nn\nclass Model(nn.Module):\n"
                                     "    def __init__(self):\n        raise KeyError('x')\n")
    (d / "no_model.py").write_text("x = 1\n")
    (d / "garbage.pt").write_bytes(b"\x00garbage" * 10)
    with zipfile.ZipFile(d / "not_torchscript.pt", "w") as z:
        z.writestr("x/data.pkl", b"not a pickle")
    head = "7767517\n3 2\npnnx.Input i 0 1 0\n"
    tail = "\npnnx.Output o 1 0 1\n"
    (d / "deep.pnnx.param").write_text(head + "pnnx.Expression e 1 1 0 1 expr=" + "neg(" * 1000 + "@0"
                                       + ")" * 1000 + tail)
    (d / "unknown_fn.pnnx.param").write_text(head + "pnnx.Expression e 1 1 0 1 expr=evil(@0)" + tail)
    (d / "bad_index.pnnx.param").write_text(head + "pnnx.Expression e 1 1 0 1 expr=add(@0,@5)" + tail)
    (d / "superscript.pnnx.param").write_text(head.replace("0 1 0", "0 1 0 #0=(1,²)f32") +
                                              "pnnx.Expression e 1 1 0 1 expr=neg(@0)" + tail)
    (d / "binary.pnnx.param").write_bytes(bytes(range(256)))
    (d / "bad_bin.pnnx.param").write_text("7767517\n3 2\npnnx.Input i 0 1 0\n"
                                          "pnnx.Attribute a 0 1 1 @data=(2)f32\npnnx.Output o 1 0 1\n")
    (d / "bad_bin.pnnx.bin").write_bytes(b"PK\x03\x04 not a zip")
    (d / "superscript.ncnn.param").write_text("7767517\n1 ³\nInput in 0 1 in0\n")
    (d / "a_file").write_text("")
    return d


CLI_CASES = [
    ("pnnxref", []), ("pnnxref", ["ok.py", "foo=1"]), ("pnnxref", ["ok.py", "fp16=2"]),
    ("pnnxref", ["ok.py", "inputshape=[a]"]), ("pnnxref", ["ok.py"]), ("pnnxref", ["nope.py", "inputshape=[1]"]),
    ("pnnxref", ["import_fails.py", "inputshape=[1]"]), ("pnnxref", ["ctor_fails.py", "inputshape=[1]"]),
    ("pnnxref", ["no_model.py", "inputshape=[1]"]), ("pnnxref", ["os:path", "inputshape=[1]"]),
    ("pnnxref", ["no_such_module:fn", "inputshape=[1]"]), ("pnnxref", ["garbage.pt", "inputshape=[1]"]),
    ("pnnxref", ["not_torchscript.pt", "inputshape=[1]"]), ("pnnxref", ["missing.pt", "inputshape=[1]"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "inputshape2=[1,2],[3]"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "selfcheck=x"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "allowvaluedependent=yes"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "pnnxpy=a_file/x_pnnx.py"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "moduleop=Nope"]),
    ("pnnxref", ["ok.py", "inputshape=[1,2]", "customop=nope.so"]),
    ("regenerate", []), ("regenerate", ["unknown_fn.pnnx.param", "x=1"]),
    ("regenerate", ["missing.pnnx.param"]), ("regenerate", ["deep.pnnx.param"]),
    ("regenerate", ["unknown_fn.pnnx.param"]), ("regenerate", ["bad_index.pnnx.param"]),
    ("regenerate", ["superscript.pnnx.param"]), ("regenerate", ["binary.pnnx.param"]),
    ("regenerate", ["bad_bin.pnnx.param"]), ("regenerate", ["neg.pnnx.param", "pnnxpy=a_file/x_pnnx.py"]),
    ("validate", []), ("validate", ["ok.py"]), ("validate", ["missing.pnnx.param"]),
    ("validate", ["deep.pnnx.param"]), ("validate", ["unknown_fn.pnnx.param"]), ("validate", ["bad_index.pnnx.param"]),
    ("validate", ["superscript.pnnx.param"]), ("validate", ["binary.pnnx.param"]), ("validate", ["bad_bin.pnnx.param"]),
    ("validate", ["superscript.ncnn.param"]),
]


def _run(tool, argv):
    if tool == "validate":
        try:
            return validate(argv)
        except SystemExit as exit:  # argparse's own refusals
            return exit.code
    return pnnxref(["regenerate", *argv] if tool == "regenerate" else argv)


@pytest.mark.parametrize("tool, argv", CLI_CASES, ids=[f"{t}:{' '.join(a)}" for t, a in CLI_CASES])
def test_every_command_line_refuses_in_one_line(tool, argv, files, capsys, monkeypatch):
    monkeypatch.chdir(files)
    (files / "neg.pnnx.param").write_text("7767517\n3 2\npnnx.Input i 0 1 0\npnnx.Expression e 1 1 0 1 "
                                          "expr=neg(@0)\npnnx.Output o 1 0 1\n")
    before = sorted(p.name for p in files.iterdir())
    code = _run(tool, argv)
    err = capsys.readouterr().err
    assert code not in (0, None), err
    lines = err.splitlines()
    assert lines and "Traceback" not in err, err
    if tool == "validate":  # one line per problem found, each naming the file
        stem = argv[0].split(".")[0] if argv else "-"
        assert all(line.startswith((stem, "error: ")) for line in lines), err  # its param or bin
    else:
        assert len(lines) == 1, err
    assert sorted(p.name for p in files.iterdir()) == before  # no partial file


def test_a_converter_bug_on_the_command_line_is_one_line_and_exit_3(tmp_path, capsys, monkeypatch):
    (tmp_path / "ok.py").write_text("import torch.nn as nn\nclass Model(nn.Module):\n"
                                    "    def forward(self, x):\n        return x.relu()\n")
    monkeypatch.setattr("pnnx_reference.cli.run", lambda argv: {}["missing"])
    assert pnnxref([str(tmp_path / "ok.py"), "inputshape=[2]"]) == 3
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: internal error: KeyError: 'missing'")


def test_the_installed_commands_print_no_traceback(files):
    """The real console scripts, as a user runs them."""
    for argv in (["-m", "pnnx_reference.cli", "regenerate", str(files / "deep.pnnx.param")],
                 ["-m", "pnnx_reference.cli", str(files / "garbage.pt"), "inputshape=[1]"],
                 ["-m", "pnnx_reference.validate", str(files / "binary.pnnx.param")]):
        proc = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=300)
        lines = proc.stderr.splitlines()
        assert proc.returncode != 0 and lines and "Traceback" not in proc.stderr, proc.stderr
        assert len(lines) == 1 or all(line.startswith(argv[-1]) for line in lines), proc.stderr


TEARDOWN_PROBE = """
import atexit, sys
atexit.register(lambda: print("teardown ran"))
sys.argv = ["pnnxref", *sys.argv[1:]]
from pnnx_reference.cli import console
console()
"""


@pytest.mark.parametrize("argv, code", [(["--version"], 0), (["nosuch.pt", "inputshape=[1]"], 2)])
def test_the_command_skips_the_interpreters_teardown_and_keeps_its_output_and_code(argv, code):
    """`pnnxref` leaves with os._exit once main() has returned (torch's teardown costs ~190 MB
    and ~0.4 s), after flushing what it printed to pipes; its exit status is main()'s."""
    proc = subprocess.run([sys.executable, "-c", TEARDOWN_PROBE, *argv], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == code, proc.stderr
    assert "teardown ran" not in proc.stdout
    assert (proc.stdout if code == 0 else proc.stderr).strip(), "the printed line was lost"
