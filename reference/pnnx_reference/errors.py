"""Every error class of pnnx_reference, one per meaning (docs/CONVENTIONS.md, "Errors").

A user-facing error is a `PnnxError`: its message is one printable line naming the file or
operator and the problem. `pnnxref` prints it as `error: MESSAGE` and exits 2 (`pnnxref
regenerate`: a FormatError as `FILE:LINE: message`, any other as `error: FILE: message`, exit 1).
Two of them stop only one artefact: `export()` records an `UnsupportedOperator` or a
`MissingPackage` raised while writing one as that emitter's refusal, writes the other artefacts,
and `pnnxref` prints `warning: EMITTER: MESSAGE`. `Unsupported` never reaches the user: the
driver that called the rule gathers it into an `UnsupportedOperator` or a `ConversionError`.
The internal signals at the end are caught inside the package and never printed."""
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


class UsageError(PnnxError):
    """A wrong command-line option or argument, or a model spec that cannot be loaded
    (`pnnxref`: `error: MESSAGE`, exit 2)."""


class FormatError(PnnxError):
    """A malformed or hostile input file (pnnx.param, pnnx.bin, ncnn.param, a zip): the message
    starts with `FILE:LINE:` (`pnnxref`: `error: FILE:LINE: message`, exit 2)."""

    def __init__(self, path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class ExpressionError(PnnxError):
    """A `pnnx.Expression`'s `expr=` text that is malformed, or a value no expression can hold
    (raised by `expression.py`; the param validator turns it into a FormatError naming the line)."""


class ConversionError(PnnxError):
    """The model could not be captured or converted: it cannot be traced, a door refuses it, a
    value-dependent branch, the self-check's mismatch (`pnnxref`: `error: MESSAGE`, exit 2)."""


class ConstantInputsNeeded(ConversionError):
    """An ONNX model refused only because rules need, at conversion time, values the graph
    computes from its inputs `inputs`: converting with those inputs given as constants
    (`constant_inputs=`) would succeed. Gathered from every `ConstantNeeded` of one model."""

    def __init__(self, message: str, inputs: list[str]) -> None:
        super().__init__(message)
        self.inputs = inputs


class StaleWeight(ConversionError):
    """A weight's source tensor was changed in place after the Attribute was made from it
    (ir.Attribute.data): capture the model again."""


class MissingPackage(PnnxError):
    """An optional package that this artefact or door needs is not installed (optional.require
    names the extra that installs it). Writing an artefact, it declines only that artefact."""

    def __init__(self, package: str, message: str) -> None:
        self.package = package
        super().__init__(message)


class InvalidGraph(PnnxError):
    """The graph names or holds what no file may be generated from: an operator type outside
    the allowed PyTorch API, a name that is not an identifier, a malformed slice, a parameter
    value Python cannot spell (raised by the `_pnnx.py` emitter's renderers for a hostile or
    malformed pnnx.param). It stops the whole conversion, never a silent skip."""


class Unsupported(PnnxError):
    """Raised by one rule (an emitter's lowering, a `_pnnx.py` renderer, a door's rule): this
    operator, with these parameters, has no form here. The driver that called the rule names
    the operator and gathers every such refusal into one `UnsupportedOperator` (an emitter) or
    `ConversionError` (a door); it never reaches the user by itself."""


class ConstantNeeded(Unsupported):
    """An ONNX door rule needs input `value` at conversion time and the graph computes it from
    its inputs (gathered into `ConstantInputsNeeded`)."""

    def __init__(self, message: str, value: str) -> None:
        super().__init__(message)
        self.value = value


class AlongBatch(Unsupported):
    """An ncnn lowering would work along its operand's batch axis, which ncnn runs sample by
    sample: the ncnn driver lowers the operator again with every operand holding all its dims."""


class UnsupportedOperator(PnnxError):
    """An emitter (ncnn, pnnx.onnx, `_pnnx.py`) cannot write these operators: `failures` lists
    (type, name, reason) for every one. `export()` writes the other artefacts and `pnnxref`
    prints `warning: EMITTER: MESSAGE`. With `target`, the message counts them
    (`unsupported for ONNX: 2 operator(s): ...`), else it names the first
    (`unsupported: TYPE (NAME): reason; also ...`)."""

    def __init__(self, op_type: str, op_name: str, reason: str,
                 more: list[tuple[str, str, str]] | tuple = (), target: str | None = None) -> None:
        self.op_type, self.op_name, self.reason = op_type, op_name, reason
        self.failures = [(op_type, op_name, reason), *more]
        super().__init__(_unsupported_message(self.failures, target))

    @classmethod
    def gathered(cls, failures: list[tuple[str, str, str]], target: str | None = None) -> "UnsupportedOperator":
        """One error for every (type, name, reason) a driver collected."""
        return cls(*failures[0], more=failures[1:], target=target)


def _unsupported_message(failures: list[tuple[str, str, str]], target: str | None) -> str:
    listing = [f"{t} ({n}): {r}" for t, n, r in failures]
    if target is not None:
        return f"unsupported for {target}: {len(failures)} operator(s): {'; '.join(listing)}"
    return "unsupported: " + listing[0] + ("; also " + "; ".join(listing[1:]) if len(listing) > 1 else "")


class ValueDependentWarning(UserWarning):
    """A value-dependent conversion the user accepted (`allow_value_dependent`): the converted
    model keeps the value the example inputs gave (`pnnxref`: `warning: MESSAGE`)."""


# --- internal signals: caught inside the package, never printed as they are ---------------
class ValueTextError(ValueError):
    """A pnnx.param parameter value's text is malformed (the param reader adds file and line
    and raises a FormatError)."""


class NotAParam(Exception):
    """A Python value has no pnnx parameter form (a module, a callable, a string with
    whitespace); the Python-API door refuses the operator with a ConversionError."""


class OtherPath(Exception):
    """A trace with forced branch outcomes reached a branch the first trace did not have
    (frontends/python/branches.py tries the next outcome)."""
