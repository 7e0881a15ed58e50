"""Every error class of pnnx_conformance: the outcomes a check can raise, each named for the Result
status the unit runner turns it into, and one internal signal (TestTimedOut)."""
from __future__ import annotations


class CheckOutcome(Exception):
    """A non-pass outcome of one check: `status` is one of results.STATUSES."""

    status = "harness-error"
    stage = ""  # stages.STAGES: where a failure happened ("" where it says nothing)

    def __init__(self, message: str, detail: str = "", stage: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        if stage:
            self.stage = stage


class NotSupported(CheckOutcome):
    """The converter, emitter or backend cleanly declines: "unsupported: reason"."""

    status = "not-supported"


class NotApplicable(CheckOutcome):
    """The check has no meaning for this converter and case (the Python-API converter given an
    ONNX model); shown as "n/a" in the reports, neither a pass nor a failure."""

    status = "not-applicable"


class Skipped(CheckOutcome):
    """The check does not apply to this case (a random output, a training-only op)."""

    status = "skipped"


class ConvertFailed(CheckOutcome):
    status = "fail-convert"
    stage = "convert"


class FormatFailed(CheckOutcome):
    status = "fail-format"


class RuntimeFailed(CheckOutcome):
    status = "fail-runtime"


class NumericFailed(CheckOutcome):
    status = "fail-numeric"
    stage = "mismatch"


class HarnessError(CheckOutcome):
    """A bug or a misconfiguration of the suite itself (bad waiver file, unknown backend)."""

    status = "harness-error"


class TestTimedOut(Exception):
    """An internal signal of the ONNX backend suite's pytest plug-in (onnx_backend/collect.py): one
    test ran past PNNX_ONNX_BACKEND_TIMEOUT seconds; pytest records that test as failed."""
