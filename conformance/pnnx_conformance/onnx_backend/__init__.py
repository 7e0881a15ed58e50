"""The ONNX backend test suite (`onnx.backend.test`, shipped inside the `onnx` package) run
unmodified against the reference converter's ONNX frontend, with onnxruntime's score on the
same tests as the yardstick. `python -m pnnx_conformance.onnx_backend --out reports` writes
`onnx_backend_scores.md` / `.json`."""
