"""ONNX table, the `rnn` family (frontends/onnx/rules/rnn.py): GRU, LSTM, RNN."""
from __future__ import annotations

from ..builders import Param, rand
from ..onnx_builders import node, onnx_case
from ..registry import family


def _weights(gates: int, hidden: int, inputs: int, directions: int) -> dict:
    return {"W": Param((directions, gates * hidden, inputs), -0.5, 0.5),
            "R": Param((directions, gates * hidden, hidden), -0.5, 0.5),
            "B": Param((directions, 2 * gates * hidden), -0.5, 0.5)}


def _recurrent(op_type: str, gates: int, extra: dict | None = None, opset: int = 14):
    op = f"onnx.{op_type}"
    extra = extra or {}
    outs = ["y", "y_h"] + (["y_c"] if op_type == "LSTM" else [])
    yield onnx_case(op, "forward", node(op_type, ["x0", "W", "R", "B"], outs, hidden_size=6, **extra),
                    [rand(5, 2, 4)], params=_weights(gates, 6, 4, 1), outputs=outs, opset=opset, smoke=True)
    yield onnx_case(op, "bidirectional", node(op_type, ["x0", "W", "R", "B"], outs, hidden_size=5,
                                              direction="bidirectional", **extra),
                    [rand(4, 1, 3)], params=_weights(gates, 5, 3, 2), outputs=outs, opset=opset)
    yield onnx_case(op, "reverse_y_only", node(op_type, ["x0", "W", "R"], ["y"], hidden_size=4, direction="reverse",
                                               **extra),
                    [rand(3, 2, 3)], params={k: v for k, v in _weights(gates, 4, 3, 1).items() if k != "B"}, opset=11)
    states = ["", "h0"] + (["c0"] if op_type == "LSTM" else [])
    state_params = {"h0": Param((1, 2, 6), -0.5, 0.5)}
    if op_type == "LSTM":
        state_params["c0"] = Param((1, 2, 6), -0.5, 0.5)
    yield onnx_case(op, "initial_state_layout1", node(op_type, ["x0", "W", "R", "B", *states], outs, hidden_size=6,
                                                      layout=1, **extra),
                    [rand(2, 5, 4)], params={**_weights(gates, 6, 4, 1),
                                             **{k: Param((2, 1, 6), -0.5, 0.5) for k in state_params}},
                    outputs=outs, opset=opset)


@family("onnx.LSTM")
def lstm():
    yield from _recurrent("LSTM", 4)


@family("onnx.GRU")
def gru():
    yield from _recurrent("GRU", 3, {"linear_before_reset": 1})
    # ONNX's default: the reset gate before the recurrent linear map, which nn.GRU cannot do
    yield onnx_case("onnx.GRU", "reset_first", node("GRU", ["x0", "W", "R", "B"], ["y", "y_h"], hidden_size=5,
                                                    direction="bidirectional"),
                    [rand(4, 2, 3)], params=_weights(3, 5, 3, 2), outputs=["y", "y_h"], opset=14)


@family("onnx.RNN")
def rnn():
    yield from _recurrent("RNN", 1)
