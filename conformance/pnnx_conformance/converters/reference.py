"""The reference converter, called in-process."""
from __future__ import annotations

import traceback
from pathlib import Path

from ..artefacts import Artefacts, kind_name
from ..errors import ConvertFailed, NotApplicable, NotSupported
from .base import Converter


class ReferenceConverter(Converter):
    name = "reference"

    def convert(self, case, workdir: Path, model=None, inputs=None, *, fp16: bool = False) -> Artefacts:
        try:
            from pnnx_reference import api
            from pnnx_reference.errors import PnnxError, UnsupportedOperator
        except ImportError as e:
            raise ConvertFailed(f"reference converter not importable: {e}") from None
        if "onnx" in case.tags:
            raise NotApplicable("not applicable: an ONNX model is not a PyTorch module; "
                                "the ONNX frontend converts it (reference-onnx)")
        model = case.make_model() if model is None else model
        inputs = case.make_inputs() if inputs is None else inputs
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            # zoo cases carry converter options (e.g. moduleop for YOLOv5's Focus). The converter's
            # self-check is off: the roundtrip check compares the same _pnnx.py with the oracle, bit
            # for bit, and a mismatch must stay a roundtrip/parity result with its artefacts kept,
            # not become a conversion failure that hides them
            res = api.export(model, inputs, workdir, "case", inputs2=second_inputs(case), fp16=fp16, self_check=False,
                             **getattr(case, "options", {}))
        except UnsupportedOperator as e:
            raise NotSupported(str(e)) from None
        except PnnxError as e:
            raise ConvertFailed(str(e).splitlines()[0] if str(e) else type(e).__name__,
                                traceback.format_exc()) from None
        except Exception as e:  # the converter's own bug: still the converter's failure
            raise ConvertFailed(f"{type(e).__name__}: {e}".splitlines()[0], traceback.format_exc()) from None
        unsupported = {k: str(v) for k, v in (getattr(res, "unsupported", None) or {}).items()}
        return Artefacts(self.name, case.id, workdir, {kind_name(k): Path(p) for k, p in res.paths.items()}, unsupported)


def second_inputs(case):
    """The case's second shape (`inputshape2`), or None; only its shapes matter to the capture."""
    make = getattr(case, "make_inputs2", None)
    return make() if make is not None else None
