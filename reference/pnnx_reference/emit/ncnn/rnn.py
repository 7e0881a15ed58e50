"""nn.RNN / nn.LSTM / nn.GRU -> one ncnn RNN / LSTM / GRU layer per torch layer (unrolled),
bidirectional as direction=2. ncnn runs a (T, features) blob: batch_first=True with batch 1,
an unbatched (T, features) input, or batch_first=False with batch 1 on dim 1 (reshaped around).
Gate order: torch LSTM i,f,g,o -> ncnn i,f,o,g; GRU keeps r,z,n and ncnn reads four biases
(r and z summed over ih+hh, then n's ih and hh apart). The final hidden/cell states are not
exported (ncnn returns them only as extra outputs of a single layer).
nn.RNNCell -> InnerProduct(s) + BinaryOp add + TanH/ReLU."""
from __future__ import annotations

import numpy as np

from .context import CannotLower, Context, dims_params, param
from .layers import Weight
from .registry import lowers

GATES = {"nn.RNN": 1, "nn.LSTM": 4, "nn.GRU": 3}
LAYER = {"nn.RNN": "RNN", "nn.LSTM": "LSTM", "nn.GRU": "GRU"}


def _attr(op, key: str, rows: int) -> np.ndarray:
    if key in op.attrs:
        return op.attrs[key].to_numpy().astype(np.float32)
    return np.zeros(rows, np.float32)  # bias=False


def _lstm_order(w: np.ndarray) -> np.ndarray:
    i, f, g, o = np.split(w, 4, axis=0)
    return np.concatenate([i, f, o, g], axis=0)


def _direction_weights(op, layer: int, suffix: str):
    """(weight_xc, bias_c, weight_hc) for one direction of one layer, in ncnn's gate order."""
    w_ih = op.attrs[f"weight_ih_l{layer}{suffix}"].to_numpy().astype(np.float32)
    w_hh = op.attrs[f"weight_hh_l{layer}{suffix}"].to_numpy().astype(np.float32)
    b_ih = _attr(op, f"bias_ih_l{layer}{suffix}", w_ih.shape[0])
    b_hh = _attr(op, f"bias_hh_l{layer}{suffix}", w_ih.shape[0])
    if op.type == "nn.LSTM":
        return _lstm_order(w_ih), _lstm_order(b_ih + b_hh), _lstm_order(w_hh)
    if op.type == "nn.GRU":
        h = w_ih.shape[0] // 3
        bias = np.concatenate([b_ih[:2 * h] + b_hh[:2 * h], b_ih[2 * h:], b_hh[2 * h:]])
        return w_ih, bias, w_hh
    return w_ih, b_ih + b_hh, w_hh


def _time_major(ctx: Context, op) -> bool:
    """Whether the input is (T, 1, features) with every dim carried (reshaped to (T, features)
    around the layers); otherwise it must already be a (T, features) blob."""
    shape = ctx.torch_shape(op.inputs[0])
    unbatched = len(shape) == 2 and not ctx.has_batch(op.inputs[0])
    if not param(op, "batch_first", False) and not unbatched:
        if len(shape) != 3 or shape[1] != 1:
            raise CannotLower("batch_first=False lowers only with batch 1 (dim 1): ncnn runs (T, features) blobs")
        if ctx.rank(op.inputs[0]) == 3:
            return True
    if ctx.rank(op.inputs[0]) != 2:
        raise CannotLower("expects a (1, T, features) input")
    return False


def _check(ctx: Context, op) -> None:
    if len(op.inputs) > 1:
        raise CannotLower("initial hidden/cell states are not lowered")
    if int(param(op, "proj_size", 0) or 0):
        raise CannotLower("LSTM proj_size is not lowered")
    if param(op, "nonlinearity", "tanh") != "tanh":
        raise CannotLower("RNN nonlinearity=relu has no ncnn equivalent")
    if any(state.consumers for state in op.outputs[1:]) and int(param(op, "num_layers", 1)) != 1:
        raise CannotLower("the final hidden/cell states of a multi-layer RNN are used: not exported")


@lowers("nn.RNN", "nn.LSTM", "nn.GRU")
def rnn(ctx: Context, op) -> None:
    _check(ctx, op)
    time_major = _time_major(ctx, op)
    hidden = int(param(op, "hidden_size"))
    layers = int(param(op, "num_layers", 1))
    bidirectional = bool(param(op, "bidirectional", False))
    suffixes = ["", "_reverse"] if bidirectional else [""]
    src = ctx.blob(op.inputs[0])
    final = op.outputs[0].name
    if time_major:
        steps, features = ctx.shape(op.inputs[0])[0], ctx.shape(op.inputs[0])[2]
        flat, final = ctx.temp(final), ctx.temp(final)
        ctx.emit("Reshape", "reshape", [src], [flat], dims_params([steps, features]))
        src = flat
    for layer in range(layers):
        parts = [_direction_weights(op, layer, s) for s in suffixes]
        weights = [Weight(np.concatenate([p[k].reshape(-1) for p in parts]), tagged=True) for k in range(3)]
        out = final if layer == layers - 1 else ctx.temp(op.outputs[0].name)
        p = {0: hidden, 1: int(weights[0].data.size), 2: 2 if bidirectional else 0}
        if op.type == "nn.LSTM":
            p[3] = hidden
        states = _state_outputs(ctx, op) if layer == layers - 1 else []
        ctx.emit(LAYER[op.type], LAYER[op.type].lower(), [src], [out, *[t for t, _ in states]], p, weights)
        for temp, state in states:
            ctx.emit("Reshape", "reshape", [temp], [state.name], dims_params(ctx.shape(state)))
        src = out
    if time_major:
        ctx.emit("Reshape", "reshape", [final], [op.outputs[0].name], dims_params(ctx.shape(op.outputs[0])))


def _state_outputs(ctx: Context, op) -> list:
    """(ncnn blob, torch operand) for the final hidden (and cell) states of a single-layer
    RNN: ncnn writes them as extra (directions, hidden) outputs, reshaped to torch's shape."""
    states = op.outputs[1:]
    if not any(s.consumers for s in states):
        return []
    return [(ctx.temp(s.name), s) for s in states]


CELL_ACTIVATION = {"tanh": "TanH", "relu": "ReLU"}


@lowers("nn.RNNCell")
def rnn_cell(ctx: Context, op) -> None:
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh): an InnerProduct per input (the biases summed
    into the first), a BinaryOp add and the activation; without hx the h term is zero."""
    nonlinearity = param(op, "nonlinearity", "tanh")
    if nonlinearity not in CELL_ACTIVATION:
        raise CannotLower(f"RNNCell nonlinearity={nonlinearity!r} is not lowered")
    w_ih = op.attrs["weight_ih"].to_numpy().astype(np.float32)
    bias = _attr(op, "bias_ih", w_ih.shape[0]) + _attr(op, "bias_hh", w_ih.shape[0])
    out = op.outputs[0].name
    pre = _cell_linear(ctx, op.inputs[0], w_ih, bias, ctx.temp(out))
    if len(op.inputs) > 1:
        w_hh = op.attrs["weight_hh"].to_numpy().astype(np.float32)
        recurrent = _cell_linear(ctx, op.inputs[1], w_hh, None, ctx.temp(out))
        summed = ctx.temp(out)
        ctx.emit("BinaryOp", "add", [pre, recurrent], [summed], {0: 0})
        pre = summed
    ctx.emit(CELL_ACTIVATION[nonlinearity], nonlinearity, [pre], [out])


def _cell_linear(ctx: Context, operand, weight: np.ndarray, bias, out: str) -> str:
    """InnerProduct of a (features) or (batch, features) blob; ncnn runs a 2-d blob row by row."""
    if ctx.rank(operand) not in (1, 2):
        raise CannotLower("RNNCell expects a (batch, features) or (features) input")
    p = {0: int(weight.shape[0]), 1: int(bias is not None), 2: int(weight.size)}
    weights = [Weight(weight.reshape(-1), tagged=True)]
    if bias is not None:
        weights.append(Weight(bias.reshape(-1), tagged=False))
    ctx.emit("InnerProduct", "linear", [ctx.blob(operand)], [out], p, weights)
    return out
