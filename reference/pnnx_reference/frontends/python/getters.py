"""Tensor attributes read through the mode (naming.getter_name): `x.shape` is traced sizes,
`x.T` / `x.mT` / `x.real` / `x.imag` are the operators they equal, `x.data` is `x` itself."""
from __future__ import annotations

import torch

from ...errors import ConversionError
from .recorder import Recorder

_TRANSPOSE_GETTERS = {
    "T": lambda ndim: ("Tensor.permute", {"dims": list(range(ndim - 1, -1, -1))}),
    "mT": lambda ndim: ("torch.transpose", {"dim0": -2, "dim1": -1}),
}


def getter(rec: Recorder, func, name: str, args):
    result = func(*args)
    if name == "shape":
        return rec.size(args[0], result)
    if isinstance(result, torch.Tensor) and isinstance(args[0], torch.Tensor):
        if name in ("data",):
            rec.rebind(result, rec.operand_of(args[0]))
            return result
        if name in ("real", "imag"):  # x.real is torch.real(x)
            rec.add(f"torch.{name}", [rec.operand_of(args[0])], ["input"], {}, [result])
            return result
        if name in _TRANSPOSE_GETTERS:  # x.T / x.mT are the permute / transpose calls
            op_type, params = _TRANSPOSE_GETTERS[name](args[0].dim())
            rec.add(op_type, [rec.operand_of(args[0])], ["input"], params, [result])
            return result
        raise ConversionError(f"Tensor.{name} is not supported by the capture yet")
    return result
