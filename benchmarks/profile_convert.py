"""Profile of one `.pt` conversion, phase by phase: imports, load, example inputs, capture
(trace), passes, each writer, self-check, the rest (statistics, moving the files into place).

The model is traced to a `.pt` in a separate process first (torchvision stays out of this
one), then this process does exactly what `pnnxref MODEL.pt inputshape=...` does, with each
phase's functions wrapped in a timer. Peak memory is this process's maximum resident size.

    python benchmarks/profile_convert.py [--model resnet18] [--cprofile 25] [--json out.json]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRACE = """
import sys, torch, torchvision
torch.manual_seed(0)
model = getattr(torchvision.models, sys.argv[1])(weights=None).eval()
torch.jit.trace(model, torch.rand(1, 3, 224, 224)).save(sys.argv[2])
"""


PROBES = "  of which: argument-order probes"  # inside capture: the ambiguous module calls' orders, checked
CHECK = "check against the script (once)"  # after the capture: the rebuilt model's outputs against the script's


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Phases:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.peak_mb: dict[str, float] = {}  # the process's peak resident memory when the phase last ended

    @contextlib.contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
            self.peak_mb[name] = peak_mb()

    def wrap(self, owner, attr: str, name: str) -> None:
        """Time every call of `owner.attr` as phase `name` (nested calls count once)."""
        inner = getattr(owner, attr)
        depth = [0]

        def timed(*args, **kwargs):
            if depth[0]:
                return inner(*args, **kwargs)
            depth[0] += 1
            try:
                with self.phase(name):
                    return inner(*args, **kwargs)
            finally:
                depth[0] -= 1
        setattr(owner, attr, timed)


def convert(phases: Phases, pt: Path, shape: str) -> None:
    from pnnx_reference.cli import return_large_blocks

    return_large_blocks()  # as the pnnxref command does before anything else
    with phases.phase("import torch"):
        import torch  # noqa: F401
    with phases.phase("import pnnx_reference"):
        from pnnx_reference import api, cli, selfcheck
        from pnnx_reference.formats import pnnx_param
    phases.wrap(cli, "load_model", "load .pt")
    phases.wrap(api, "trace", "capture (trace)")
    from pnnx_reference.frontends.torchscript import argorder
    phases.wrap(argorder, "python_args", PROBES)
    from pnnx_reference.frontends.torchscript.rebuilt import Replay
    phases.wrap(Replay, "_reproduces", CHECK)
    phases.wrap(api, "run_passes", "passes")
    phases.wrap(pnnx_param, "save", "write pnnx.param/bin")
    phases.wrap(api, "write_python", "write _pnnx.py")
    phases.wrap(api, "write_ncnn", "write ncnn.param/bin, _ncnn.py")
    phases.wrap(selfcheck, "check", "self-check")
    with phases.phase("import onnx emitter"):  # what api's onnx writer imports on first use
        import pnnx_reference.emit.onnx as onnx_emitter
    phases.wrap(onnx_emitter, "write_onnx", "write pnnx.onnx")
    with phases.phase("pnnxref (all)"):
        code = cli.main([str(pt), f"inputshape={shape}"])
    if code:
        raise SystemExit(f"error: pnnxref {pt} failed ({code})")


ORDER = ("import torch", "import pnnx_reference", "import onnx emitter", "load .pt", "capture (trace)", PROBES,
         CHECK, "passes", "write pnnx.param/bin", "write _pnnx.py", "write pnnx.onnx", "write ncnn.param/bin, _ncnn.py",
         "self-check")
REST = "rest of pnnxref (inputs, statistics, staging)"


def table(phases: Phases, total: float) -> list[str]:
    seconds = {k: phases.seconds[k] for k in ORDER if k in phases.seconds}
    inside = sum(v for k, v in seconds.items() if not k.startswith("import") and k != PROBES)
    seconds[REST] = phases.seconds["pnnxref (all)"] - inside
    lines = [f"{'phase':48} {'seconds':>8} {'share':>6} {'peak MB':>8}"]
    for name, value in seconds.items():
        peak = phases.peak_mb.get(name, phases.peak_mb["pnnxref (all)"])
        lines.append(f"{name:48} {value:8.2f} {100 * value / total:5.1f}% {peak:8.0f}")
    lines.append(f"{'whole process (interpreter start not counted)':48} {total:8.2f} 100.0% {peak_mb():8.0f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet18", help="a torchvision.models name")
    parser.add_argument("--shape", default="[1,3,224,224]")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="also print the N costliest functions")
    parser.add_argument("--json", help="write the phases as JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        pt = Path(tmp) / f"{args.model}.pt"
        subprocess.run([sys.executable, "-c", TRACE, args.model, str(pt)], check=True)
        phases = Phases()
        profiler = None
        if args.cprofile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        begin = time.perf_counter()
        convert(phases, pt, args.shape)
        total = time.perf_counter() - begin
        if profiler is not None:
            import pstats

            profiler.disable()
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.cprofile)
    print(f"{args.model}.pt, one conversion (pnnxref {args.model}.pt inputshape={args.shape}), phase by phase")
    print("\n".join(table(phases, total)))
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "seconds": phases.seconds, "total": total,
                                               "peak_mb": phases.peak_mb}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
