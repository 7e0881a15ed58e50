"""Recurrent layers: nn.LSTM / nn.GRU / nn.RNN -> one ONNX LSTM / GRU / RNN node per layer.

ONNX orders gates differently (LSTM i,o,f,c vs torch i,f,g,o; GRU z,r,h vs torch r,z,n), so the
weights are re-packed once at export. Sequence-major X is used (onnxruntime's CPU kernels do
not take layout=1), with a Transpose around the stack when batch_first."""
from __future__ import annotations

import numpy as np

from ..registry import Unsupported, lowering

_GATES = {"nn.LSTM": (4, [0, 3, 1, 2]), "nn.GRU": (3, [1, 0, 2]), "nn.RNN": (1, [0])}
_ONNX_OP = {"nn.LSTM": "LSTM", "nn.GRU": "GRU", "nn.RNN": "RNN"}


def _pack(op, layer: int, directions: int, gates: int, order: list[int]):
    """W, R, B for one layer, stacked over directions, gates in ONNX order."""
    ws, rs, bs = [], [], []
    for d in range(directions):
        suffix = f"_l{layer}" + ("_reverse" if d else "")
        w = op.attrs[f"weight_ih{suffix}"].to_numpy()
        r = op.attrs[f"weight_hh{suffix}"].to_numpy()
        h = r.shape[1]
        reorder = lambda a: np.concatenate([a[g * h:(g + 1) * h] for g in order])  # noqa: E731
        ws.append(reorder(w))
        rs.append(reorder(r))
        if f"bias_ih{suffix}" in op.attrs:
            bs.append(np.concatenate([reorder(op.attrs[f"bias_ih{suffix}"].to_numpy()),
                                      reorder(op.attrs[f"bias_hh{suffix}"].to_numpy())]))
    bias = np.stack(bs) if bs else None
    return np.stack(ws), np.stack(rs), bias


def _check(b, op):
    p = op.params
    if p.get("proj_size", 0):
        raise Unsupported("proj_size > 0")
    if b.rank(op.inputs[0]) != 3:
        raise Unsupported("unbatched input")


def _attrs(op, directions: int) -> dict:
    attrs = {"hidden_size": int(op.params["hidden_size"]),
             "direction": "bidirectional" if directions == 2 else "forward"}
    if op.type == "nn.GRU":
        attrs["linear_before_reset"] = 1  # torch applies r after the hidden matmul
    if op.type == "nn.RNN":
        act = "Relu" if op.params.get("nonlinearity", "tanh") == "relu" else "Tanh"
        attrs["activations"] = [act] * directions
    return attrs


def _initial_states(b, op, layers: int, directions: int) -> list[list[str]]:
    """h0 (and c0) as given to torch, (layers*dirs, batch, hidden), cut into one per layer."""
    states = []
    for operand in op.inputs[1:]:
        if layers == 1:
            states.append([operand.name])
            continue
        parts = b.node("Split", [operand.name, b.const([directions] * layers, hint="split")],
                       layers, axis=0)
        states.append(parts)
    return states


@lowering("nn.LSTM", "nn.GRU", "nn.RNN")
def recurrent(b, op):
    _check(b, op)
    gates, order = _GATES[op.type]
    directions = 2 if op.params.get("bidirectional") else 1
    batch_first = bool(op.params.get("batch_first"))
    layers = int(op.params.get("num_layers", 1))
    states = _initial_states(b, op, layers, directions)
    n_states = 2 if op.type == "nn.LSTM" else 1
    x = b.node("Transpose", [b.x(op)], perm=[1, 0, 2]) if batch_first else b.x(op)
    finals: list[list[str]] = [[] for _ in range(n_states)]
    for layer in range(layers):
        w, r, bias = _pack(op, layer, directions, gates, order)
        name = f"{op.name}.l{layer}"
        inputs = [x, b.weight(w, f"{name}.W"), b.weight(r, f"{name}.R"),
                  b.weight(bias, f"{name}.B") if bias is not None else "", ""]
        inputs += [s[layer] for s in states]
        while inputs[-1] == "":
            inputs.pop()
        y, *hc = b.node(_ONNX_OP[op.type], inputs, 1 + n_states, **_attrs(op, directions))
        cell = b.nodes[-1]
        for acc, value in zip(finals, hc):
            acc.append(value)
        x = _sequence_output(b, y, directions)
    if batch_first:
        b.node("Transpose", [x], b.y(op), perm=[1, 0, 2])
    else:  # x is the output of the last node (Squeeze or Reshape): name it after the op
        b.nodes[-1].output[0] = b.y(op)
    for i, (out, values) in enumerate(zip(op.outputs[1:], finals)):
        if layers == 1:  # the cell's own Y_h / Y_c are torch's h_n / c_n
            cell.output[1 + i] = out.name
        elif out.consumers:
            b.node("Concat", values, out.name, axis=0)


def _sequence_output(b, y: str, directions: int) -> str:
    """ONNX Y is (seq, dir, batch, hidden); torch wants (seq, batch, dir*hidden)."""
    if directions == 1:
        return b.node("Squeeze", [y, b.const([1], hint="axes")])
    moved = b.node("Transpose", [y], perm=[0, 2, 1, 3])
    return b.node("Reshape", [moved, b.const([0, 0, -1], hint="shape")])
