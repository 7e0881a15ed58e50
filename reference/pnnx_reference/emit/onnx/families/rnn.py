"""Recurrent layers: nn.LSTM / nn.GRU / nn.RNN -> one ONNX LSTM / GRU / RNN node per layer;
nn.LSTMCell / nn.GRUCell / nn.RNNCell -> the same node over a one-step sequence; the functional
torch.gru / torch.rnn_tanh / torch.rnn_relu (recorded with their weights as graph inputs) as
the nn.GRU / nn.RNN they compute.

ONNX orders gates differently (LSTM i,o,f,c vs torch i,f,g,o; GRU z,r,h vs torch r,z,n), so the
weights are re-packed once at export. Sequence-major X is used (onnxruntime's CPU kernels do
not take layout=1), with a Transpose around the stack when batch_first."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ....ir import Operator
from ..builder import constant_attribute
from ..registry import LOWERINGS

_KIND = {"nn.LSTM": "LSTM", "nn.GRU": "GRU", "nn.RNN": "RNN",
         "nn.LSTMCell": "LSTM", "nn.GRUCell": "GRU", "nn.RNNCell": "RNN"}

_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}


def _pack(op, suffixes: list[str], order: list[int]):
    """W, R, B stacked over directions (one suffix each), gates in ONNX order."""
    ws, rs, bs = [], [], []
    for suffix in suffixes:
        w = op.attrs[f"weight_ih{suffix}"].to_numpy()
        r = op.attrs[f"weight_hh{suffix}"].to_numpy()
        h = r.shape[1]
        reorder = lambda a: np.concatenate([a[g * h:(g + 1) * h] for g in order])  # noqa: E731
        ws.append(reorder(w))
        rs.append(reorder(r))
        if f"bias_ih{suffix}" in op.attrs:
            bs.append(np.concatenate([reorder(op.attrs[f"bias_ih{suffix}"].to_numpy()),
                                      reorder(op.attrs[f"bias_hh{suffix}"].to_numpy())]))
    return np.stack(ws), np.stack(rs), (np.stack(bs) if bs else None)


def _attrs(op, kind: str, hidden: int, directions: int) -> dict:
    attrs = {"hidden_size": hidden,
             "direction": "bidirectional" if directions == 2 else "forward"}
    if kind == "GRU":
        attrs["linear_before_reset"] = 1  # torch applies r after the hidden matmul
    if kind == "RNN":
        act = "Relu" if op.params.get("nonlinearity", "tanh") == "relu" else "Tanh"
        attrs["activations"] = [act] * directions
    return attrs


def _cell_node(ctx, op, x: str, suffixes, states: list[str], directions: int, name: str):
    """One ONNX recurrent node; returns (Y, [Y_h(, Y_c)]) and the node itself."""
    kind = _KIND[op.type]
    w, r, bias = _pack(op, suffixes, _ORDER[kind])
    inputs = [x, ctx.weight(w, f"{name}.W"), ctx.weight(r, f"{name}.R"),
              ctx.weight(bias, f"{name}.B") if bias is not None else "", ""] + states
    while inputs[-1] == "":
        inputs.pop()
    n_states = 2 if kind == "LSTM" else 1
    y, *hc = ctx.node(kind, inputs, 1 + n_states, **_attrs(op, kind, r.shape[2], directions))
    return y, hc, ctx.nodes[-1]


def _initial_states(ctx, op, layers: int, directions: int, batch_axis: str | None):
    """h0 (and c0) as given to torch, (layers*dirs, batch, hidden), cut into one per layer."""
    states = []
    for operand in op.inputs[1:]:
        name = operand.name
        if batch_axis is not None:
            name = ctx.node("Unsqueeze", [name, batch_axis])
        parts = [name] if layers == 1 else ctx.node(
            "Split", [name, ctx.const([directions] * layers, hint="split")], layers, axis=0)
        states.append(parts)
    return states


@LOWERINGS.register("nn.LSTM", "nn.GRU", "nn.RNN")
def recurrent(ctx, op):
    if op.params.get("proj_size", 0):
        raise Unsupported("proj_size > 0")
    directions = 2 if op.params.get("bidirectional") else 1
    layers = int(op.params.get("num_layers", 1))
    unbatched = ctx.rank(op.inputs[0]) == 2  # (L, H_in): batch_first does not apply
    batch_first = bool(op.params.get("batch_first")) and not unbatched
    axis1 = ctx.const([1], hint="axes")
    states = _initial_states(ctx, op, layers, directions, axis1 if unbatched else None)
    x = ctx.x(op)
    if unbatched:
        x = ctx.node("Unsqueeze", [x, axis1])
    elif batch_first:
        x = ctx.node("Transpose", [x], perm=[1, 0, 2])
    finals: list[list[str]] = [[] for _ in op.outputs[1:]]
    for layer in range(layers):
        suffixes = [f"_l{layer}", f"_l{layer}_reverse"][:directions]
        y, hc, _ = _cell_node(ctx, op, x, suffixes, [s[layer] for s in states], directions,
                              f"{op.name}.l{layer}")
        for acc, value in zip(finals, hc):
            acc.append(value)
        x = _sequence_output(ctx, y, directions)
    if unbatched:
        ctx.node("Squeeze", [x, axis1], ctx.y(op))
    elif batch_first:
        ctx.node("Transpose", [x], ctx.y(op), perm=[1, 0, 2])
    else:  # x is the output of the last node (Squeeze or Reshape): name it after the op
        ctx.nodes[-1].output[0] = ctx.y(op)
    for out, values in zip(op.outputs[1:], finals):
        if not out.consumers:
            continue
        joined = values[0] if len(values) == 1 else ctx.node("Concat", values, axis=0)
        if unbatched:
            ctx.node("Squeeze", [joined, axis1], out.name)
        else:
            ctx.node("Identity", [joined], out.name)


def _sequence_output(ctx, y: str, directions: int) -> str:
    """ONNX Y is (seq, dir, batch, hidden); torch wants (seq, batch, dir*hidden)."""
    if directions == 1:
        return ctx.node("Squeeze", [y, ctx.const([1], hint="axes")])
    moved = ctx.node("Transpose", [y], perm=[0, 2, 1, 3])
    return ctx.node("Reshape", [moved, ctx.const([0, 0, -1], hint="shape")])


@LOWERINGS.register("nn.LSTMCell", "nn.GRUCell", "nn.RNNCell")
def cell(ctx, op):
    """A cell step is a recurrent node over a sequence of length 1."""
    unbatched = ctx.rank(op.inputs[0]) == 1
    lead = ctx.const([0, 1] if unbatched else [0], hint="axes")
    x = ctx.node("Unsqueeze", [ctx.x(op), lead])
    states = [ctx.node("Unsqueeze", [s.name, lead]) for s in op.inputs[1:]]
    _, hc, _ = _cell_node(ctx, op, x, [""], states, 1, op.name)
    for out, value in zip(op.outputs, hc):
        ctx.node("Squeeze", [value, lead], out.name)


# functional op -> (module type, extra module params)
_MODULE = {"torch.gru": ("nn.GRU", {}),
           "torch.rnn_tanh": ("nn.RNN", {"nonlinearity": "tanh"}),
           "torch.rnn_relu": ("nn.RNN", {"nonlinearity": "relu"})}


def _weights(op: Operator, layers: int, directions: int, biases: bool) -> dict:
    """The flat params list (per layer, per direction: w_ih, w_hh[, b_ih, b_hh]) keyed
    the way nn.GRU names them."""
    params = [o for o, n in zip(op.inputs, op.inputnames) if n == "params"] if op.inputnames \
        else op.inputs[2:]
    names = ["weight_ih", "weight_hh"] + (["bias_ih", "bias_hh"] if biases else [])
    keys = [f"{n}_l{layer}{suffix}" for layer in range(layers)
            for suffix in ["", "_reverse"][:directions] for n in names]
    if len(params) != len(keys):
        raise Unsupported(f"expected {len(keys)} weights, got {len(params)}")
    return {key: constant_attribute(operand) for key, operand in zip(keys, params)}


@LOWERINGS.register(*_MODULE)
def functional_recurrent(ctx, op):
    if len(op.inputs) < 2 or (op.inputnames and op.inputnames[1] != "hx"):
        raise Unsupported(f"{op.type} without hx (packed sequence form)")
    layers = int(op.params.get("num_layers", 1))
    directions = 2 if op.params.get("bidirectional") else 1
    attrs = _weights(op, layers, directions, bool(op.params.get("has_biases", True)))
    kind, extra = _MODULE[op.type]
    module = Operator(kind, op.name, inputs=op.inputs[:2], outputs=op.outputs,
                      params={"num_layers": layers, "bidirectional": directions == 2,
                              "batch_first": bool(op.params.get("batch_first")), **extra},
                      attrs=attrs)
    recurrent(ctx, module)
