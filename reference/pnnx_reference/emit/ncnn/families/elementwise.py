"""The elementwise torch functions and Tensor methods (torch.add, Tensor.sqrt, torch.addcmul,
...), lowered as expression trees into BinaryOp, UnaryOp and Erf chains (see arithmetic.py)."""
from __future__ import annotations

from .... import expression as ex
from ..arithmetic import UNARY, argument_nodes, lower_binary_function, lower_expression, lower_tree
from ..context import Context, param
from ..registry import LOWERINGS


def _binary_fn(func: str):
    return lambda ctx, op: lower_binary_function(ctx, op, func)


def _unary_fn(func: str):
    def lower(ctx: Context, op) -> None:
        node = ex.Call(func, tuple(argument_nodes(op, ("input",)).values()))
        decimals = param(op, "decimals", 0) if func == "round" else 0
        if decimals:  # round(x * 10^d) / 10^d
            scale = ex.Literal(10.0 ** decimals, repr(10.0 ** decimals))
            node = ex.Call("div", (ex.Call(func, (ex.Call("mul", (node.args[0], scale)),)), scale))
        lower_tree(ctx, op, node, op.inputs, op.outputs[0].name)
    return lower


for _f in ("add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "fmod", "remainder",
           "floor_divide", "logaddexp"):
    LOWERINGS.register(f"torch.{_f}", f"Tensor.{_f}", batchless=True)(_binary_fn(_f))
for _f in list(UNARY) + ["erf"]:
    if _f != "tanh":  # torch.tanh is an activation (TanH)
        LOWERINGS.register(f"torch.{_f}", f"Tensor.{_f}", batchless=True)(_unary_fn(_f))


@LOWERINGS.register("torch.addcmul", batchless=True)
def addcmul(ctx: Context, op) -> None:
    lower_expression(ctx, op, "add(@0,mul(mul(@1,@2),@3))", ("input", "tensor1", "tensor2", "value"),
                     op.outputs[0].name)


@LOWERINGS.register("torch.addcdiv", batchless=True)
def addcdiv(ctx: Context, op) -> None:
    lower_expression(ctx, op, "add(@0,mul(div(@1,@2),@3))", ("input", "tensor1", "tensor2", "value"),
                     op.outputs[0].name)
