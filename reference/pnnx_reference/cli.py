"""`pnnxref MODEL [key=value ...]`: the upstream command line, for Python models.

MODEL is `package.module:factory` (a callable returning an nn.Module), or a `.py` file that
defines a `Model` class or a `model()` / `get_model()` factory. A `.pt` TorchScript file is
handed to `pnnx_reference.frontends.torchscript`; without inputshape it is converted with
the input shapes the trace recorded, as upstream does. A `.pt2` file written by
`torch.export.save` goes to `pnnx_reference.frontends.export` (its example inputs inside), an
`.onnx` file (external data beside it) to `pnnx_reference.frontends.onnx`."""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import warnings
from pathlib import Path

from .errors import PnnxError, UsageError, ValueDependentWarning, one_line
from .files import no_bytecode

USAGE = """Usage: pnnxref MODEL [(key=value)...]
       pnnxref regenerate FILE.pnnx.param [pnnxbin=FILE.pnnx.bin] [pnnxpy=FILE_pnnx.py]
       pnnxref --version
  MODEL: package.module:factory | model.py (defines Model, model() or get_model()) | model.pt
         | model.pt2 (torch.export.save; inputshape optional: the file holds example inputs)
         | model.onnx (inputshape optional: the graph's own shapes; external data beside it)
  pnnxparam=model.pnnx.param  pnnxbin=model.pnnx.bin  pnnxpy=model_pnnx.py
  pnnxonnx=model.pnnx.onnx  ncnnparam=model.ncnn.param  ncnnbin=model.ncnn.bin
  ncnnpy=model_ncnn.py  fp16=1  optlevel=2  device=cpu/gpu
  inputshape=[1,3,224,224],...  inputshape2=[1,3,320,320],...  (a traced .pt records its own)
  input=a.npy,b.npy  input2=c.npy,d.npy  (example inputs; they give shapes and dtypes)
  customop=/path/to/ops.so,...  moduleop=models.common.Focus,...
  selfcheck=1  after converting, run the regenerated _pnnx.py on the example inputs (and on
               the inputshape2 ones) against the original model; a mismatch is an error that
               names the first differing operator and writes nothing (0: skip the check)
  allowvaluedependent=0  1: accept a model that turns a tensor computed from its inputs into a
               Python value (`if x.sum() > 0:`, int(x.max()), .item(), .tolist(), len() of a
               torch.nonzero result); the converted model keeps the example inputs' value, and
               each such place is printed as a warning. 0 (default): refuse, naming the line
Sample usage: pnnxref torchvision.models:resnet18 inputshape=[1,3,224,224]"""

PATH_KEYS = ("pnnxparam", "pnnxbin", "pnnxpy", "pnnxonnx", "ncnnparam", "ncnnbin", "ncnnpy")
_SHAPE = re.compile(r"\[([0-9,\s-]*)\]([a-z0-9]*)")


def parse_shapes(key: str, text: str) -> tuple[list[list[int]], list[str | None]]:
    """`[1,3,224,224]f32,[1,77]i64` -> ([[1,3,224,224],[1,77]], ['f32','i64'])."""
    shapes, types, pos = [], [], 0
    text = text.strip()
    while pos < len(text):
        match = _SHAPE.match(text, pos)
        if match is None:
            raise UsageError(f"{key}: malformed shape list {text!r} (expected e.g. [1,3,224,224],[1,10])")
        try:
            dims = [int(d) for d in match.group(1).split(",") if d.strip()]
        except ValueError:
            raise UsageError(f"{key}: malformed shape {match.group(0)!r}") from None
        if any(d <= 0 for d in dims):  # [] is a 0-d tensor, as upstream reads it
            raise UsageError(f"{key}: every dimension must be a positive integer in {match.group(0)!r}")
        _check_fits(key, match.group(0), dims, match.group(2) or "f32")
        shapes.append(dims)
        types.append(match.group(2) or None)
        pos = match.end()
        if pos < len(text):
            if text[pos] != ",":
                raise UsageError(f"{key}: malformed shape list {text!r}")
            pos += 1
    if not shapes:
        raise UsageError(f"{key}: empty shape list")
    return shapes, types


def _check_fits(key: str, text: str, dims: list[int], suffix: str) -> None:
    from .input_sizes import check_fits
    from .ir import DTYPES

    if suffix not in DTYPES:
        raise UsageError(f"{key}: unknown type {suffix!r} in {text!r} (expected one of {', '.join(DTYPES)})")
    check_fits(dims, DTYPES[suffix].itemsize, f"{key} {text}")


def _flag(key: str, value: str) -> bool:
    if value not in ("0", "1"):
        raise UsageError(f"{key} must be 0 or 1, not {value!r}")
    return value == "1"


def _optlevel(key: str, value: str) -> int:
    if value not in ("0", "1", "2"):
        raise UsageError(f"optlevel must be 0, 1 or 2, not {value!r}")
    return int(value)


def _device(key: str, value: str) -> str:
    if value not in ("cpu", "gpu"):
        raise UsageError(f"device must be cpu or gpu, not {value!r}")
    return value


def _names(key: str, value: str) -> list[str]:
    return [v for v in value.split(",") if v]


_PARSERS = {"fp16": _flag, "selfcheck": _flag, "allowvaluedependent": _flag,
            "optlevel": _optlevel, "device": _device, "moduleop": _names,
            "customop": _names, "inputshape": parse_shapes, "inputshape2": parse_shapes,
            "input": _names, "input2": _names,
            **{k: lambda key, v: v for k in PATH_KEYS}}


def parse_args(argv: list[str]) -> tuple[str, dict]:
    if not argv or argv[0] in ("-h", "--help"):
        raise UsageError("no model given (usage: pnnxref --help)")
    model, options = argv[0], {}
    for arg in argv[1:]:
        key, sep, value = arg.partition("=")
        if not sep:
            raise UsageError(f"argument {arg!r} is not key=value")
        if key not in _PARSERS:
            raise UsageError(f"unknown option {key!r} (known: {', '.join(sorted(_PARSERS))})")
        options[key] = _PARSERS[key](key, value)
    return model, options


def load_model(spec: str):
    """The nn.Module that MODEL names, and the base path the outputs go beside (for a `.pt`,
    the frontends.torchscript TracedFile instead of the module)."""
    if spec.endswith(".pt2"):  # torch.export.save: an ExportedProgram, inputs inside
        from .frontends import export

        return export.load(spec), Path(spec).with_suffix("")
    if spec.endswith(".pt"):
        base = Path(spec).with_suffix("")
        return _load_torchscript(spec), base.with_name(base.name.replace("-", "_"))  # as upstream
    if spec.endswith(".py"):
        return _load_python_file(spec), Path(spec).with_suffix("")
    module_name, sep, factory = spec.partition(":")
    if not sep or not module_name or not factory:
        raise UsageError(f"{spec}: MODEL must be package.module:factory, a .py file or a .pt file")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"{spec}: cannot import {module_name}: {err}") from None
    if not hasattr(module, factory):
        raise UsageError(f"{spec}: {module_name} has no {factory}")
    return _call_factory(spec, getattr(module, factory)), Path(factory)


def _load_torchscript(spec: str):
    from .frontends import torchscript

    if not Path(spec).is_file():
        raise UsageError(f"{spec}: no such file")
    return torchscript.read(spec)


def _load_python_file(spec: str):
    path = Path(spec)
    if not path.is_file():
        raise UsageError(f"{spec}: no such file")
    # named as the file, so its classes are `net.Focus` for moduleop= and in pnnx.param (not put
    # in sys.modules: a file named like an installed module shadows nothing)
    name = path.stem if path.stem.isidentifier() else re.sub(r"\W", "_", path.stem)
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        with no_bytecode():
            module_spec.loader.exec_module(module)
    except Exception as err:  # the user's file failed to import
        raise UsageError(f"{spec}: cannot load: {type(err).__name__}: {err}") from None
    finally:
        sys.path.pop(0)
    for name in ("Model", "model", "get_model"):
        if hasattr(module, name):
            return _call_factory(spec, getattr(module, name))
    raise UsageError(f"{spec}: defines no Model class and no model() / get_model() factory")


def _call_factory(spec: str, factory):
    import torch.nn as nn

    try:
        model = factory()
    except Exception as err:
        raise UsageError(f"{spec}: building the model failed: {type(err).__name__}: {err}") from None
    if not isinstance(model, nn.Module):
        raise UsageError(f"{spec}: the factory returned {type(model).__name__}, not an nn.Module")
    return model


def run_onnx(spec: str, options: dict) -> int:
    """An ONNX file: inputshape is optional (the graph's own shapes), and required only for
    symbolic dims; element types come from the graph. `input=` gives example arrays instead."""
    from .api import export_onnx
    from .example_inputs import read_arrays

    for key in ("moduleop", "customop", "input2"):
        if options.get(key):
            raise UsageError(f"{key}= does not apply to an ONNX model" + (" (give inputshape2)" if key == "input2" else ""))
    shapes, types = options.get("inputshape", (None, None))
    shapes2 = options["inputshape2"][0] if "inputshape2" in options else None
    inputs = read_arrays(options["input"]) if "input" in options else None
    if inputs is not None and shapes is not None and shapes != [list(a.shape) for a in inputs]:
        raise UsageError("inputshape and input disagree (give one of them)")
    if shapes is not None and shapes2 is not None and len(shapes2) != len(shapes):
        raise UsageError("inputshape2 must list as many shapes as inputshape")
    base = Path(spec).with_suffix("")
    base = base.with_name(base.name.replace("-", "_"))
    result = export_onnx(spec, base.parent, base.name, input_shapes=shapes, input_shapes2=shapes2, inputs=inputs,
                         input_types=types, optlevel=options.get("optlevel", 2), fp16=options.get("fp16", True),
                         device=options.get("device", "cpu"), self_check=options.get("selfcheck", True),
                         allow_value_dependent=options.get("allowvaluedependent", False),
                         **{k: options.get(k) for k in PATH_KEYS})
    _print_result(result)
    return 0


def _print_declined(result) -> None:
    """What an emitter did not write, and the files of an earlier run that went with it."""
    for emitter, message in result.unsupported.items():
        print(f"warning: {emitter}: {message}", file=sys.stderr)
    for path in result.removed:
        print(f"warning: removed {path}: an earlier run wrote it and this run writes no such artefact",
              file=sys.stderr)


def run(argv: list[str]) -> int:
    from .api import export

    spec, options = parse_args(argv)
    if spec.endswith(".onnx"):
        return run_onnx(spec, options)
    model, base, inputs, inputs2 = _given_up_model(spec, options)
    with warnings.catch_warnings():  # printed below, one line each
        warnings.simplefilter("ignore", ValueDependentWarning)
        result = export(model, inputs, base.parent, base.name, inputs2=inputs2, optlevel=options.get("optlevel", 2),
                        moduleop=options.get("moduleop", ()), customop=options.get("customop", ()),
                        fp16=options.get("fp16", True), device=options.get("device", "cpu"),
                        allow_value_dependent=options.get("allowvaluedependent", False),
                        self_check=options.get("selfcheck", True), **{k: options.get(k) for k in PATH_KEYS})
    _print_result(result)
    return 0


def _given_up_model(spec: str, options: dict):
    """(model, base path, inputs, second inputs) for MODEL `spec`; an nn.Module comes as
    api.GivenUp: nothing here keeps it, so export frees it (a `.pt`'s TorchScript module and the
    weights fusion replaces) once the capture is checked."""
    from torch import nn

    from .api import GivenUp
    from .example_inputs import resolve

    model, base = load_model(spec)
    traced = model if spec.endswith(".pt") else None
    model = traced.module if traced is not None else model
    inputs, inputs2 = resolve(spec, options, traced)
    return (GivenUp(model) if isinstance(model, nn.Module) else model), base, inputs, inputs2


def _print_result(result) -> None:
    """What every door prints: the files written, the statistics (on stderr, as upstream
    prints them), warnings, what an emitter declined, and what the self-check found."""
    from .stat import model_stat

    for artefact, path in result.paths.items():
        print(f"{artefact}: {path}")
    print("\n".join(model_stat(result.graph).lines()), file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for note in result.value_dependent + result.warnings:
        print(f"warning: {note}", file=sys.stderr)
    _print_declined(result)
    print(f"selfcheck: {result.self_check}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if argv[:1] == ["--version"]:
        from . import version_line

        print(version_line("pnnxref"))
        return 0
    try:
        if argv and argv[0] == "regenerate":  # pnnx.param (+ bin) -> _pnnx.py, no model needed
            from .emit import main_regenerate

            return main_regenerate(argv[1:])
        return run(argv)
    except PnnxError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except (Exception, RecursionError, MemoryError) as err:  # a converter bug: one line, not a traceback
        if os.environ.get("PNNXREF_TRACEBACK"):
            raise
        from .input_sizes import out_of_memory

        if (memory := out_of_memory(err)) is not None:
            print(f"error: {memory}", file=sys.stderr)
            return 2
        text = one_line((str(err).strip().splitlines() or [""])[0][:300])
        print(f"error: internal error: {type(err).__name__}: {text} (PNNXREF_TRACEBACK=1 shows where; "
              "please report it)", file=sys.stderr)
        return 3


def console() -> None:
    """The `pnnxref` command: `main()`, then out without the interpreter's teardown
    (`fast_exit.leave`: ~190 MB of peak and 0.3 to 0.5 s less; that was the largest part of what
    the `.pt` door's peak memory and wall time had over upstream, reports/speed/README.md).
    By the time `main` returns every file is closed and every staging folder removed."""
    from .fast_exit import leave

    return_large_blocks()
    leave(main())


_M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
LARGE_BLOCK = 1 << 20  # bytes


def return_large_blocks() -> None:
    """glibc's malloc serves a block of LARGE_BLOCK or more with its own mapping, unmapped when
    freed. By default the threshold grows to the largest block freed so far (up to 32 MB), so
    after the first few activations are freed the later ones come from the heap, whose freed
    space stays with the process: the conversion's peak then counts each phase's freed
    activations on top of the next phase's. Pinned, the resident memory follows what is live
    (about 30 to 40 MB less peak on resnet18 and swin_t). Not glibc (or no libc found): nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:  # the process's own symbols: libc's mallopt, without ctypes.util's ldconfig subprocess
        ctypes.CDLL(None).mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK)
    except (OSError, AttributeError):  # musl has no mallopt
        return


if __name__ == "__main__":
    console()
