"""Complex tensors in ncnn: a complex operand is carried as a real blob with a trailing
(real, imaginary) axis of 2, the layout Spectrogram writes and InverseSpectrogram reads.
The driver asks `reads_complex` which operators may read such a blob."""
from __future__ import annotations

COMPLEX = ("c32", "c64", "c128")


def magnitude_only(out) -> bool:
    """Whether the complex result is only read through abs(): Spectrogram then writes the
    magnitude (power=1), and the abs applied to it again changes nothing."""
    return out.dtype in COMPLEX and bool(out.consumers) and all(
        c.type == "pnnx.Expression" and c.params.get("expr") == "abs(@0)" for c in out.consumers)


def reads_complex(op) -> bool:
    """Whether `op` reads a complex operand as what ncnn holds, its (..., 2) real view: istft,
    view_as_real, or the abs of an stft whose Spectrogram already wrote the magnitude."""
    if op.type in ("torch.istft", "torch.view_as_real"):
        return True
    source = op.inputs[0].producer if op.inputs else None
    return (op.type == "pnnx.Expression" and op.params.get("expr") == "abs(@0)"
            and source is not None and source.type == "torch.stft" and magnitude_only(op.inputs[0]))
