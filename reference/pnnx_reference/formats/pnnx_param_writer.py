"""pnnx.param text of a graph, byte for byte as upstream HEAD writes it: `%-24s %-24s %d %d`
columns, params and attrs sorted bytewise, `$` keys only when every input is named, `#`
annotations for inputs then outputs.

It reads the graph's attributes only; the reader (pnnx_param.py) builds ir objects."""
from __future__ import annotations

from ..ir import NULL_DTYPE, UNKNOWN_DIM
from .pnnx_values import encode_value

MAGIC = "7767517"


def _check_token(kind: str, text: str) -> str:
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"{kind} {text!r} is empty or contains whitespace")
    return text


def _check_key(kind: str, text: str) -> str:
    """Keys (and operand names, which become `#name=` keys) cannot hold `=`, and a
    parameter key cannot start with the `@`, `$`, `#` markers."""
    _check_token(kind, text)
    if "=" in text or (kind == "param key" and text[0] in "@$#"):
        raise ValueError(f"{kind} {text!r} cannot be written (contains '=' or starts with @, $ or #)")
    return text


def _encode_shape(shape, dtype: str | None) -> str:
    dims = ",".join("?" if d == UNKNOWN_DIM else str(int(d)) for d in shape)
    return f"({dims}){dtype or NULL_DTYPE}"


def _shape_tokens(operands) -> list[str]:
    return [f"#{o.name}={_encode_shape(o.shape, o.dtype)}" for o in operands if o.shape]


def _input_key_tokens(op) -> list[str]:
    if len(op.inputnames) != len(op.inputs):
        return []
    return [f"${_check_key('input name', key)}={o.name}" for key, o in zip(op.inputnames, op.inputs) if key]


def dump_operator(op) -> str:
    """One operator line, without the newline."""
    head = "%-24s %-24s %d %d" % (_check_token("operator type", op.type),
                                  _check_token("operator name", op.name),
                                  len(op.inputs), len(op.outputs))
    tokens = [_check_key("operand name", o.name) for o in op.inputs + op.outputs]
    tokens += [f"{_check_key('param key', k)}={encode_value(op.params[k])}" for k in sorted(op.params)]
    tokens += [f"@{_check_key('attribute key', k)}={_encode_shape(a.shape, a.dtype)}"
               for k, a in sorted(op.attrs.items())]
    tokens += _input_key_tokens(op)
    tokens += _shape_tokens(op.inputs + op.outputs)
    return " ".join([head] + tokens)


def dumps(graph) -> str:
    """The pnnx.param text of `graph`. Raises ValueError for values the format cannot hold."""
    lines = [MAGIC, f"{len(graph.ops)} {len(graph.operands)}"]
    for op in graph.ops:
        try:
            lines.append(dump_operator(op))
        except ValueError as err:  # name the operator the value belongs to
            raise ValueError(f"{op.type} {op.name}: {err}") from None
    return "\n".join(lines) + "\n"
