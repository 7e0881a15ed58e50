"""`pnnx-conformance onnx-backend-test`: the onnx package's backend tests against our ONNX
frontend and onnxruntime (every argument after the subcommand goes to that command)."""
from __future__ import annotations


def add(sub) -> None:
    o = sub.add_parser("onnx-backend-test", add_help=False,
                       help="the ONNX backend test suite against our ONNX frontend and onnxruntime "
                            "(arguments: python -m pnnx_conformance.onnx_backend --help)")
    o.set_defaults(fn=cmd_onnx_backend_test)


def cmd_onnx_backend_test(args) -> int:
    from ..onnx_backend.__main__ import main as onnx_backend_main

    return onnx_backend_main(args.rest)
