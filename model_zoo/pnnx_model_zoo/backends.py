"""ncnn backends for whole networks: fp32 arithmetic on fp16-exact data.

The zoo converts with `fp16=1` (upstream's default: ncnn.bin weights stored as fp16), so
the oracle, the converted model and the inputs are all rounded through fp16 first
(`model.half().float()`, as upstream's own tests do). With every fp16/bf16 option off, what
remains is the difference between ncnn's fp32 kernels and torch's.
"""
from __future__ import annotations

from pnnx_conformance.backends.ncnn_backend import NcnnCpuBackend, NcnnVulkanBackend


class ZooNcnnCpu(NcnnCpuBackend):
    precisions = {"fp32": "fp16"}


class ZooNcnnVulkan(NcnnVulkanBackend):
    precisions = {"fp32": "fp16"}
