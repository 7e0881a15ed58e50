"""The waiver file: data naming expected failures, each with a reason and a link.

    [[waiver]]
    case = "nn.Conv2d/*"          # fnmatch pattern on case ids
    backend = "ncnn-vulkan"       # "*" for any; "-" for checks with no backend
    converter = "upstream"        # "*" for any
    check = "parity"              # optional, default "*"
    precision = "fp16"            # optional, default "*"
    reason = "..."
    link = "https://..."

A waived failure becomes xfail; a waived pass becomes xpass, which fails the run: the
waiver is stale and must go. Every entry must match at least one existing case.
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import HarnessError

FAILING = {"fail-numeric", "fail-format", "fail-convert", "fail-runtime", "crash", "timeout", "oom"}
REQUIRED = ("case", "backend", "converter", "reason", "link")
DEFAULT_FILE = Path(__file__).resolve().parent.parent / "waivers.toml"


@dataclass(frozen=True)
class Waiver:
    case: str
    backend: str
    converter: str
    reason: str
    link: str
    check: str = "*"
    precision: str = "*"

    def matches(self, r) -> bool:
        backend = r.backend or "-"
        return (fnmatch.fnmatchcase(r.case, self.case)
                and self.backend in ("*", backend)
                and self.converter in ("*", r.converter)
                and self.check in ("*", r.check)
                and self.precision in ("*", r.precision or "-"))


def load_waivers(path: Path, case_ids: list[str]) -> list[Waiver]:
    """Parse and validate; a bad entry is a HarnessError naming the file and entry."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(f"{path}: {e}") from None
    waivers = []
    for i, entry in enumerate(data.get("waiver", []), 1):
        where = f"{path}: waiver {i}"
        missing = [k for k in REQUIRED if not str(entry.get(k, "")).strip()]
        if missing:
            raise HarnessError(f"{where}: missing {', '.join(missing)}")
        unknown = set(entry) - set(Waiver.__dataclass_fields__)
        if unknown:
            raise HarnessError(f"{where}: unknown field {', '.join(sorted(unknown))}")
        if not entry["link"].startswith(("http://", "https://")):
            raise HarnessError(f"{where}: link must be a URL")
        w = Waiver(**{k: str(v) for k, v in entry.items()})
        if not any(fnmatch.fnmatchcase(c, w.case) for c in case_ids):
            raise HarnessError(f"{where}: case pattern {w.case!r} matches no case")
        waivers.append(w)
    return waivers


def apply_waivers(results, waivers: list[Waiver]) -> None:
    """First matching waiver wins: failures -> xfail, passes -> xpass."""
    for r in results:
        w = next((w for w in waivers if w.matches(r)), None)
        if w is None:
            continue
        if r.status in FAILING:
            r.status, r.waiver = "xfail", w.reason
        elif r.status == "pass":
            r.status, r.waiver = "xpass", w.reason
            r.error = f"passes, but a waiver expects a failure ({w.link})"
