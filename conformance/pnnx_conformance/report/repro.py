"""Repro bundles: one folder per failing case x converter x check x backend under
`<results>/repro/`, enough to reproduce the failure without this repo's harness.

A bundle holds the standalone case (`<case>.py`, inputs, eager outputs), the converter's
artefacts (pnnx.param / ncnn.param ...), `inputs/*.npy`, `expected/*.npy` and, when the
backend produced outputs (a numeric failure), `actual/*.npy`, plus `result.json`
(status, error, metrics), `environment.json` and a README saying how to reproduce.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..artefacts import actual_dir, case_workdir, safe, save_arrays
from ..results import Result

REPRO = "repro"
FAILING = {"fail-numeric", "fail-format", "fail-convert", "fail-runtime", "crash", "timeout", "oom"}
COPIED = ("pnnx.param", "pnnx.bin", "pnnx.py", "pnnx.onnx", "ncnn.param", "ncnn.bin", "ncnn.py")


def bundle_name(r: Result) -> str:
    parts = [r.case, r.converter, r.check, r.backend or "", r.precision or ""]
    return safe("__".join(p for p in parts if p))


def bundle_dir(results_dir: Path, r: Result) -> Path:
    return Path(results_dir) / REPRO / bundle_name(r)


def _copy_artefacts(workdir: Path | None, dest: Path) -> list[str]:
    if workdir is None or not (workdir / "artefacts.json").is_file():
        return []
    from ..artefacts import Artefacts

    arts = Artefacts.load(workdir)
    copied = []
    for kind, path in sorted(arts.paths.items()):
        if kind in COPIED and Path(path).is_file():
            shutil.copy2(path, dest / Path(path).name)
            copied.append(Path(path).name)
    return copied


def _actual_outputs(workdir: Path | None, backend: str, precision: str) -> list | None:
    folder = actual_dir(workdir, backend, precision) if workdir is not None else None
    if folder is None or not folder.is_dir():
        return None
    try:
        return [np.load(f, allow_pickle=False) for f in sorted(folder.glob("*.npy"), key=lambda p: int(p.stem))]
    except (OSError, ValueError):  # unreadable: the bundle says it has no outputs
        return None


def readme_text(r: Result, artefacts: list[str], has_actual: bool) -> str:
    name = safe(r.case.replace("/", "__"))
    lines = [
        f"# Repro: {r.case} [{r.converter} {r.check} {r.backend or ''} {r.precision or ''}]".rstrip() + "\n",
        f"Status: {r.status}. {r.error}\n",
        "Reproduce without the conformance harness:\n",
        "    python case/*.py   # runs the model eagerly and checks it against case/*.out*.npy",
        "    pnnx case/*.pt inputshape=...   # upstream converter, on the traced TorchScript module",
        "then load the *.ncnn.param/.bin or *.pnnx.param/.bin here in your runtime, feed inputs/*.npy",
    ]
    lines += ["", "Compare the backend's outputs with expected/*.npy (np.load); the tolerance applied is in "
              "result.json (metrics.atol / metrics.rtol)."]
    if has_actual:
        lines.append("actual/*.npy holds what the backend produced in the run.")
    lines.append(f"Files: case/ (standalone {name}), {', '.join(artefacts) or 'no converter artefacts'}, "
                 "inputs/, expected/, result.json, environment.json.")
    return "\n".join(lines) + "\n"


def write_bundle(results_dir: Path, r: Result, case, *, workdir: Path | None = None, backend=None,
                 environment: dict | None = None) -> Path:
    """One failure's bundle; returns its folder."""
    from ..oracle import Subject
    from pnnx_op_cases.standalone import write_case

    dest = bundle_dir(results_dir, r)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / "result.json").write_text(json.dumps(asdict(r), indent=1, sort_keys=True))
    (dest / "environment.json").write_text(json.dumps(environment or {}, indent=1, sort_keys=True))
    artefacts = _copy_artefacts(workdir, dest)
    actual = None
    try:
        write_case(case, dest / "case")
        rounding = backend.precisions.get(r.precision) if backend is not None and r.precision else None
        subject = Subject(case, rounding)
        save_arrays(dest / "inputs", subject.numpy_inputs)
        save_arrays(dest / "expected", subject.expected)
        if r.status == "fail-numeric" and r.check == "parity":
            actual = _actual_outputs(workdir, r.backend, r.precision or "fp32")
    except Exception as e:  # a case that cannot even build: the bundle says so
        (dest / "case-error.txt").write_text(f"{type(e).__name__}: {e}\n")
    if actual is not None:
        save_arrays(dest / "actual", actual)
    (dest / "README.md").write_text(readme_text(r, artefacts, actual is not None))
    return dest


def write_bundles(results_dir: Path, results: list[Result], cases: dict, *, workroot: Path | None = None,
                  backends: dict | None = None, environment: dict | None = None) -> list[Path]:
    """A bundle for every failing record whose case is known. `workroot` is where the
    worker kept artefacts (`<workroot>/<case.safe_name>/<converter>/`)."""
    written = []
    for r in results:
        case = cases.get(r.case)
        if r.status not in FAILING or case is None:
            continue
        backend = (backends or {}).get(r.backend) if r.backend else None
        rounding = backend.precisions.get(r.precision) if backend is not None and r.precision else None
        workdir = case_workdir(workroot, case, r.converter, rounding) if workroot else None
        written.append(write_bundle(results_dir, r, case, workdir=workdir, backend=backend,
                                    environment=environment))
    return written
