"""Value-dependent conversions: where the traced model turns the *value* of a tensor computed
from its inputs into a Python value (`if x.sum() > 0:`, `int(x.max())`, `x.tolist()`), the
graph keeps the one value of the example inputs and computes something else for other
inputs. The capture refuses them by default with one line naming the conversion and the
user's source line; `allow_value_dependent` accepts them, each with a warning. A two-way one
(`if t:`, `v in t`) whose every outcome records the same graph is accepted with a note
(branches.py: a warning path).

Which operands depend on the input values is tracked by the Tracer: the graph inputs do,
and so does every output of an operator with such an input, except the operators whose
outputs depend on their inputs' shapes only (`VALUE_FREE`). Constants, parameters and sizes
(`x.size(0)`, traced symbolically) do not. Operators whose output *shape* depends on the
values (`shape_deciders`: `torch.nonzero`, boolean-mask indexing, ...) are kept in the graph,
which computes them right for any input, and every dim of such a shape (and of shapes derived
from it) is written unknown (`?`) so that no pass folds the example's size; reading such a
shape as a Python int (`len(t)`, `t.numel()`, `int(t.size(0))`, `t.size(0) > 0`) is a
value-dependent conversion too. Not caught: a value-dependent size used where CPython takes
an int without asking it (`range(t.size(0))`, `lst[t.size(0)]`)."""
from __future__ import annotations

import linecache
import os
import sys
import sysconfig
import warnings

import torch

from ...errors import ConversionError, OtherPath, ValueDependentWarning

# Tensor methods (and torch functions) that hand a tensor's value to Python
CONVERSIONS = {"__bool__": "Tensor.__bool__", "__int__": "int()", "__float__": "float()",
               "__index__": "Tensor.__index__", "__complex__": "complex()", "item": "item()",
               "tolist": "tolist()", "numpy": "numpy()", "__array__": "numpy()",
               "__contains__": "`in`", "equal": "torch.equal", "allclose": "torch.allclose",
               "is_nonzero": "torch.is_nonzero"}
# ... of which these have two outcomes (`if t:`, `v in t`): a branch, which branches.py accepts
# when every outcome records the same graph (a warning path)
BRANCHES = frozenset({"__bool__", "__contains__", "equal", "allclose", "is_nonzero"})
# ... and that hand a tensor's shape to Python as a plain int (or as a number of outputs)
SHAPE_READS = {"numel": "numel()", "nelement": "nelement()", "__len__": "len()",
               "unbind": "unbind()"}  # `for row in t` is `t.unbind()`

# operators whose outputs depend on the shapes of their inputs only
VALUE_FREE = frozenset({"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like",
                        "torch.rand_like", "torch.randn_like", "torch.randint_like", "Tensor.new_zeros",
                        "Tensor.new_ones", "Tensor.new_empty", "Tensor.new_full"})
# operators whose output shape always depends on the input values
VALUE_SHAPED = frozenset({"torch.nonzero", "Tensor.nonzero", "torch.argwhere", "Tensor.argwhere",
                          "torch.masked_select", "Tensor.masked_select", "torch.unique", "Tensor.unique",
                          "torch.unique_consecutive", "Tensor.unique_consecutive", "torch.bincount",
                          "Tensor.bincount"})  # and the cases of `shape_deciders`


def shape_deciders(op_type: str | None, args: tuple, kwargs: dict) -> list:
    """The tensors whose values decide this call's output shape (none for most calls): the
    input of the operators above (`torch.where(cond)` with one argument among them), the
    mask of `masked_select` and of boolean-mask indexing (`x[x > 0]`), the repeats of
    `repeat_interleave`, the bounds of `arange`."""
    if op_type in ("torch.masked_select", "Tensor.masked_select"):
        return [kwargs.get("mask", args[1] if len(args) > 1 else None)]
    if op_type in VALUE_SHAPED or (op_type == "torch.where" and len(args) + len(kwargs) == 1):
        return [kwargs.get("input", args[0] if args else None)]
    if op_type == "torch.arange":  # `torch.arange(x[3], x[4])`: its bounds' values decide its length
        return [*args, *kwargs.values()]
    if op_type in ("torch.repeat_interleave", "Tensor.repeat_interleave") and kwargs.get("output_size") is None:
        return [kwargs.get("repeats", args[1] if len(args) > 1 else args[0] if args else None)]
    if op_type == "Tensor.__getitem__" and len(args) > 1:
        items = args[1] if isinstance(args[1], tuple) else (args[1],)
        return [i for i in items if isinstance(i, torch.Tensor) and i.dtype == torch.bool]
    return []


_OPTION = "accept with allowvaluedependent=1, in the API allow_value_dependent=True"

# code objects at which the search for the user's source line stops (the tracer's entry):
# frames further out called the converter, they are not the model
BOUNDARIES: set = set()
# the TorchScript node being replayed, when the model comes from a .pt file
CURRENT_NODE: list = [None]


def _library_dirs() -> tuple[str, ...]:
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = sysconfig.get_paths()
    return tuple(os.path.join(os.path.abspath(d), "") for d in
                 (os.path.dirname(torch.__file__), here, paths["stdlib"], paths["platstdlib"]))


def user_source() -> str | None:
    """`file:line: code` of the innermost frame in the user's code, or None."""
    skip = _library_dirs()
    frame = sys._getframe(1)
    while frame is not None and frame.f_code not in BOUNDARIES:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(skip) and not frame.f_code.co_filename.startswith("<"):
            code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            return f"{frame.f_code.co_filename}:{frame.f_lineno}: `{code}`" if code else \
                f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return _torchscript_source()


def _torchscript_source() -> str | None:
    node = CURRENT_NODE[0]
    if node is None:
        return None
    try:
        first = next((line.strip() for line in str(node.sourceRange()).splitlines() if line.strip()), "")
    except Exception:  # a node without source information
        first = ""
    return f"TorchScript {node.kind()}" + (f" from {first[:160]}" if first else "")


class ValueDependence:
    """The policy of one capture: refuse (raise ConversionError) or accept (warn, remember).
    A branch (BRANCHES) is neither yet: it takes the example's outcome, or the one `forced`
    gives it (a trace that proves the graph the same either way, branches.py), and is
    remembered in `branches` as (where and what, outcome)."""

    def __init__(self, allow: bool = False, forced: list[bool] | None = None) -> None:
        self.allow = allow
        self.forced = forced
        self.accepted: list[str] = []
        self.refused: list[str] = []   # kept in case the model catches the exception
        self.branches: list[tuple[str, bool]] = []

    def conversion(self, what: str) -> None:
        """`what` (e.g. "int() of a tensor computed from the inputs") happens now."""
        where = user_source() or "the model"
        if not self.allow:
            self.refused.append(refusal(f"{where}: {what}"))
            raise ConversionError(self.refused[-1])
        message = f"{where}: {what}: kept as the value of the example inputs (value-dependent, accepted)"
        if message not in self.accepted:
            self.accepted.append(message)
            warnings.warn(message, ValueDependentWarning, stacklevel=2)

    def branch(self, what: str, outcome: bool) -> bool:
        """A two-way conversion whose value is `outcome` on the example inputs: the outcome
        this trace takes."""
        if self.allow:
            self.conversion(what)
            return outcome
        if self.forced is not None:
            if len(self.branches) == len(self.forced):
                raise OtherPath(what)
            outcome = self.forced[len(self.branches)]
        self.branches.append((f"{user_source() or 'the model'}: {what}", outcome))
        return outcome


def refusal(where_what: str) -> str:
    return (f"{where_what}: value-dependent, the converted model would keep the example inputs' value "
            f"for every input ({_OPTION})")
