"""Converter registry: name -> class. A plug-in converter is named "module:Class"."""
from __future__ import annotations

import importlib

from ..errors import HarnessError
from .base import Converter
from .reference import ReferenceConverter
from .reference_export import ReferenceExportConverter
from .reference_onnx import ReferenceOnnxConverter, ReferenceOnnxDynamoConverter
from .reference_pt import ReferencePtConverter
from .upstream import UpstreamConverter

BUILTIN = {"reference": ReferenceConverter, "reference-pt": ReferencePtConverter,
           "reference-export": ReferenceExportConverter, "upstream": UpstreamConverter,
           "reference-onnx": ReferenceOnnxConverter, "reference-onnx-dynamo": ReferenceOnnxDynamoConverter}
# reference-onnx-dynamo is run by name: torch.onnx's dynamo exporter costs seconds per case
DEFAULT = ("reference", "reference-pt", "reference-export", "reference-onnx", "upstream")


def load_converter(spec: str) -> Converter:
    if spec in BUILTIN:
        return BUILTIN[spec]()
    if ":" in spec:
        mod, _, attr = spec.partition(":")
        try:
            return getattr(importlib.import_module(mod), attr)()
        except (ImportError, AttributeError) as e:
            raise HarnessError(f"cannot load converter {spec!r}: {e}") from None
    raise HarnessError(f"unknown converter {spec!r} (known: {', '.join(BUILTIN)})")


__all__ = ["Converter", "BUILTIN", "DEFAULT", "load_converter"]
