"""Backend discovery: the entry-point group `pnnx_conformance.backends`.

A vendor package declares, in its own pyproject.toml,

    [project.entry-points."pnnx_conformance.backends"]
    my-runtime = "my_package.module:MyBackend"

and `pnnx-conformance run --backend my-runtime` finds it. A backend may also be named
"module:Class" directly (handy in tests). See base.Backend for the interface.
"""
from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from ..errors import HarnessError
from .base import Backend

GROUP = "pnnx_conformance.backends"
BUILTIN = {
    "torch": "pnnx_conformance.backends.torch_eager:TorchBackend",
    "pnnx-python": "pnnx_conformance.backends.pnnx_python:PnnxPythonBackend",
    "onnxruntime": "pnnx_conformance.backends.onnxruntime_cpu:OnnxRuntimeBackend",
    "ncnn-cpu": "pnnx_conformance.backends.ncnn_backend:NcnnCpuBackend",
    "ncnn-vulkan": "pnnx_conformance.backends.ncnn_backend:NcnnVulkanBackend",
}
DEFAULT = tuple(BUILTIN)


def discovered() -> dict[str, str]:
    """Every backend name -> "module:Class": the built-ins plus installed plug-ins."""
    found = dict(BUILTIN)
    for ep in entry_points(group=GROUP):
        found[ep.name] = ep.value
    return found


def _import(target: str):
    mod, _, attr = target.partition(":")
    obj = importlib.import_module(mod)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def load_backend(spec: str) -> Backend:
    """An instance of the backend named `spec` (a discovered name or "module:Class")."""
    target = discovered().get(spec) or (spec if ":" in spec else None)
    if target is None:
        raise HarnessError(f"unknown backend {spec!r} (discovered: {', '.join(sorted(discovered()))})")
    try:
        backend = _import(target)()
    except (ImportError, AttributeError) as e:
        raise HarnessError(f"cannot load backend {spec!r} from {target}: {e}") from None
    if not isinstance(backend, Backend):
        raise HarnessError(f"backend {spec!r} ({target}) is not a pnnx_conformance Backend")
    if ":" in spec and not backend.name:
        backend.name = spec
    return backend


__all__ = ["Backend", "GROUP", "BUILTIN", "DEFAULT", "discovered", "load_backend"]
