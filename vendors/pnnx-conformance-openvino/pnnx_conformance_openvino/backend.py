"""OpenVINO's CPU plug-in running the reference converter's pnnx.onnx.

Precision modes: "fp32" compiles with INFERENCE_PRECISION_HINT f32; "default" compiles with
no hint, so the CPU plug-in picks its own inference precision (bf16 on CPUs with native bf16,
else f32): the harness pre-rounds the oracle's weights and inputs to what that resolves to on
this machine. One inference thread and one stream per worker (the harness's --jobs workers
are the parallelism).
"""
from __future__ import annotations

import re

import numpy as np

from pnnx_conformance.backends.base import Backend
from pnnx_conformance.backends.plugin_kit import (case_outputs, complex_positions, real_inputs,
                                                  require, runtime_error)

PIP = "openvino==2026.4.1"
DEVICE = "CPU"
# OpenVINO's exceptions open with where they were thrown, then wrappers; the cause is below
NOISE = (r"^Exception from \S+:\d+:?$", r"^Check '.*' failed at \S+:\d+:?$", r"^\[ ?GENERAL_ERROR ?\]\s*$",
         r"^While validating (ONNX )?node", r"FrontEnd API failed with \w+:?$", r"^Model wasn't fully converted",
         r"^-- \S+ with a message:$")
# the inference precision OpenVINO reports -> the oracle's rounding (None: plain fp32)
ROUNDING = {"f32": None, "float32": None, "bf16": "bf16", "bfloat16": "bf16", "f16": "fp16", "float16": "fp16"}


def rounding_of(element_type) -> str | None:
    """The oracle rounding for an OpenVINO inference precision (<Type: 'bfloat16'>, "f32", ...)."""
    words = re.findall(r"[a-z0-9]+", str(element_type).lower())
    for word in reversed(words):
        if word in ROUNDING:
            return ROUNDING[word]
    raise ValueError(f"unknown OpenVINO inference precision {element_type!r}")


def compile_config(precision: str, threads: int = 1) -> dict:
    """The properties a case is compiled with in each precision mode."""
    config = {"INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1}
    if precision == "fp32":
        return {**config, "INFERENCE_PRECISION_HINT": "f32"}
    if precision == "default":
        return config
    raise ValueError(f"no precision mode {precision!r}")


class OpenVinoCpuBackend(Backend):
    name = "openvino-cpu"
    runtime = "openvino"
    consumes = ("pnnx.onnx",)
    threads = 1

    def __init__(self) -> None:
        self.ov = require("openvino", PIP)
        self.core = self.ov.Core()
        hint = self.core.get_property(DEVICE, "INFERENCE_PRECISION_HINT")
        self.default_precision = hint.get_type_name() if hasattr(hint, "get_type_name") else str(hint)
        self.precisions = {"fp32": None, "default": rounding_of(self.default_precision)}
        self.device = f"{DEVICE}: {self.core.get_property(DEVICE, 'FULL_DEVICE_NAME')}"
        self.request = self.model = None

    def prepare(self, artefacts, precision):
        path = artefacts.paths["pnnx.onnx"]
        self.complex_inputs, self.complex_outputs = complex_positions(path)
        self.config = compile_config(precision, self.threads)
        self.request = None
        try:
            self.model = self.core.read_model(str(path))
        except Exception as e:
            raise runtime_error(e, NOISE) from None

    def compile(self):
        try:
            compiled = self.core.compile_model(self.model, DEVICE, self.config)
        except Exception as e:
            raise runtime_error(e, NOISE) from None
        self.request = compiled.create_infer_request()
        self.n_inputs, self.n_outputs = len(compiled.inputs), len(compiled.outputs)

    def run(self, inputs):
        if len(inputs) != self.n_inputs:
            raise RuntimeError(f"model has {self.n_inputs} inputs, case gives {len(inputs)}")
        feeds = real_inputs(inputs, self.complex_inputs)
        try:
            self.request.infer({i: self.ov.Tensor(x) for i, x in enumerate(feeds)})
            outputs = [np.array(self.request.get_output_tensor(i).data) for i in range(self.n_outputs)]
        except Exception as e:
            raise runtime_error(e, NOISE) from None
        return case_outputs(outputs, self.complex_outputs)

    def release(self):
        self.request = self.model = None

    def describe(self):
        return {"name": self.name, "version": self.ov.get_version(), "device": self.device,
                "precisions": {"fp32": "f32 (INFERENCE_PRECISION_HINT=f32)",
                               "default": f"the CPU plug-in's default: {self.default_precision}"},
                "threads": self.threads}

