"""The harness's converters, told about a zoo case's converter options (`moduleop`).

The harness's own converters convert a case with default options; a zoo case may need
options (YOLOv5's Focus block is kept whole with `moduleop`), so these subclasses pass
`case.options` on: as keyword arguments to `export`, and as key=value arguments to `pnnx`
and `pnnxref`. The `.pt` route gives `pnnxref` no inputshape at all: a whole network traced
by a user converts with the shapes the trace recorded.
"""
from __future__ import annotations

import subprocess
import traceback
from pathlib import Path

from pnnx_conformance.artefacts import Artefacts, kind_name
from pnnx_conformance.converters.case_files import inputshape_arg, second_shape_args
from pnnx_conformance.converters.reference import ReferenceConverter, second_inputs
from pnnx_conformance.converters.reference_export import ReferenceExportConverter
from pnnx_conformance.converters.reference_onnx import ReferenceOnnxConverter
from pnnx_conformance.converters.reference_pt import ReferencePtConverter
from pnnx_conformance.converters.upstream import UpstreamConverter
from pnnx_conformance.errors import ConvertFailed, NotSupported


def case_options(case) -> dict:
    return dict(getattr(case, "options", None) or {})


class ZooReference(ReferenceConverter):
    """`pnnx_reference.api.export(model, inputs, workdir, "case", inputs2=..., fp16=..., **case.options)`."""

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        from pnnx_reference import api
        from pnnx_reference.errors import PnnxError, UnsupportedOperator

        model = case.make_model() if model is None else model
        inputs = case.make_inputs() if inputs is None else inputs
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            res = api.export(model, inputs, workdir, "case", inputs2=second_inputs(case), fp16=fp16,
                             self_check=False, **case_options(case))  # as ReferenceConverter
        except UnsupportedOperator as e:
            raise NotSupported(str(e)) from None
        except PnnxError as e:
            raise ConvertFailed(f"{type(e).__name__}: {e}".splitlines()[0], traceback.format_exc()) from None
        except Exception as e:  # the converter's own bug is still the converter's failure
            raise ConvertFailed(f"{type(e).__name__}: {e}".splitlines()[0], traceback.format_exc()) from None
        paths = {kind_name(k): Path(p) for k, p in res.paths.items()}
        return Artefacts(self.name, case.id, workdir, paths, {k: str(v) for k, v in res.unsupported.items()})


def module_qualname(model, class_name: str) -> str:
    """The TorchScript-visible dotted name of the submodule class called `class_name`:
    upstream's `moduleop=` matches the full `module.Class` path, ours the class name."""
    for sub in model.modules():
        cls = type(sub)
        if cls.__name__ == class_name:
            return f"{cls.__module__}.{cls.__qualname__}"
    return class_name


def upstream_args(case, model) -> list[str]:
    """key=value arguments for the `pnnx` command from the case's options."""
    args = []
    for key, value in case_options(case).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        if key == "moduleop":
            values = [module_qualname(model, v) for v in values]
        args.append(f"{key}={','.join(str(v) for v in values)}")
    return args


class ZooUpstream(UpstreamConverter):
    """Trace to case.pt, then `pnnx case.pt inputshape=... [inputshape2=...] fp16=... [moduleop=...]`."""

    # whole networks: vit_b_16 takes upstream over the harness's 120 s on a loaded 2-core machine
    timeout_s = 600

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        model = case.make_model() if model is None else model
        self._extra = upstream_args(case, model)
        return super().convert(case, workdir, model, inputs, fp16=fp16)

    def _run(self, exe: str, case, workdir: Path, fp16: bool) -> subprocess.CompletedProcess:
        return self.command(exe, ["case.pt", inputshape_arg(case), *second_shape_args(case), f"fp16={int(fp16)}",
                                  *self._extra], workdir, self.timeout_s)


class ZooReferencePt(ReferencePtConverter):
    """Trace to case.pt, then `pnnxref case.pt [inputshape2=...] fp16=... [moduleop=...]`: no inputshape."""

    def argv(self, case, fp16: bool) -> list[str]:
        options = [f"{k}={','.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
                   for k, v in case_options(case).items()]
        return ["case.pt", *second_shape_args(case), f"fp16={int(fp16)}", *options]


class ZooReferenceExport(ReferenceExportConverter):
    """torch.export to case.pt2, then `pnnxref case.pt2 fp16=...`. A .pt2 keeps no user classes,
    so `moduleop` cannot apply: such a block converts operator by operator."""

    timeout_s = 600  # whole networks on a loaded 2-core machine


class ZooReferenceOnnx(ReferenceOnnxConverter):
    """torch.onnx.export, then `pnnxref case.onnx`; an ONNX file has no module classes, so a
    case's `moduleop` does not apply (the block is converted op by op)."""

    timeout_s = 600
