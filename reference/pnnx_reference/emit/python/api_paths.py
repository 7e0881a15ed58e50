"""Which operator types the generator may call: a closed allowlist over the PyTorch API.

A type is a dotted path under one root (`nn.`, `F.`, `torch.`, `Tensor.`, `torchvision.ops.`).
Each path is resolved against the installed torch and must name a public callable of the
expected kind; file- and network-touching functions are refused (a param file could otherwise
ask for `torch.load(f='...')` or `torch.hub.load(...)`)."""
from __future__ import annotations

import re

from pnnx_reference.errors import InvalidGraph

_PATH = re.compile(r"[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+\Z")
# submodules of torch whose functions are pure tensor maths
_TORCH_SUBMODULES = {"fft", "linalg", "special", "nn.functional"}
_DENIED = {"load", "save", "from_file", "compile", "set_default_device", "set_default_dtype",
           "set_default_tensor_type", "set_printoptions", "set_num_threads", "manual_seed", "seed",
           "use_deterministic_algorithms", "tofile", "share_memory_", "register_hook", "storage",
           "untyped_storage", "set_", "backward", "data_ptr", "import_ir_module",
           "import_ir_module_from_buffer", "get_file_path", "prepare_multiprocessing_environment",
           "module_load", "map_", "map2_", "apply_", "register_post_accumulate_grad_hook",
           # nn containers hold other modules; they are never one operator
           "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
           "Container"}


def _roots():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    return {"nn": nn, "F": F, "torch": torch, "Tensor": torch.Tensor}


def check_api_type(op_type: str, op_name: str) -> str:
    """Return `op_type` if it is an allowed callable API path, else raise InvalidGraph."""
    if not isinstance(op_type, str) or not _PATH.match(op_type):
        raise InvalidGraph(f"operator {op_name!r}: type {op_type!r} is not a PyTorch API path")
    root, _, rest = op_type.partition(".")
    if root == "torchvision":
        return _check_torchvision(op_type, rest, op_name)
    roots = _roots()
    if root not in roots:
        raise InvalidGraph(f"operator {op_name!r}: unknown operator type {op_type!r}")
    parts = rest.split(".")
    if root == "torch" and len(parts) > 1 and ".".join(parts[:-1]) not in _TORCH_SUBMODULES:
        raise InvalidGraph(f"operator {op_name!r}: torch submodule of {op_type!r} is not allowed")
    if root != "torch" and len(parts) > 1:
        raise InvalidGraph(f"operator {op_name!r}: unknown operator type {op_type!r}")
    if root == "Tensor":
        parts = [tensor_method_name(op_type)]
    _check_member(roots[root], parts, op_type, op_name, module_class=(root == "nn"))
    return op_type


def tensor_method_name(op_type: str) -> str:
    """`Tensor.fill` -> `fill_`: upstream drops the in-place underscore where torch.Tensor has
    no out-of-place method of that name (`fill`, `copy`, `zero`)."""
    import torch

    name = op_type.split(".", 1)[1]
    if not hasattr(torch.Tensor, name) and hasattr(torch.Tensor, name + "_"):
        return name + "_"
    return name


def _check_torchvision(op_type: str, rest: str, op_name: str) -> str:
    parts = rest.split(".")
    if len(parts) != 2 or parts[0] != "ops":
        raise InvalidGraph(f"operator {op_name!r}: only torchvision.ops.* is allowed, not {op_type!r}")
    try:
        import torchvision
    except ImportError:
        raise InvalidGraph(f"operator {op_name!r}: {op_type} needs torchvision") from None
    _check_member(torchvision.ops, parts[1:], op_type, op_name, module_class=parts[1][:1].isupper())
    return op_type


def _check_member(obj, parts: list[str], op_type: str, op_name: str, module_class: bool) -> None:
    import inspect

    import torch.nn as nn

    for part in parts:
        if part.startswith(("_", "set_")) or part in _DENIED:  # set_*: global state
            raise InvalidGraph(f"operator {op_name!r}: {op_type!r} is not allowed")
        obj = getattr(obj, part, None)
        if obj is None:
            raise InvalidGraph(f"operator {op_name!r}: unknown operator type {op_type!r}")
    if module_class:
        if not (inspect.isclass(obj) and issubclass(obj, nn.Module)):
            raise InvalidGraph(f"operator {op_name!r}: {op_type!r} is not an nn.Module class")
    elif inspect.ismodule(obj) or inspect.isclass(obj) or not callable(obj):
        raise InvalidGraph(f"operator {op_name!r}: {op_type!r} is not a function")
