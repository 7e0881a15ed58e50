"""The runtime scoreboard (reports/runtimes/): third-party runtimes' plug-ins (vendors/*) run on
the smoke tier through the reference converter's pnnx.onnx, scored per precision mode and
operator family, each failure reason attributed by running onnxruntime on the same case.

    python -m pnnx_conformance.runtimes collect build/runtimes/openvino-cpu --out reports/runtimes
    python -m pnnx_conformance.runtimes yardstick --out reports/runtimes
    python -m pnnx_conformance.runtimes publish --out reports/runtimes [--check]

`collect` keeps a run's parity records (compact, like reports/results.jsonl.gz) and its
run/summary/environment files, and files its totals in the scoreboard's history; `yardstick`
runs onnxruntime on every case some runtime fails; `publish` writes scoreboard.md and
scoreboard.html from the committed files alone.
"""

# backend name -> (what it is, the tox environment its plug-in runs in)
RUNTIMES = {
    "openvino-cpu": ("OpenVINO, CPU plug-in", "openvino"),
    "mnn-cpu": ("MNN (its converter, then its runtime), CPU", "mnn"),
    "tvm-llvm": ("Apache TVM, Relax compiled for llvm (CPU)", "tvm"),
}
CONVERTER = "reference"
YARDSTICK = "onnxruntime"
