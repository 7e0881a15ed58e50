"""Parameter values as Python source: every string goes through repr(), dtype names come
from a closed table, numbers are written exactly (repr), so a param file cannot inject code."""
from __future__ import annotations

import math

from pnnx_reference.emit.python.names import check_keyword_name
from pnnx_reference.errors import InvalidGraph
from pnnx_reference.expression import DTYPE_NAMES

# upstream's param reader keeps these as strings; the generated call needs the float
_FLOAT_WORDS = {"inf": "float('inf')", "-inf": "float('-inf')", "nan": "float('nan')"}


def render_value(value) -> str:
    if value is None or isinstance(value, bool) or isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return f"float('{value}')"
        return _float_text(value)
    if isinstance(value, complex):
        return repr(value)
    if isinstance(value, str):
        if value in DTYPE_NAMES:
            return value
        return _FLOAT_WORDS.get(value, repr(value))
    if isinstance(value, (list, tuple)):
        items = [render_value(v) for v in value]
        return "(" + items[0] + ",)" if len(items) == 1 else "(" + ", ".join(items) + ")"
    raise InvalidGraph(f"cannot write parameter value {value!r}")


def _float_text(value: float) -> str:
    """Shortest text; a float32-exact value (as read from pnnx.param) gets its shortest float32
    spelling, which is the double the user most likely wrote (`0.1`, not `0.10000000149011612`),
    except where that double lies past float32's largest (`-3.4028235e+38` for finfo.min, which
    torch refuses to convert to a float32 tensor's scalar: "without overflow")."""
    import numpy as np

    narrow = np.float32(value)
    if float(narrow) == value:
        text = repr(float(str(narrow)))
        if float(np.float32(float(text))) == value and abs(float(text)) <= float(np.finfo(np.float32).max):
            return text
    return repr(value)


def render_kwargs(params: dict, op_name: str, skip=(), as_tensor=()) -> list[str]:
    """`key=value` strings in key order (upstream writes them alphabetically); a scalar param
    named in `as_tensor` is wrapped in `torch.tensor(...)` (arguments that must be tensors)."""
    return [f"{check_keyword_name(k, 'parameter', op_name)}={_param_text(params[k], k in as_tensor)}"
            for k in sorted(params) if k not in skip]


def _param_text(value, as_tensor: bool) -> str:
    text = render_value(value)
    scalar = isinstance(value, (int, float, complex)) and not isinstance(value, bool)
    return f"torch.tensor({text})" if as_tensor and scalar else text


def render_shape(shape) -> str:
    """A shape tuple literal: `(1, 3, 8)`, `(4,)`, `()`."""
    dims = [str(int(d)) for d in shape]
    return "(" + dims[0] + ",)" if len(dims) == 1 else "(" + ", ".join(dims) + ")"
