"""Which operators draw random numbers: the one list the self-check (which compares nothing
downstream of one) and constant folding (which must not freeze a draw into a
`pnnx.Attribute`: it would repeat the traced draw at every run) both read."""
from __future__ import annotations

from .ir import Graph, Operand, Operator

RANDOM_OPS = frozenset({
    "torch.rand", "torch.rand_like", "torch.randn", "torch.randn_like", "torch.randint",
    "torch.randint_like", "torch.randperm", "torch.bernoulli", "Tensor.bernoulli", "torch.multinomial",
    "Tensor.multinomial", "torch.normal", "Tensor.normal", "torch.poisson", "Tensor.uniform",
    "Tensor.random", "Tensor.exponential", "Tensor.geometric", "Tensor.cauchy", "Tensor.log_normal",
    "F.gumbel_softmax", "nn.FractionalMaxPool2d", "nn.FractionalMaxPool3d", "F.fractional_max_pool2d",
    "F.fractional_max_pool3d", "F.fractional_max_pool2d_with_indices", "F.fractional_max_pool3d_with_indices"})
_TRAINING_RANDOM = ("F.dropout", "F.dropout1d", "F.dropout2d", "F.dropout3d", "F.alpha_dropout",
                    "F.feature_alpha_dropout", "F.rrelu", "F.rrelu_")
_EVAL_BY_DEFAULT = ("F.rrelu", "F.rrelu_")  # training=False unless given; dropout's default is True


def is_random(op: Operator) -> bool:
    """A random operator, or a moduleop whose captured body holds one."""
    if op.type in RANDOM_OPS:
        return True
    if op.subgraph is not None and any(is_random(inner) for inner in op.subgraph.ops):
        return True
    if op.type == "F.scaled_dot_product_attention":  # attention dropout draws whatever the mode
        return _number(op.params.get("dropout_p")) > 0
    return op.type in _TRAINING_RANDOM and op.params.get("training", op.type not in _EVAL_BY_DEFAULT) is True


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def random_operands(graph: Graph) -> set[Operand]:
    """Operands whose value depends on a random operator."""
    random: set[Operand] = set()
    for op in graph.ops:
        if is_random(op) or any(i in random for i in op.inputs):
            random.update(op.outputs)
    return random
