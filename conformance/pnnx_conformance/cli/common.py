"""What several subcommands' options share."""
from __future__ import annotations

# written out, not imported: the converters pull in torch, and --help should not wait for it
CONVERTER_HELP = ("reference | reference-pt | reference-export | reference-onnx | reference-onnx-dynamo | "
                  "upstream | module:Class, repeatable or comma-separated (default: all but reference-onnx-dynamo)")


def csv(values: list[str] | None) -> list[str]:
    """A repeatable, comma-separated option's values."""
    return [v for item in values or [] for v in item.split(",") if v]
