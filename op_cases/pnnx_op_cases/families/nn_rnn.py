"""Recurrent layers: RNN/LSTM/GRU, their cells, and RNNBase used directly."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

T, N, I, H = 5, 2, 4, 8     # time steps, batch, input size, hidden size
SEQ = rand(T, N, I)          # (L, N, H_in): the default batch_first=False layout
SEQ_BF = rand(N, T, I)


def _outputs(kind):
    """Flatten the (output, h) or (output, (h, c)) result into a tuple of tensors."""
    return ("y[0]", "y[1][0]", "y[1][1]") if kind == "LSTM" else ("y[0]", "y[1]")


def _hidden(kind, layers_dirs=1, batch=N, hidden=H, proj=None):
    h = rand(layers_dirs, batch, proj or hidden)
    c = rand(layers_dirs, batch, hidden)
    return [h, c] if kind == "LSTM" else [h]


def _rnn_family(kind):
    op = f"nn.{kind}"
    ret = _outputs(kind)
    hcall = "self.m(x0, (x1, x2))" if kind == "LSTM" else "self.m(x0, x1)"

    def case(variant, args, inputs, **kw):
        return module_case(op, variant, f"nn.{kind}({I}, {H}{args})", inputs, ret=ret, **kw)

    yield case("default", "", [SEQ], smoke=True)
    yield case("batch_first", ", batch_first=True", [SEQ_BF], smoke=True)
    yield case("layers2", ", num_layers=2", [SEQ])
    yield case("bidirectional", ", bidirectional=True", [SEQ])
    yield case("layers2_bidirectional_bf", ", num_layers=2, bidirectional=True, batch_first=True",
               [SEQ_BF])
    yield case("nobias", ", bias=False", [SEQ])
    yield case("h0", "", [SEQ] + _hidden(kind), call=hcall)
    yield case("h0_layers2_bidirectional", ", num_layers=2, bidirectional=True",
               [SEQ] + _hidden(kind, 4), call=hcall)
    yield case("unbatched", "", [rand(T, I)], tags={"unbatched"})
    yield case("unbatched_h0", "", [rand(T, I)] + [rand(1, s.shape[-1]) for s in _hidden(kind)],
               call=hcall, tags={"unbatched"})
    yield case("t1", "", [rand(1, N, I)])
    yield case("noncontiguous", ", batch_first=True", [SEQ], pre="x0 = x0.transpose(0, 1)")
    yield case("dropout_eval", ", num_layers=2, dropout=0.5", [SEQ])
    if kind == "RNN":
        yield case("relu", ", nonlinearity='relu'", [SEQ])
        yield case("relu_bidirectional", ", nonlinearity='relu', bidirectional=True", [SEQ])
    if kind == "LSTM":
        yield case("proj4", ", proj_size=4", [SEQ])
        yield case("proj4_bidirectional_h0", ", proj_size=4, bidirectional=True",
                   [SEQ] + _hidden(kind, 2, proj=4), call=hcall)


@family("nn.RNN", "nn.LSTM", "nn.GRU")
def recurrent():
    for kind in ("RNN", "LSTM", "GRU"):
        yield from _rnn_family(kind)


def _cell_family(kind):
    op = f"nn.{kind}Cell"
    ctor = f"nn.{kind}Cell({I}, {H}"
    lstm = kind == "LSTM"
    ret = ("y[0]", "y[1]") if lstm else None
    hx = [rand(N, H), rand(N, H)] if lstm else [rand(N, H)]
    hcall = "self.m(x0, (x1, x2))" if lstm else "self.m(x0, x1)"

    def case(variant, args, inputs, **kw):
        return module_case(op, variant, f"{ctor}{args})", inputs, ret=ret, **kw)

    yield case("default", "", [rand(N, I)], smoke=True)
    yield case("hx", "", [rand(N, I)] + hx, call=hcall, smoke=True)
    yield case("nobias", ", bias=False", [rand(N, I)] + hx, call=hcall)
    yield case("b1", "", [rand(1, I)])
    yield case("unbatched", "", [rand(I)], tags={"unbatched"})
    yield case("unbatched_hx", "", [rand(I)] + [rand(H) for _ in hx], call=hcall,
               tags={"unbatched"})
    if kind == "RNN":
        yield case("relu", ", nonlinearity='relu'", [rand(N, I)] + hx, call=hcall)
    # two steps through the same cell: the usual way a cell is used
    yield module_case(op, "two_steps", f"{ctor})", [rand(N, I), rand(N, I)],
                      pre="h = self.m(x0)\nh = self.m(x1, h)",
                      call="h", ret=ret)


@family("nn.RNNCell", "nn.LSTMCell", "nn.GRUCell")
def cells():
    for kind in ("RNN", "LSTM", "GRU"):
        yield from _cell_family(kind)


@family("nn.RNNBase")
def rnn_base():
    # RNNBase has no forward of its own; models that use it directly borrow one
    op = "nn.RNNBase"
    for mode, cls in (("RNN_TANH", "RNN"), ("RNN_RELU", "RNN"), ("GRU", "GRU")):
        call = f"nn.{cls}.forward(self.m, x0)"
        yield module_case(op, mode.lower(), f"nn.RNNBase({mode!r}, {I}, {H})", [SEQ],
                          call=call, ret=("y[0]", "y[1]"), smoke=mode == "GRU")
        yield module_case(op, f"{mode.lower()}_layers2_bidirectional_bf",
                          f"nn.RNNBase({mode!r}, {I}, {H}, num_layers=2, bidirectional=True, "
                          "batch_first=True)", [SEQ_BF], call=call, ret=("y[0]", "y[1]"))


@family("nn.RNN", "nn.LSTM", "nn.GRU")
def batch_first_b1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    x = [rand(1, 5, 6)]
    yield module_case("nn.RNN", "batch_first_b1", "nn.RNN(6, 8, batch_first=True)", x, ret="y[0]")
    yield module_case("nn.LSTM", "batch_first_b1", "nn.LSTM(6, 8, batch_first=True)", x, ret="y[0]")
    yield module_case("nn.LSTM", "layers2_bidirectional_bf_b1",
                      "nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)", x, ret="y[0]")
    yield module_case("nn.GRU", "batch_first_b1", "nn.GRU(6, 8, batch_first=True)", x, ret="y[0]")
    yield module_case("nn.GRU", "bidirectional_bf_b1", "nn.GRU(6, 8, batch_first=True, bidirectional=True)", x,
                      ret="y[0]")
