"""LSTM, GRU and RNN -> `nn.LSTM` / `nn.GRU` / `nn.RNN` (one layer, uni- or bidirectional) with
the constant weights reordered from ONNX's gate order (LSTM iofc, GRU zrh) to PyTorch's (ifgo,
rzn). ONNX's Y is [seq, directions, batch, hidden]; PyTorch's output [seq, batch, directions *
hidden] is reshaped to it. A reverse-only layer runs forward on the flipped sequence."""
from __future__ import annotations

import torch
import torch.nn as nn

from .registry import RULES

rule = RULES.register

# PyTorch gate order as ONNX gate indices
_ORDER = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}
_MODULES = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}
_DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


def _gates(weight: torch.Tensor, op: str) -> torch.Tensor:
    """Rows of one direction's [gates * hidden, ...] weight, in PyTorch's gate order."""
    chunks = weight.chunk(len(_ORDER[op]), 0)
    return torch.cat([chunks[i] for i in _ORDER[op]], 0)


def _check(ctx, op: str, directions: int) -> str:
    """The RNN nonlinearity PyTorch should use; refuses what PyTorch's layers cannot do."""
    if ctx.attr("clip") is not None:
        ctx.fail(f"{op} with clip has no PyTorch layer")
    if op == "LSTM" and (int(ctx.attr("input_forget", 0)) or ctx.has(7)):
        ctx.fail("LSTM with coupled input-forget gates or peepholes has no PyTorch layer")
    if ctx.attr("activation_alpha") or ctx.attr("activation_beta"):
        ctx.fail(f"{op} activations with parameters have no PyTorch layer")
    activations = [a for a in (ctx.attr("activations") or [])] or _DEFAULT_ACTIVATIONS[op] * directions
    default = _DEFAULT_ACTIVATIONS[op] * directions
    if op == "RNN" and activations in (["Relu"] * directions, ["Tanh"] * directions):
        return activations[0].lower()
    if [a.lower() for a in activations] != [a.lower() for a in default]:
        ctx.fail(f"{op} activations {activations} have no PyTorch layer")
    if ctx.has(4):
        lengths = ctx.constant(4, "sequence_lens")
        seq = int(ctx.tensor(0).shape[1 if int(ctx.attr("layout", 0)) else 0])
        if bool((lengths != seq).any()):
            ctx.fail(f"{op} with sequence_lens shorter than the sequence has no PyTorch layer")
    return "tanh"


def _recurrent(ctx):
    op = ctx.node.op_type
    x = ctx.tensor(0)
    direction = ctx.attr("direction", "forward")
    directions = 2 if direction == "bidirectional" else 1
    nonlinearity = _check(ctx, op, directions)
    w, r = ctx.constant(1, "W"), ctx.constant(2, "R")
    b = ctx.constant(3, "B") if ctx.has(3) else None
    hidden = int(ctx.attr("hidden_size", r.shape[-1]))
    batch_first = bool(int(ctx.attr("layout", 0)))
    if op == "GRU" and not int(ctx.attr("linear_before_reset", 0)):
        return _gru_reset_first(ctx, x, w, r, b, hidden, direction, batch_first)
    module = ctx.module(lambda: _make(op, w, r, b, hidden, directions, batch_first, nonlinearity))
    if direction == "reverse":
        x = torch.flip(x, [1 if batch_first else 0])
    states = _initial_states(ctx, op, batch_first)
    out, state = module(x, states) if states is not None else module(x)
    if direction == "reverse":
        out = torch.flip(out, [1 if batch_first else 0])
    h, c = state if op == "LSTM" else (state, None)
    return _outputs(ctx, out, h, c, directions, hidden, batch_first)


def _make(op, w, r, b, hidden, directions, batch_first, nonlinearity):
    kwargs = {"nonlinearity": nonlinearity} if op == "RNN" else {}
    module = _MODULES[op](w.shape[-1], hidden, num_layers=1, bias=True, batch_first=batch_first,
                          bidirectional=directions == 2, dtype=w.dtype, **kwargs)
    gates = len(_ORDER[op])
    for d in range(directions):
        suffix = "_reverse" if d else ""
        bias = b[d] if b is not None else torch.zeros(2 * gates * hidden, dtype=w.dtype)
        values = {f"weight_ih_l0{suffix}": _gates(w[d], op), f"weight_hh_l0{suffix}": _gates(r[d], op),
                  f"bias_ih_l0{suffix}": _gates(bias[:gates * hidden], op),
                  f"bias_hh_l0{suffix}": _gates(bias[gates * hidden:], op)}
        for name, value in values.items():
            setattr(module, name, nn.Parameter(value.detach().clone().contiguous(), requires_grad=False))
    module.flatten_parameters()
    return module


def _initial_states(ctx, op, batch_first):
    """(h0, c0) in PyTorch's [directions, batch, hidden] layout, or None when absent."""
    h = ctx.tensor(5) if ctx.has(5) else None
    c = ctx.tensor(6) if op == "LSTM" and ctx.has(6) else None
    if batch_first:
        h = h.transpose(0, 1) if h is not None else None
        c = c.transpose(0, 1) if c is not None else None
    if op != "LSTM":
        return h
    if h is None and c is None:
        return None
    return (h if h is not None else torch.zeros_like(c), c if c is not None else torch.zeros_like(h))


def _outputs(ctx, out, h, c, directions, hidden, batch_first):
    """Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h, Y_c."""
    if batch_first:
        n, s = out.shape[0], out.shape[1]
        y = out.reshape(n, s, directions, hidden)
        h = h.transpose(0, 1)
        c = c.transpose(0, 1) if c is not None else None
    else:
        s, n = out.shape[0], out.shape[1]
        y = out.reshape(s, n, directions, hidden).transpose(1, 2) if directions == 2 else out.unsqueeze(1)
    return [y, h, c][:len(ctx.node.outputs)]


def _gru_reset_first(ctx, x, w, r, b, hidden: int, direction: str, batch_first: bool):
    """GRU with linear_before_reset=0 (ONNX's default), which nn.GRU cannot do (it applies the
    reset gate after the recurrent linear map): the cell spelled out, unrolled over the sequence."""
    if batch_first:
        x = x.transpose(0, 1)
    steps, batch = int(x.shape[0]), int(x.shape[1])
    h0 = ctx.tensor(5) if ctx.has(5) else None
    if h0 is not None and batch_first:
        h0 = h0.transpose(0, 1)
    directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
    ys, finals = [], []
    for d, way in enumerate(directions):
        wz, wr, wh = w[d].chunk(3, 0)
        rz, rr, rh = r[d].chunk(3, 0)
        bias = b[d] if b is not None else torch.zeros(6 * hidden, dtype=w.dtype)
        wbz, wbr, wbh, rbz, rbr, rbh = bias.chunk(6, 0)
        h = h0[d] if h0 is not None else torch.zeros(batch, hidden, dtype=x.dtype)
        outputs = []
        for t in (range(steps) if way == "forward" else range(steps - 1, -1, -1)):
            xt = x[t]
            z = torch.sigmoid(torch.matmul(xt, wz.t()) + torch.matmul(h, rz.t()) + (wbz + rbz))
            g = torch.sigmoid(torch.matmul(xt, wr.t()) + torch.matmul(h, rr.t()) + (wbr + rbr))
            candidate = torch.tanh(torch.matmul(xt, wh.t()) + torch.matmul(g * h, rh.t()) + (rbh + wbh))
            h = (1 - z) * candidate + z * h
            outputs.append(h)
        if way == "reverse":
            outputs.reverse()
        ys.append(torch.stack(outputs, 0))
        finals.append(h)
    y = torch.stack(ys, 1)  # [seq, directions, batch, hidden]
    y_h = torch.stack(finals, 0)
    if batch_first:
        y, y_h = y.permute(2, 0, 1, 3), y_h.transpose(0, 1)
    return [y, y_h][:len(ctx.node.outputs)]


for _op in _MODULES:
    RULES.add(_op, _recurrent, produces=(f"nn.{_MODULES[_op].__name__}",))
