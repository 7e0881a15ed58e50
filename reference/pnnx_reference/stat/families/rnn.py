"""Recurrent layers: per time step and batch row, the input and recurrent products of every
gate (two operations per multiply-accumulate), the biases, and the gates' element-wise work."""
from __future__ import annotations

from ..registry import Count, moved, rule

# gates per hidden unit, element-wise operations per hidden unit and step
_GATES = {"nn.RNN": (1, 1), "nn.GRU": (3, 8), "nn.LSTM": (4, 10)}


@rule(*_GATES)
def _rnn(op) -> Count:
    gates_per_unit, elementwise = _GATES[op.type]
    hidden, size = int(op.params["hidden_size"]), int(op.params["input_size"])
    projection = int(op.params.get("proj_size", 0) or 0)
    directions = 2 if op.params.get("bidirectional") is True else 1
    bias = op.params.get("bias") is not False
    x = op.inputs[0].shape
    steps = x[0] if len(x) == 2 else x[0] * x[1]  # (T, I) unbatched; (T, B, I) or (B, T, I)
    gates, recurrent = gates_per_unit * hidden, projection or hidden
    flops = 0
    for layer in range(int(op.params.get("num_layers", 1))):
        width = size if layer == 0 else recurrent * directions
        step = 2 * width * gates + 2 * recurrent * gates + 2 * gates * bias + elementwise * hidden
        step += 2 * hidden * projection
        flops += directions * steps * step
    return Count(flops, moved(op))
