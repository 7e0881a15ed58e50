"""Whose bug a runtime's failure is: onnxruntime run on the same case through the same route
(the reference converter's pnnx.onnx, fp32), judged by the same harness. Where onnxruntime
passes, the file is right and the runtime wrong; where it fails too, the suite's file (or the
case) is suspect."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

from ..units import Unit
from . import CONVERTER, YARDSTICK

FILE = "yardstick.json"
NOT_FAILED = ("pass", "xfail", "not-applicable", "skipped")


def failing_cases(records_by_backend: dict[str, list]) -> list[str]:
    return sorted({r.case for records in records_by_backend.values() for r in records if r.status not in NOT_FAILED})


def read(out: Path) -> dict:
    path = Path(out) / FILE
    return json.loads(path.read_text()) if path.is_file() else {"cases": {}}


def owner(verdict: dict | None) -> str:
    """"runtime" (onnxruntime passes the same case), "suite" (it does not), or "unchecked"."""
    if verdict is None:
        return "unchecked"
    return "runtime" if verdict["status"] == "pass" else "suite"


def measure(cases: list[str], tier: str = "smoke") -> dict[str, dict]:
    """onnxruntime's verdict on each case, in this process (the harness's Executor)."""
    from ..checks import Executor

    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="pnnx-yardstick-") as work:
        executor = Executor(Path(work), tier)
        try:
            for case in cases:
                res = executor.execute(Unit(case, CONVERTER, "parity", YARDSTICK, "fp32"))
                verdicts[case] = {"status": res.status, "error": res.error}
        finally:
            executor.close()
    return verdicts


def update(out: Path, records_by_backend: dict[str, list], fresh: bool = False) -> dict:
    """yardstick.json with a verdict for every case some runtime fails (measured once per case;
    `fresh` measures all again)."""
    import onnxruntime

    known = {} if fresh else read(out)["cases"]
    wanted = failing_cases(records_by_backend)
    verdicts = {case: known[case] for case in wanted if case in known}
    verdicts.update(measure([case for case in wanted if case not in verdicts]))
    data = {"backend": YARDSTICK, "version": onnxruntime.__version__, "converter": CONVERTER, "precision": "fp32",
            "cases": dict(sorted(verdicts.items()))}
    Path(out, FILE).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return data
