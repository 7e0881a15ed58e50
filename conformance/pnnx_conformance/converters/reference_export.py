"""`reference-export`: the reference converter as users meet it with torch.export. The case
is exported with `torch.export.export` (a refusal is `unsupported` with torch's reason and
the source line), saved with `torch.export.save` as case.pt2, and `pnnxref case.pt2` converts
it in the route's conversion server (forkserver.py, serial mode), in the case folder, with
no input shapes: the file holds them. A case with a second shape is exported with the axes it
changes dynamic (`torch.export.Dim.AUTO`) and converted with `inputshape2=`."""
from __future__ import annotations

import traceback
from pathlib import Path

from ..artefacts import Artefacts
from ..errors import NotSupported
from ..oracle import has_lazy_weights
from .base import Converter
from .case_files import TIMEOUT_S, second_shape_args, varying_axes
from .forkserver import ForkServer
from .pnnxref import ENTRY, convert_in, run_pnnxref, warm_up_model

# imported once by the server, so a conversion does not start an interpreter; the
# last two are what torch.export.load imports on its first call (torch._dynamo: ~1 s a child)
_PRELOAD = ("pnnx_reference.cli", "pnnx_reference.api", "pnnx_reference.example_inputs",
            "pnnx_reference.frontends.export", "torch.export.pt2_archive._package", "torch._export.serde.serialize")


def export_to_pt2(case, workdir: Path, model=None, inputs=None) -> Path:
    """case.pt2 in `workdir`: the case's model exported at its example inputs and saved."""
    return save_pt2(export_case(case, model, inputs), workdir)


def export_case(case, model=None, inputs=None):
    """The case's model exported at its example inputs (NotSupported with torch's reason when
    torch.export refuses it, or keeps a dimension of a second shape static)."""
    import torch

    from pnnx_reference.errors import PnnxError
    from pnnx_reference.frontends.export import export_program

    model = case.make_model() if model is None else model
    inputs = case.make_inputs() if inputs is None else inputs
    if has_lazy_weights(model):
        # torch.export cannot trace uninitialized parameters: a user runs the model once first,
        # as here, under the RNG state the harness seeded for the converter's first forward
        # (the oracle's weights)
        with torch.no_grad():
            model(*[x.clone() for x in inputs])
    try:
        program = export_program(model.eval(), tuple(inputs), _dynamic_shapes(case))
    except PnnxError as e:
        raise NotSupported(f"unsupported: {e}".splitlines()[0]) from None
    _check_second_shape(case, program)
    return program


def save_pt2(program, workdir: Path) -> Path:
    """`program` as workdir/case.pt2 (NotSupported when torch cannot serialise what it exported)."""
    import torch

    from pnnx_reference.frontends.export.refusal import quiet

    path = workdir / "case.pt2"
    try:
        with quiet():
            torch.export.save(program, str(path))
    except Exception as e:  # torch cannot serialise what it exported (quantized tensors, return types)
        raise NotSupported(f"unsupported: torch.export.save: {type(e).__name__}: {e}".splitlines()[0],
                           traceback.format_exc()) from None
    return path


def with_weights(program, model, inputs):
    """`program` (an export of `model`'s class) holding `model`'s parameters and buffers and
    taking `inputs` as its example inputs: what exporting `model` at `inputs` gives when its
    weights differ only in value (the harness's fp16-rounded copy of a case). torch.export lifts
    parameters and buffers to graph inputs, so their values do not enter the graph. None when
    `model` does not hold a tensor of the same name, shape and dtype for each of them."""
    import torch

    own = dict(model.named_parameters(remove_duplicate=False))
    own.update(model.named_buffers(remove_duplicate=False))

    def same(name, value):
        mine = own.get(name)
        return mine is not None and mine.shape == value.shape and mine.dtype == value.dtype

    if not all(same(name, value) for name, value in program.state_dict.items()):
        return None
    state = {name: own[name] if isinstance(own[name], torch.nn.Parameter) or not isinstance(value, torch.nn.Parameter)
             else torch.nn.Parameter(own[name], requires_grad=value.requires_grad)
             for name, value in program.state_dict.items()}
    # non-persistent buffers are constants, by their name; lifted tensors stay as exported
    constants = {name: own[name] if isinstance(value, torch.Tensor) and same(name, value) else value
                 for name, value in program.constants.items()}
    reweighted = program._update(program.graph_module, program.graph_signature, state_dict=state,
                                 constants=constants)
    reweighted.example_inputs = (tuple(inputs), {})
    return reweighted


def _class_of(model) -> str:
    return f"{type(model).__module__}.{type(model).__qualname__}"


def _dynamic_shapes(case):
    """torch.export's dynamic_shapes for a case with a second shape: the axes it changes are
    `Dim.AUTO` (torch finds how they relate), or None when there is none."""
    axes = varying_axes(case)
    if not any(axes):
        return None
    from torch.export import Dim

    return tuple({d: Dim.AUTO for d in dims} or None for dims in axes)


def _check_second_shape(case, program) -> None:
    """torch.export fixes an axis it was told to keep dynamic where the model's code pins it
    (Dim.AUTO specialises): the program cannot run at the case's second shape, which is the
    exporter's limit, not the frontend's failure."""
    from pnnx_reference.errors import PnnxError
    from pnnx_reference.frontends.export import check_sizes

    second = case.make_inputs2() if getattr(case, "inputs2", ()) else None
    if second is None:
        return
    try:
        check_sizes(program, tuple(second), "inputshape2")
    except PnnxError as e:
        raise NotSupported(f"unsupported: torch.export.export kept a dimension static: {e}".splitlines()[0]) from None


def warm_up() -> None:
    """The reference-export conversion server's warm-up: an exported tiny model through `pnnxref warm.pt2`."""
    import tempfile

    import torch

    from pnnx_reference.frontends.export.refusal import quiet

    model, x = warm_up_model()
    with tempfile.TemporaryDirectory(prefix="pnnx-forkserver-warm-up-") as folder:
        with quiet():
            torch.export.save(torch.export.export(model, (x,)), str(Path(folder) / "warm.pt2"))
        convert_in(Path(folder), ["warm.pt2", "fp16=0"])


class ReferenceExportConverter(Converter):
    name = "reference-export"
    in_process = True  # a conversion runs in a warmed server, not in an interpreter of its own
    timeout_s = TIMEOUT_S

    def __init__(self) -> None:
        self._server = ForkServer(ENTRY, _PRELOAD, warm_up=f"{__name__}:warm_up", fork=False)
        self._exported = None  # (case id, model class, program) of the case's first export

    def describe(self) -> str:
        return "pnnxref case.pt2 (torch.export.export + torch.export.save, then the command line in the route's conversion server)"

    def argv(self, case, fp16: bool) -> list[str]:
        return ["case.pt2", *second_shape_args(case), f"fp16={int(fp16)}"]

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        workdir.mkdir(parents=True, exist_ok=True)
        save_pt2(self._program(case, model, inputs, fp16), workdir)
        return run_pnnxref(self._server, self.name, case, workdir, self.argv(case, fp16), self.timeout_s)

    def _program(self, case, model, inputs, fp16: bool):
        """The case's export. The harness converts a case's fp16-rounded copy (same module,
        weights pushed through fp16) after the case itself: that one is the first export with
        the copy's weights (`with_weights`; torch.export itself is ~40 ms an op case, seconds a
        network), else exported anew."""
        held = self._exported if self._exported is not None and self._exported[0] == case.id else None
        if fp16 and held is not None and model is not None and inputs is not None and held[1] == _class_of(model):
            program = with_weights(held[2], model, inputs)
            if program is not None:
                return program
        program = export_case(case, model, inputs)
        if held is None and model is not None:
            self._exported = (case.id, _class_of(model), program)
        return program

