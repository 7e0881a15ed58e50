"""Errors a user can cause. Each prints as one line naming the file and the problem;
command lines catch `PnnxError`, print `str(err)` to stderr and exit non-zero."""
from __future__ import annotations


def one_line(text: str) -> str:
    """`text` with every character that would break or hide a line escaped (newlines, other
    control characters, U+2028 and the rest of what `str.splitlines` splits on), so an error
    that quotes a hostile name still prints as one line."""
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in text)


_TORCHSCRIPT_FAILED = "The following operation failed in the TorchScript interpreter."


def cause(err: BaseException) -> str:
    """`Type: first line` of an exception; for an error the TorchScript interpreter raises
    (a `.pt` model's), the cause its last line gives, not the interpreter's generic heading."""
    lines = [line for line in str(err).strip().splitlines() if line.strip()]
    if lines and lines[0] == _TORCHSCRIPT_FAILED and ": " in lines[-1]:
        return lines[-1].strip()
    return f"{type(err).__name__}: {lines[0] if lines else ''}"


class PnnxError(Exception):
    """Base of every user-facing error; its message is always one printable line."""

    def __init__(self, message: str = "") -> None:
        super().__init__(one_line(str(message)))


class FormatError(PnnxError):
    """A malformed or hostile input file (param, bin, zip)."""

    def __init__(self, path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class ConversionError(PnnxError):
    """The model could not be captured or converted (e.g. it cannot be traced)."""


class Unsupported(PnnxError):
    """Raised by one rule (an emitter's lowering, a `_pnnx.py` renderer, a frontend rule): this
    operator, with these parameters, has no form here. The driver that called the rule names
    the operator and gathers every such refusal into one `UnsupportedOperator`."""


class UnsupportedOperator(PnnxError):
    """An emitter (ncnn, onnx) cannot lower one operator. Other artefacts are still written."""

    def __init__(self, op_type: str, op_name: str, reason: str) -> None:
        self.op_type, self.op_name, self.reason = op_type, op_name, reason
        super().__init__(f"unsupported: {op_type} ({op_name}): {reason}")


class UsageError(PnnxError):
    """A wrong command-line option or argument."""


class ValueDependentWarning(UserWarning):
    """A value-dependent conversion the user accepted (`allow_value_dependent`): the converted
    model keeps the value the example inputs gave."""
