"""pnnx.Expression: the operations of its expression, each once per output element."""
from __future__ import annotations

from ...errors import PnnxError
from ...expression import ListExpr, parse
from ..registry import Count, moved, output, rule

# operations per element of each function the grammar names (1 for any other): upstream
# counts 4 for a power and the transcendental functions measured (sqrt, rsqrt, exp, log, sin),
# none for boolean logic
_COSTS = {"pow": 4, "sqrt": 4, "rsqrt": 4, "exp": 4, "log": 4, "sin": 4, "cos": 4,
          "and": 0, "or": 0, "xor": 0, "not": 0}


def _operations(node) -> int:
    children = getattr(node, "args", None) or ()
    own = _COSTS.get(getattr(node, "func", None), 1) if children else 0
    return own + sum(_operations(c) for c in children)


@rule("pnnx.Expression")
def _expression(op) -> Count:
    """A list (`[@0]`, `[size(@0,0),-1]`: indices or a shape) is no tensor and counts nothing;
    a literal (`1e-08`) writes its one element."""
    try:
        tree = parse(str(op.params["expr"]))
    except PnnxError:
        return Count(0, 0)
    if isinstance(tree, ListExpr):
        return Count(0, 0)
    return Count(_operations(tree) * output(op), moved(op))
