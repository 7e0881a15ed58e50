"""Element-wise activations: a fixed number of operations per output element."""
from __future__ import annotations

from ..registry import Count, moved, output, rule

# operations per output element, as upstream counts them
_COSTS = {
    "relu": 1, "relu6": 1, "hardtanh": 1, "threshold": 1,
    "elu": 2, "celu": 2, "selu": 2, "leaky_relu": 2, "prelu": 2,
    "hardsigmoid": 3, "hardswish": 4, "softsign": 4,
    "sigmoid": 6, "silu": 6, "tanh": 6, "mish": 6, "softplus": 6, "glu": 6,
    "gelu": 10,
    "softmax": 5, "log_softmax": 5, "softmin": 5,
    "hardshrink": 0, "softshrink": 0, "tanhshrink": 0, "logsigmoid": 0, "rrelu": 0,
}
_MODULES = {"relu": "ReLU", "relu6": "ReLU6", "hardtanh": "Hardtanh", "threshold": "Threshold", "elu": "ELU",
            "celu": "CELU", "selu": "SELU", "leaky_relu": "LeakyReLU", "prelu": "PReLU",
            "hardsigmoid": "Hardsigmoid", "hardswish": "Hardswish", "softsign": "Softsign",
            "sigmoid": "Sigmoid", "silu": "SiLU", "tanh": "Tanh", "mish": "Mish", "softplus": "Softplus",
            "glu": "GLU", "gelu": "GELU", "softmax": "Softmax", "log_softmax": "LogSoftmax",
            "softmin": "Softmin", "hardshrink": "Hardshrink", "softshrink": "Softshrink",
            "tanhshrink": "Tanhshrink", "logsigmoid": "LogSigmoid", "rrelu": "RReLU"}


def _keys(name: str) -> list[str]:
    keys = [f"F.{name}", f"nn.{_MODULES[name]}"]
    if name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax", "selu", "celu", "prelu", "rrelu"):
        keys += [f"torch.{name}", f"Tensor.{name}"]
    return keys


def _counter(cost: int):
    def count(op) -> Count:
        return Count(cost * output(op), moved(op))
    return count


for _name, _cost in _COSTS.items():
    rule(*_keys(_name))(_counter(_cost))


rule("nn.Softmax2d")(_counter(5))


@rule("torch.clamp", "Tensor.clamp", "torch.clip", "Tensor.clip")
def _clamp(op) -> Count:
    return Count(output(op), moved(op))
