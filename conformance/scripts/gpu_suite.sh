#!/usr/bin/env bash
# The conformance suite on a machine with a real GPU, as published under reports/<device>/:
# the smoke tier through both converters and every backend, the model zoo, the full tier
# through the reference converter, and an ncnn-vulkan certificate. Run it where the project
# is installed (`pip install -e .` beside the pinned requirements) and ncnn sees the GPU.
#
#   conformance/scripts/gpu_suite.sh OUT [JOBS]
#   pnnx-conformance report --results OUT/smoke --out reports/<device>   # publish
set -u
out=${1:?usage: conformance/scripts/gpu_suite.sh OUT [JOBS]}
jobs=${2:-$(nproc)}
# GPU drivers reserve large address ranges: the harness's per-worker RLIMIT_AS would
# starve them, so it is off here (--memory-mb 0); a worker that dies is still recorded.
limits=(--jobs "$jobs" --memory-mb 0)

python3 -c "import ncnn, sys; n = ncnn.get_gpu_count(); sys.exit(0 if n else 1)" \
  || { echo "error: ncnn sees no Vulkan device on this machine" >&2; exit 1; }

status=0
step() {  # step NAME COMMAND...: run it, time it, remember a failure and go on
  local name=$1; shift
  local start=$SECONDS
  echo "== $name"
  "$@" || { echo "error: $name failed" >&2; status=1; }
  echo "== $name: $((SECONDS - start)) s"
}
for conv in reference upstream; do
  step "smoke $conv" pnnx-conformance run --tier smoke --max-cases 0 --converter "$conv" "${limits[@]}" \
    --out "$out/smoke/$conv" -q
done
step "model zoo" python3 -m pnnx_model_zoo.run --out "$out/smoke/models" --jobs "$jobs"
step "full reference" pnnx-conformance run --tier full --converter reference "${limits[@]}" \
  --out "$out/full/reference" -q
step "certify ncnn-vulkan" pnnx-conformance certify --backend ncnn-vulkan --tier smoke --max-cases 0 \
  --jobs "$jobs" --out "$out/certificate" -q
exit $status
