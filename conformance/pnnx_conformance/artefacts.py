"""What a converter produced for one case: artefact paths by kind, and what it declined."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

# Artefact kinds, as the reference converter's ExportResult.paths names them.
KINDS = ("pnnx.param", "pnnx.bin", "pnnx.py", "pnnx.onnx", "ncnn.param", "ncnn.bin", "ncnn.py")
MANIFEST = "artefacts.json"
# which emitter writes each kind (the names in a converter's `unsupported`)
EMITTERS = {"pnnx.param": ("pnnx",), "pnnx.bin": ("pnnx",), "pnnx.py": ("python", "pnnx"),
            "pnnx.onnx": ("onnx",), "ncnn.param": ("ncnn",), "ncnn.bin": ("ncnn",), "ncnn.py": ("ncnn",)}


def safe(text: str) -> str:
    """`text` as one file-name part."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def case_workdir(workroot: Path, case, converter: str, rounding: str | None) -> Path:
    """Where a worker keeps one converter's artefacts of a case (`rounding`: the fp16 copy's)."""
    return Path(workroot) / case.safe_name / (converter + (f"-{rounding}" if rounding else ""))


def actual_dir(workdir: Path, backend: str, precision: str) -> Path:
    return Path(workdir) / f"actual-{safe(backend)}-{safe(precision)}"


def keep_actual(workdir: Path, backend: str, precision: str, outputs) -> None:
    """The worker keeps what a backend produced in a numeric failure, for its bundle: the bundle
    never runs a backend again (a runtime that aborts must not take the whole run down with it)."""
    try:
        save_arrays(actual_dir(workdir, backend, precision), outputs)
    except (OSError, ValueError):  # the bundle says it has no outputs; the result stands
        pass


def save_arrays(folder: Path, arrays) -> None:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    for i, a in enumerate(arrays):
        np.save(folder / f"{i}.npy", np.asarray(a))


def kind_name(key: str) -> str:
    """"pnnxparam" (the reference API's key) or "pnnx.param" -> "pnnx.param"."""
    for kind in KINDS:
        if key in (kind, kind.replace(".", "")):
            return kind
    return key


@dataclass
class Artefacts:
    converter: str
    case_id: str
    workdir: Path
    paths: dict[str, Path] = field(default_factory=dict)
    unsupported: dict[str, str] = field(default_factory=dict)  # emitter ("ncnn", "onnx") -> reason
    log: str = ""

    def has(self, *kinds: str) -> bool:
        return all(k in self.paths and Path(self.paths[k]).is_file() for k in kinds)

    def missing_reason(self, kinds: tuple[str, ...]) -> str:
        """Why the artefacts `kinds` are absent: the emitter's own reason when it gave one."""
        missing = [k for k in kinds if not self.has(k)]
        for k in missing:
            for name in EMITTERS.get(k, ()) + (k,):
                if name in self.unsupported:  # the emitter's reason, said once as "unsupported: ..."
                    reason = self.unsupported[name]
                    return reason if reason.startswith("unsupported: ") else f"unsupported: {reason}"
        return f"{self.converter} converter wrote no {', '.join(missing)}"

    def sizes(self) -> dict[str, int]:
        return {k: Path(p).stat().st_size for k, p in sorted(self.paths.items()) if Path(p).is_file()}

    def save(self) -> None:
        data = {"converter": self.converter, "case_id": self.case_id,
                "paths": {k: str(v) for k, v in self.paths.items()},
                "unsupported": self.unsupported, "log": self.log[-4000:]}
        (Path(self.workdir) / MANIFEST).write_text(json.dumps(data, indent=1, sort_keys=True))

    @classmethod
    def load(cls, workdir: Path) -> "Artefacts":
        data = json.loads((Path(workdir) / MANIFEST).read_text())
        return cls(converter=data["converter"], case_id=data["case_id"], workdir=Path(workdir),
                   paths={k: Path(v) for k, v in data["paths"].items()},
                   unsupported=data["unsupported"], log=data.get("log", ""))
