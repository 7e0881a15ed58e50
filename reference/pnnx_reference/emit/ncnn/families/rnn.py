"""nn.RNN / nn.LSTM / nn.GRU -> one ncnn RNN / LSTM / GRU layer per torch layer (unrolled),
bidirectional as direction=2. ncnn runs a (T, features) blob: one sample of the batch, or an
unbatched (T, features) input, reshaped from and to the torch layout around the layers.
Gate order: torch LSTM i,f,g,o -> ncnn i,f,o,g; GRU keeps r,z,n and ncnn reads four biases
(r and z summed over ih+hh, then n's ih and hh apart). The final hidden/cell states are each
layer's extra (directions, hidden) outputs, concatenated; initial states are sliced per layer
into its extra inputs. A batch N > 1 is sliced into N
sequences, each run through its own copy of the layers (see MAX_SPLIT_BATCH), and re-joined.
nn.RNNCell / LSTMCell / GRUCell -> InnerProducts (one per input, on (batch, features) rows),
Slice over the gates, BinaryOps and Sigmoid/TanH: the cell equations written out."""
from __future__ import annotations

import numpy as np

from ....errors import Unsupported
from ..arithmetic import binary
from ..context import Context, dims_params, param
from ..inner_product import inner_product_layer
from ..layers import Weight
from ..registry import LOWERINGS

LAYER = {"nn.RNN": "RNN", "nn.LSTM": "LSTM", "nn.GRU": "GRU"}


def _attr(op, key: str, rows: int) -> np.ndarray:
    if key in op.attrs:
        return op.attrs[key].to_numpy().astype(np.float32)
    return np.zeros(rows, np.float32)  # bias=False


def _lstm_order(w: np.ndarray) -> np.ndarray:
    i, f, g, o = np.split(w, 4, axis=0)
    return np.concatenate([i, f, o, g], axis=0)


def _direction_weights(op, layer: int, suffix: str):
    """(weight_xc, bias_c, weight_hc[, weight_hr]) for one direction of one layer, in ncnn's gate
    order; weight_hr is an LSTM's projection (proj_size), (proj, hidden) as ncnn reads it."""
    w_ih = op.attrs[f"weight_ih_l{layer}{suffix}"].to_numpy().astype(np.float32)
    w_hh = op.attrs[f"weight_hh_l{layer}{suffix}"].to_numpy().astype(np.float32)
    b_ih = _attr(op, f"bias_ih_l{layer}{suffix}", w_ih.shape[0])
    b_hh = _attr(op, f"bias_hh_l{layer}{suffix}", w_ih.shape[0])
    if op.type == "nn.LSTM":
        found = (_lstm_order(w_ih), _lstm_order(b_ih + b_hh), _lstm_order(w_hh))
        projection = op.attrs.get(f"weight_hr_l{layer}{suffix}")
        return found if projection is None else (*found, projection.to_numpy().astype(np.float32))
    if op.type == "nn.GRU":
        h = w_ih.shape[0] // 3
        bias = np.concatenate([b_ih[:2 * h] + b_hh[:2 * h], b_ih[2 * h:], b_hh[2 * h:]])
        return w_ih, bias, w_hh
    return w_ih, b_ih + b_hh, w_hh


# ncnn runs one sequence per layer: a batch of N runs as N copies of the layers, each carrying
# its own copy of the weights in ncnn.bin, so only small batches are split
MAX_SPLIT_BATCH = 4


def _check(ctx: Context, op) -> None:
    if param(op, "nonlinearity", "tanh") != "tanh":
        raise Unsupported("RNN nonlinearity=relu has no ncnn equivalent")


def _batch(ctx: Context, op) -> tuple[int | None, int]:
    """(torch batch dim of the input, batch size): (None, 1) for an unbatched (T, features) input."""
    shape = ctx.torch_shape(op.inputs[0])
    if len(shape) == 2:
        return None, 1
    if len(shape) != 3:
        raise Unsupported(f"expects a (T, N, features) or (N, T, features) input, got {tuple(shape)}")
    dim = 0 if param(op, "batch_first", False) else 1
    if dim == 0 and ctx.has_batch(op.inputs[0]):
        return dim, 1  # the batch ncnn drops (1, or dynamic and run as 1)
    if shape[dim] < 1:
        raise Unsupported(f"the batch (dim {dim}) is dynamic: ncnn runs one sequence per layer")
    if shape[dim] > MAX_SPLIT_BATCH:
        raise Unsupported(f"batch {shape[dim]}: ncnn runs one sequence per layer, and a batch above "
                          f"{MAX_SPLIT_BATCH} is not split into copies of the layers")
    return dim, shape[dim]


@LOWERINGS.register("nn.RNN", "nn.LSTM", "nn.GRU", batchless=True)
def rnn(ctx: Context, op) -> None:
    _check(ctx, op)
    dim, n = _batch(ctx, op)
    x = op.inputs[0]
    steps, features = (s for i, s in enumerate(ctx.torch_shape(x)) if i != dim)
    samples = _split(ctx, ctx.blob(x), x, dim, n, [steps, features])
    weights = _layer_weights(op)
    initial = _initial_states(ctx, op, dim, n, len(weights))
    runs = [_run_layers(ctx, op, src, weights, initial[i]) for i, src in enumerate(samples)]
    directions = 2 if param(op, "bidirectional", False) else 1
    _gather(ctx, [y for y, _ in runs], [steps, directions * _outputs(op)], op.outputs[0], dim)
    for k, state in enumerate(op.outputs[1:]):
        if state.consumers:
            piece = [len(weights) * directions, ctx.torch_shape(state)[-1]]
            _gather(ctx, [states[k] for _, states in runs], piece, state, None if dim is None else 1)


def _layer_weights(op) -> list[list[Weight]]:
    """Per torch layer: weight_xc, bias_c, weight_hc (, weight_hr) with the directions concatenated."""
    suffixes = ["", "_reverse"] if param(op, "bidirectional", False) else [""]
    found = []
    for layer in range(int(param(op, "num_layers", 1))):
        parts = [_direction_weights(op, layer, s) for s in suffixes]
        found.append([Weight(np.concatenate([p.reshape(-1) for p in arrays]), tagged=True) for arrays in zip(*parts)])
    return found


def _initial_states(ctx: Context, op, dim, n: int, layers: int) -> list[list[list[str]]]:
    """[sample][layer] -> the (directions, hidden) blobs of the initial states given (h0, and c0
    for LSTM; torch (layers*directions, N, hidden)), which ncnn takes as extra layer inputs."""
    found = [[[] for _ in range(layers)] for _ in range(n)]
    for state in op.inputs[1:]:
        rows, hidden = (s for i, s in enumerate(ctx.torch_shape(state)) if i != (None if dim is None else 1))
        pieces = _split(ctx, ctx.blob(state), state, None if dim is None else 1, n, [rows, hidden])
        for sample, piece in zip(found, pieces):
            parts = [piece]
            if layers > 1:
                parts = [ctx.temp(state.name) for _ in range(layers)]
                ctx.emit("Slice", "slice", [piece], parts, {0: [rows // layers] * layers, 1: 0})
            for layer, part in zip(sample, parts):
                layer.append(part)
    return found


def _run_layers(ctx: Context, op, src: str, weights, initial) -> tuple[str, list[str]]:
    """One sample's (T, features) blob through the layers: its (T, directions*hidden) output and,
    when used, the final states (hidden, and cell for LSTM) as (layers*directions, hidden) blobs:
    each ncnn layer returns its own (directions, hidden) states, concatenated layer by layer."""
    hidden = int(param(op, "hidden_size"))
    bidirectional = bool(param(op, "bidirectional", False))
    used = any(s.consumers for s in op.outputs[1:])
    per_layer = []
    for layer_weights, given in zip(weights, initial):
        out = ctx.temp(op.outputs[0].name)
        p = {0: _outputs(op), 1: int(layer_weights[0].data.size), 2: 2 if bidirectional else 0}
        if op.type == "nn.LSTM":
            p[3] = hidden
        states = [ctx.temp(s.name) for s in op.outputs[1:]] if used else []
        ctx.emit(LAYER[op.type], LAYER[op.type].lower(), [src, *given], [out, *states], p, layer_weights)
        per_layer.append(states)
        src = out
    return src, [_stacked(ctx, list(blobs), base.name) for blobs, base in zip(zip(*per_layer), op.outputs[1:])]


def _outputs(op) -> int:
    """Features per direction of each step's output: hidden_size, or an LSTM's proj_size."""
    return int(param(op, "proj_size", 0) or 0) or int(param(op, "hidden_size"))


def _stacked(ctx: Context, blobs: list[str], base: str) -> str:
    if len(blobs) == 1:
        return blobs[0]
    out = ctx.temp(base)
    ctx.emit("Concat", "concat", blobs, [out], {0: 0})
    return out


def _ncnn_axis(ctx: Context, operand, dim: int) -> int:
    return dim - (len(ctx.torch_shape(operand)) - ctx.rank(operand))  # a dropped batch-1 dim 0


def _split(ctx: Context, blob: str, operand, dim, n: int, piece: list[int]) -> list[str]:
    """`operand`'s blob cut along torch `dim` into n blobs of shape `piece` (n=1: just reshaped)."""
    if n == 1:
        return [_reshaped(ctx, blob, ctx.shape(operand), piece, operand.name)]
    shape = ctx.shape(operand)
    axis = _ncnn_axis(ctx, operand, dim)
    parts = [ctx.temp(operand.name) for _ in range(n)]
    ctx.emit("Slice", "slice", [blob], parts, {0: [1] * n, 1: axis})
    cut = [1 if i == axis else d for i, d in enumerate(shape)]
    return [_reshaped(ctx, part, cut, piece, operand.name) for part in parts]


def _gather(ctx: Context, blobs: list[str], piece: list[int], operand, dim) -> None:
    """Per-sample blobs of shape `piece` (sequence outputs or states) joined along torch `dim`
    into `operand`."""
    shape = ctx.shape(operand)
    if len(blobs) == 1 and list(piece) == shape:
        ctx.aliases[operand.name] = blobs[0]
        return
    if len(blobs) == 1:
        ctx.emit("Reshape", "reshape", blobs, [operand.name], dims_params(shape))
        return
    axis = _ncnn_axis(ctx, operand, dim)
    cut = dims_params([1 if i == axis else d for i, d in enumerate(shape)])
    parts = [ctx.temp(operand.name) for _ in blobs]
    for blob, part in zip(blobs, parts):
        ctx.emit("Reshape", "reshape", [blob], [part], cut)
    ctx.emit("Concat", "concat", parts, [operand.name], {0: axis})


def _reshaped(ctx: Context, blob: str, shape: list[int], target: list[int], base: str) -> str:
    if list(shape) == list(target):
        return blob
    out = ctx.temp(base)
    ctx.emit("Reshape", "reshape", [blob], [out], dims_params(target))
    return out


CELL_ACTIVATION = {"tanh": "TanH", "relu": "ReLU"}




@LOWERINGS.register("nn.RNNCell", batchless=True)
def rnn_cell(ctx: Context, op) -> None:
    """h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh): an InnerProduct per input (the biases summed
    into the first), a BinaryOp add and the activation; without hx the h term is zero."""
    nonlinearity = param(op, "nonlinearity", "tanh")
    if nonlinearity not in CELL_ACTIVATION:
        raise Unsupported(f"RNNCell nonlinearity={nonlinearity!r} is not lowered")
    pre = _cell_gates(ctx, op, op.inputs[1] if len(op.inputs) > 1 else None)
    ctx.emit(CELL_ACTIVATION[nonlinearity], nonlinearity, [pre], [op.outputs[0].name])


@LOWERINGS.register("nn.LSTMCell", batchless=True)
def lstm_cell(ctx: Context, op) -> None:
    """gates = x W_ih^T + h W_hh^T + b_ih + b_hh, sliced into i, f, g, o;
    c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c').
    Without (h, c) both are zero: the h term and f * c drop out (f is left unused)."""
    state = len(op.inputs) == 3
    out = op.outputs[0].name
    gates = _cell_gates(ctx, op, op.inputs[1] if state else None)
    i, f, g, o = _slice_last(ctx, op, gates, [1, 1, 1, 1])
    i, f, o = (_unary(ctx, "Sigmoid", "sigmoid", blob) for blob in (i, f, o))
    g = _unary(ctx, "TanH", "tanh", g)
    cell = op.outputs[1].name
    if state:
        kept = binary(ctx, "mul", f, ctx.blob(op.inputs[2]), ctx.temp(out))
        binary(ctx, "add", kept, binary(ctx, "mul", i, g, ctx.temp(out)), cell)
    else:
        binary(ctx, "mul", i, g, cell)
    binary(ctx, "mul", o, _unary(ctx, "TanH", "tanh", cell), out)


@LOWERINGS.register("nn.GRUCell", batchless=True)
def gru_cell(ctx: Context, op) -> None:
    """r, z = sigmoid(x W_i{r,z}^T + h W_h{r,z}^T + b_i{r,z} + b_h{r,z}),
    n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)), h' = n + z * (h - n).
    Without hx the state is a zero MemoryData (b_hn still reaches n through r)."""
    out = op.outputs[0].name
    h = ctx.blob(op.inputs[1]) if len(op.inputs) > 1 else _zeros(ctx, op.outputs[0])
    w_ih, w_hh = (op.attrs[k].to_numpy().astype(np.float32) for k in ("weight_ih", "weight_hh"))
    hidden = w_hh.shape[1]
    b_ih, b_hh = _attr(op, "bias_ih", 3 * hidden), _attr(op, "bias_hh", 3 * hidden)
    x_bias = b_ih + np.concatenate([b_hh[:2 * hidden], np.zeros(hidden, np.float32)])
    h_bias = np.concatenate([np.zeros(2 * hidden, np.float32), b_hh[2 * hidden:]])
    x_rz, x_n = _slice_last(ctx, op, _cell_linear(ctx, op.inputs[0], w_ih, x_bias, ctx.temp(out)), [2, 1])
    h_rz, h_n = _slice_last(ctx, op, _linear(ctx, h, w_hh, h_bias, ctx.temp(out)), [2, 1])
    rz = _unary(ctx, "Sigmoid", "sigmoid", binary(ctx, "add", x_rz, h_rz, ctx.temp(out)))
    r, z = _slice_last(ctx, op, rz, [1, 1])
    n = binary(ctx, "add", x_n, binary(ctx, "mul", r, h_n, ctx.temp(out)), ctx.temp(out))
    n = _unary(ctx, "TanH", "tanh", n)
    step = binary(ctx, "mul", z, binary(ctx, "sub", h, n, ctx.temp(out)), ctx.temp(out))
    binary(ctx, "add", n, step, out)


def _cell_gates(ctx: Context, op, hx) -> str:
    """x W_ih^T + b_ih + b_hh (+ h W_hh^T): every gate's pre-activation, in torch's gate order."""
    w_ih = op.attrs["weight_ih"].to_numpy().astype(np.float32)
    bias = _attr(op, "bias_ih", w_ih.shape[0]) + _attr(op, "bias_hh", w_ih.shape[0])
    out = op.outputs[0].name
    pre = _cell_linear(ctx, op.inputs[0], w_ih, bias, ctx.temp(out))
    if hx is None:
        return pre
    w_hh = op.attrs["weight_hh"].to_numpy().astype(np.float32)
    recurrent = _cell_linear(ctx, hx, w_hh, None, ctx.temp(out))
    return binary(ctx, "add", pre, recurrent, ctx.temp(out))


def _cell_linear(ctx: Context, operand, weight: np.ndarray, bias, out: str) -> str:
    """InnerProduct of a (features) or (batch, features) blob; ncnn runs a 2-d blob row by row."""
    if ctx.rank(operand) not in (1, 2):
        raise Unsupported(f"{operand.name}: a cell expects a (batch, features) or (features) input")
    return _linear(ctx, ctx.blob(operand), weight, bias, out)


def _linear(ctx: Context, blob: str, weight: np.ndarray, bias, out: str) -> str:
    ctx.emit("InnerProduct", "linear", [blob], [out], *inner_product_layer(weight, bias))
    return out


def _slice_last(ctx: Context, op, blob: str, shares: list[int]) -> list[str]:
    """Slices the gate axis (the last) of a cell's (batch, k*hidden) or (k*hidden) blob into
    pieces of `shares` hidden-sized parts each."""
    hidden = ctx.shape(op.outputs[0])[-1]
    axis = ctx.rank(op.outputs[0]) - 1
    pieces = [ctx.temp(op.outputs[0].name) for _ in shares]
    ctx.emit("Slice", "slice", [blob], pieces, {0: [s * hidden for s in shares], 1: axis})
    return pieces


def _unary(ctx: Context, layer: str, prefix: str, blob: str) -> str:
    out = ctx.temp(blob)
    ctx.emit(layer, prefix, [blob], [out])
    return out


def _zeros(ctx: Context, like) -> str:
    """A MemoryData of zeros shaped like the operand `like` (a cell's missing initial state)."""
    shape = ctx.shape(like)
    name = ctx.temp(like.name)
    ctx.emit("MemoryData", "zeros", [], [name], dims_params(shape),
             [Weight(np.zeros(int(np.prod(shape)), np.float32), tagged=False)])
    return name
