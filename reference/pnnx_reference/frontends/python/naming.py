"""Map a callable seen by the TorchFunctionMode to its Python API path (`F.conv2d`,
`torch.cat`, `Tensor.view`) -- the operator type CONVENTIONS.md asks for."""
from __future__ import annotations

import functools

import torch
import torch.nn.functional as F

# Tensor methods whose upstream operator is the torch function (aten::lt -> torch.lt).
_TENSOR_TO_TORCH = {"lt", "le", "gt", "ge", "eq", "ne", "logical_not", "logical_and",
                    "logical_or", "logical_xor", "__invert__", "matmul"}
_DUNDER_ALIASES = {"__invert__": "bitwise_not", "__iter__": "unbind", "__matmul__": "matmul",
                   "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
                   "__ge__": "ge",
                   "__iadd__": "add", "__isub__": "sub", "__imul__": "mul", "__itruediv__": "div",
                   "__ifloordiv__": "floor_divide", "__imod__": "remainder", "__ipow__": "pow",
                   "__iand__": "__and__", "__ior__": "__or__", "__ixor__": "__xor__",
                   "__ilshift__": "__lshift__", "__irshift__": "__rshift__"}


@functools.lru_cache(maxsize=1)
def _function_table() -> dict[int, str]:
    """id(callable) -> API path; F wins over torch where they are the same object
    (F.conv2d is torch.conv2d)."""
    table: dict[int, str] = {}
    namespaces = (("torch", torch), ("torch.linalg", torch.linalg), ("torch.fft", torch.fft),
                  ("torch.special", torch.special), ("F", F))
    for prefix, namespace in namespaces:
        for name in dir(namespace):
            if name.startswith("_"):
                continue
            obj = getattr(namespace, name, None)
            if callable(obj) and not isinstance(obj, type):
                table[id(obj)] = f"{prefix}.{name}"
    return table


def getter_name(func) -> str | None:
    """`shape` for the `Tensor.shape.__get__` the mode sees, None for other callables."""
    owner = getattr(func, "__self__", None)
    if getattr(func, "__name__", "") == "__get__" and owner is not None:
        return getattr(owner, "__name__", None)
    return None


def api_path(func) -> str | None:
    """The operator type of `func`, or None when it is not a public torch API call."""
    known = _function_table().get(id(func))
    if known is not None:
        return known
    name = getattr(func, "__name__", None)
    qualname = getattr(func, "__qualname__", "") or ""
    if name is None:
        return None
    if qualname.startswith(("TensorBase.", "Tensor.")):
        name = _DUNDER_ALIASES.get(name, name)
        if name.endswith("_") and not name.startswith("_"):
            name = name[:-1]  # in-place form: the tracer rebinds the tensor to the result
        if name in _TENSOR_TO_TORCH or name == "bitwise_not":
            return f"torch.{name}"
        return f"Tensor.{name}"
    return None


def _qualified(func) -> str | None:
    if isinstance(func, torch._ops.OpOverload):
        func = func._overloadpacket
    if isinstance(func, torch._ops.OpOverloadPacket):
        return func._qualified_op_name
    return None


def is_custom_op(func) -> bool:
    qualified = _qualified(func)
    return qualified is not None and qualified.split("::")[0] not in ("aten", "prim", "prims")


def custom_op_type(func) -> str:
    namespace, name = _qualified(func).split("::")
    return f"pnnx.custom_op.{namespace}.{name}"


def custom_op_schema(func):
    if isinstance(func, torch._ops.OpOverload):
        return func._schema
    return func.default._schema if "default" in func.overloads() else getattr(func, func.overloads()[0])._schema


def is_inplace(func) -> bool:
    """`x.add_(1)`, `x += 1`: calls that overwrite their first argument."""
    name = getattr(func, "__name__", "")
    qualname = getattr(func, "__qualname__", "") or ""
    if not qualname.startswith(("TensorBase.", "Tensor.")):
        return False
    if name.startswith("__i") and name.endswith("__") and name[3:-2] in _INPLACE_DUNDERS:
        return True
    return name.endswith("_") and not name.startswith("_")


_INPLACE_DUNDERS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                    "lshift", "rshift", "matmul"}
