"""F.* activations: elementwise (with their parameters) and the softmax family."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import case, f, table, unary

_RANDOM = "samples a random negative slope per element in training mode"


def _with_params(op: str, fn: str, settings: dict[str, str], lo: float = -3.0, hi: float = 3.0):
    """Generic unary variants plus one case per parameter setting."""
    extra = [(name, f"{fn}(x0, {args})", [f(2, 8, 6, 5, low=lo, high=hi)]) for name, args in settings.items()]
    return unary(op, fn + "({x})", lo, hi, extra=extra)


_SIMPLE = {
    "F.relu": "F.relu", "F.relu6": "F.relu6", "F.sigmoid": "F.sigmoid", "F.tanh": "F.tanh",
    "F.silu": "F.silu", "F.mish": "F.mish", "F.selu": "F.selu", "F.hardswish": "F.hardswish",
    "F.hardsigmoid": "F.hardsigmoid", "F.logsigmoid": "F.logsigmoid", "F.softsign": "F.softsign",
    "F.tanhshrink": "F.tanhshrink",
}

_PARAMS = {
    "F.celu": {"alpha0p5": "alpha=0.5", "alpha2": "alpha=2.0"},
    "F.elu": {"alpha0p3": "alpha=0.3", "alpha1p7": "alpha=1.7"},
    "F.gelu": {"tanh": "approximate='tanh'", "none": "approximate='none'"},
    "F.hardshrink": {"lambd0p2": "lambd=0.2", "lambd1p5": "lambd=1.5"},
    "F.hardtanh": {"m2_p2": "min_val=-2.0, max_val=2.0", "0_6": "min_val=0.0, max_val=6.0"},
    "F.leaky_relu": {"slope0p1": "negative_slope=0.1", "slope0": "negative_slope=0.0"},
    "F.softplus": {"beta2": "beta=2.0", "beta0p5_thr1": "beta=0.5, threshold=1.0"},
    "F.softshrink": {"lambd0p3": "lambd=0.3", "lambd1": "lambd=1.0"},
    "F.threshold": {"t0p5_v2": "0.5, 2.0", "tm1_v0": "-1.0, 0.0"},
}


@family("F.relu", "F.relu6", "F.sigmoid", "F.tanh", "F.silu", "F.mish", "F.selu", "F.hardswish",
        "F.hardsigmoid", "F.logsigmoid", "F.softsign", "F.tanhshrink")
def simple_activations():
    for op, fn in _SIMPLE.items():
        yield from unary(op, fn + "({x})", -3.0, 3.0)


@family("F.celu", "F.elu", "F.gelu", "F.hardshrink", "F.hardtanh", "F.leaky_relu", "F.softplus",
        "F.softshrink", "F.threshold")
def activations_with_params():
    for op, settings in _PARAMS.items():
        if op == "F.threshold":     # threshold and value have no defaults
            yield from unary(op, "F.threshold({x}, 0.1, 20.0)", -3.0, 3.0, extra=[
                (name, f"F.threshold(x0, {args})", [f(2, 8, 6, 5, low=-3, high=3)])
                for name, args in settings.items()])
        else:
            yield from _with_params(op, op, settings)


# op -> two argument settings (the second one also tried on a wider input)
_INPLACE = {
    "F.relu_": ("", ""),
    "F.elu_": (", alpha=0.5", ", 2.0"),
    "F.hardtanh_": (", -0.5, 0.5", ", min_val=0.0, max_val=6.0"),
    "F.leaky_relu_": (", 0.2", ", negative_slope=0.01"),
    "F.threshold_": (", 0.2, -1.0", ", threshold=-0.5, value=3.0"),
}


@family("F.relu_", "F.elu_", "F.hardtanh_", "F.leaky_relu_", "F.threshold_")
def inplace_activations():
    # Acts on an intermediate, never on a model input the harness may reuse.
    for op, (a0, a1) in _INPLACE.items():
        rows = [
            ("r4", f"x = x0 * 2.0\n{op}(x{a0})\nx", [f(1, 3, 8, 8)]),
            ("r2_c13", f"x = x0 - 0.25\n{op}(x{a1})\nx", [f(13, 7)]),
            ("r3_b2_return_result", f"x = x0 + 0.0\n{op}(x{a0})", [f(2, 4, 9, low=-3, high=3)]),
            ("r1_c16_setting2", f"x = x0 * 3.0\n{op}(x{a1})", [f(16)]),
            ("r5_setting2", f"x = x0 + 0.1\n{op}(x{a1})\nx * 2.0", [f(1, 4, 2, 3, 5)]),
        ]
        yield from table(op, rows, tags={"inplace"})


@family("F.rrelu")
def _rrelu():
    rows = [
        ("eval_r4", "F.rrelu(x0, training=False)", [f(1, 3, 8, 8)]),
        ("eval_bounds", "F.rrelu(x0, 0.1, 0.4, training=False)", [f(2, 13, 9)]),
        ("eval_r1", "F.rrelu(x0, lower=0.0, upper=0.5)", [f(16)]),
        ("eval_noncontig", "x = x0.transpose(1, 2)\nF.rrelu(x, training=False)", [f(1, 4, 6, 5)]),
        ("train", "F.rrelu(x0, 0.1, 0.3, training=True)", [f(2, 8, 8)],
         {"reasons": {"random": _RANDOM}}),
    ]
    return table("F.rrelu", rows)


@family("F.rrelu_")
def _rrelu_():
    rows = [
        ("eval_r4", "x = x0 * 2.0\nF.rrelu_(x, training=False)", [f(1, 3, 8, 8)]),
        ("eval_bounds", "x = x0 - 0.5\nF.rrelu_(x, 0.05, 0.25)", [f(2, 13, 9)]),
        ("eval_r1_kw", "x = x0 * 3.0\nF.rrelu_(x, lower=0.2, upper=0.2)\nx", [f(16)]),
        ("eval_noncontig", "x = x0.transpose(1, 2) * 1.0\nF.rrelu_(x)", [f(2, 5, 6)]),
        ("train", "x = x0 + 0.0\nF.rrelu_(x, training=True)", [f(2, 8, 8)],
         {"reasons": {"random": _RANDOM}}),
    ]
    return table("F.rrelu_", rows, tags={"inplace"})


@family("F.prelu")
def _prelu():
    rows = [
        ("c1_shared", "F.prelu(x0, self.w)", [f(1, 3, 8, 8)], {"params": {"w": (1,)}}),
        ("c3_per_channel", "F.prelu(x0, self.w)", [f(2, 3, 8, 8)], {"params": {"w": (3,)}}),
        ("c13_r3", "F.prelu(x0, self.w)", [f(1, 13, 10)], {"params": {"w": (13,)}}),
        ("c16_r2", "F.prelu(x0, self.w)", [f(4, 16)], {"params": {"w": (16,)}}),
        ("r1_shared", "F.prelu(x0, self.w)", [f(12)], {"params": {"w": (1,)}}),
        ("c8_r5", "F.prelu(x0, self.w)", [f(1, 8, 3, 4, 5)], {"params": {"w": (8,)}}),
    ]
    return table("F.prelu", rows)


@family("F.glu")
def _glu():
    rows = [
        ("dneg1", "F.glu(x0)", [f(1, 3, 8, 8)]),
        ("d1_c16", "F.glu(x0, dim=1)", [f(2, 16, 5)]),
        ("d0_r1", "F.glu(x0, dim=0)", [f(12)]),
        ("d2", "F.glu(x0, 2)", [f(1, 3, 6, 7)]),
        ("noncontig", "x = x0.transpose(1, 2)\nF.glu(x, dim=1)", [f(2, 5, 8)]),
    ]
    return table("F.glu", rows)


def _softmax_rows(fn: str) -> list[tuple]:
    return [
        ("d1_c13", f"{fn}(x0, dim=1)", [f(1, 13, 8, 8, low=-4, high=4)]),
        ("dneg1", f"{fn}(x0, dim=-1)", [f(2, 4, 16, low=-4, high=4)]),
        ("d0_r1", f"{fn}(x0, dim=0)", [f(20, low=-4, high=4)]),
        ("d2_r4", f"{fn}(x0, 2)", [f(1, 3, 5, 7, low=-4, high=4)]),
        ("r2_d1", f"{fn}(x0, dim=1)", [f(6, 12, low=-4, high=4)]),
        ("noncontig", f"x = x0.transpose(1, 2)\n{fn}(x, dim=-1)", [f(2, 5, 8, low=-4, high=4)]),
        ("dtype_f64", f"{fn}(x0, dim=-1, dtype=torch.float64)", [f(3, 10, low=-4, high=4)]),
    ]


@family("F.softmax", "F.log_softmax", "F.softmin")
def softmaxes():
    for op in ("F.softmax", "F.log_softmax", "F.softmin"):
        yield from table(op, _softmax_rows(op))


@family("F.gumbel_softmax")
def _gumbel():
    why = "adds Gumbel noise drawn at every call"
    rows = [
        ("soft", "F.gumbel_softmax(x0, tau=1.0)", [f(2, 10)]),
        ("hard", "F.gumbel_softmax(x0, tau=0.5, hard=True)", [f(4, 8)]),
        ("d1_r3", "F.gumbel_softmax(x0, dim=1)", [f(2, 6, 5)]),
        ("tau2", "F.gumbel_softmax(x0, tau=2.0, dim=-1)", [f(1, 3, 16)]),
        ("hard_d0", "F.gumbel_softmax(x0, hard=True, dim=0)", [f(7, 3)]),
    ]
    return table("F.gumbel_softmax", rows, reasons={"random": why})


@family("F.softmax")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("F.softmax", "dneg1_b1", "F.softmax(x0, dim=-1)", [f(1, 5, 9, low=-4, high=4)])
