"""ONNX table: Resize (and the deprecated Upsample) and the recurrent layers."""
from __future__ import annotations

from ..builders import Param, rand
from ..onnx_builders import node, onnx_case
from ..registry import family


@family("onnx.Resize")
def resize():
    op = "onnx.Resize"
    scales2 = {"sc": [1.0, 1.0, 2.0, 2.0]}
    yield onnx_case(op, "nearest_scales", node("Resize", ["x0", "", "sc"], mode="nearest",
                                               coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
                    [rand(1, 2, 4, 5)], consts=scales2, smoke=True)
    yield onnx_case(op, "linear_half_pixel", node("Resize", ["x0", "", "sc"], mode="linear"), [rand(1, 2, 4, 5)],
                    consts=scales2)
    yield onnx_case(op, "linear_align_corners_sizes", node("Resize", ["x0", "", "", "sz"], mode="linear",
                                                           coordinate_transformation_mode="align_corners"),
                    [rand(1, 2, 4, 5)], consts={"sz": [1, 2, 7, 9]}, opset=13)
    yield onnx_case(op, "cubic_opset11", node("Resize", ["x0", "roi", "sc"], mode="cubic"), [rand(1, 2, 4, 4)],
                    consts={"roi": [], "sc": [1.0, 1.0, 2.0, 2.0]}, const_dtypes={"roi": "torch.float32"}, opset=11)
    yield onnx_case(op, "nearest_default_down", node("Resize", ["x0", "", "sc"]), [rand(1, 2, 8, 8)],
                    consts={"sc": [1.0, 1.0, 0.5, 0.5]})
    yield onnx_case(op, "nearest_ceil_half_pixel", node("Resize", ["x0", "", "", "sz"], nearest_mode="ceil"),
                    [rand(1, 1, 3, 4)], consts={"sz": [1, 1, 7, 6]}, opset=13)
    yield onnx_case(op, "linear_antialias_opset18", node("Resize", ["x0", "", "sc"], mode="linear", antialias=1),
                    [rand(1, 2, 8, 8)], consts={"sc": [1.0, 1.0, 0.5, 0.5]}, opset=18)
    yield onnx_case(op, "axes_opset18", node("Resize", ["x0", "", "sc"], mode="linear", axes=[2, 3]),
                    [rand(1, 2, 4, 4)], consts={"sc": [2.0, 1.5]}, opset=18)
    yield onnx_case(op, "linear_asymmetric", node("Resize", ["x0", "", "sc"], mode="linear",
                                                  coordinate_transformation_mode="asymmetric"),
                    [rand(1, 2, 3, 4)], consts=scales2, opset=19)
    yield onnx_case(op, "linear_1d", node("Resize", ["x0", "", "sc"], mode="linear"), [rand(1, 3, 6)],
                    consts={"sc": [1.0, 1.0, 2.0]})


@family("onnx.Upsample")
def upsample():
    op = "onnx.Upsample"
    yield onnx_case(op, "nearest_opset9", node("Upsample", ["x0", "sc"]), [rand(1, 2, 3, 4)],
                    consts={"sc": [1.0, 1.0, 2.0, 2.0]}, opset=9, smoke=True)
    yield onnx_case(op, "linear_opset9", node("Upsample", ["x0", "sc"], mode="linear"), [rand(1, 2, 3, 4)],
                    consts={"sc": [1.0, 1.0, 2.0, 3.0]}, opset=9)
    yield onnx_case(op, "nearest_attr_opset7", node("Upsample", ["x0"], scales=[1.0, 1.0, 3.0, 2.0]),
                    [rand(1, 2, 3, 4)], opset=7)


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
