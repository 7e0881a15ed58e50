"""`prim::` nodes: structure (attributes, method calls, lists, tuples, control flow)."""
from __future__ import annotations

import re

import torch

from ...errors import ConversionError
from ...registry import Registry
from ..aten.spelling import in_torch
from . import argorder

RULES = Registry("torchscript-prim", "`prim::` node kind -> fn(node, args, env) returning its outputs",
                 doors=(".pt",))
_run_block = _replay = None


def bind(run_block) -> None:
    global _run_block
    _run_block = run_block


def bind_replay(replay) -> None:
    """rebuilt.Replay (rebuilt imports the interpreter, which imports this module)."""
    global _replay
    _replay = replay


rule = RULES.register


@rule("prim::Constant")
def _constant(node, args, env):
    value = node.output().toIValue()
    if isinstance(value, torch.Tensor) and value.dim() == 0 and not _a_tensor_of_the_model(node):
        return [value.item()]  # a traced Python scalar (`x * 2` records the tensor {2})
    return [value]


def _a_tensor_of_the_model(node) -> bool:
    """A 0-d constant the model made itself with `torch.tensor(2.5)` (lowered to lift_fresh,
    or to + detach in the model's own code), or what the graph returns."""
    return any(u.user.kind() in _TENSOR_MAKERS
               or (u.user.kind() == "aten::to" and u.offset == 0 and not in_torch(u.user.sourceRange()))
               for u in node.output().uses())


_TENSOR_MAKERS = {"aten::lift_fresh", "aten::lift_fresh_copy", "prim::Return"}


@rule("prim::GetAttr")
def _get_attr(node, args, env):
    owner, name = args[0], node.s("name")
    if len(args) == 1 and node.output().type().kind() == "NoneType":
        return [None]  # a traced forward that only returned its input (nn.Identity)
    if hasattr(owner, "attribute"):
        return [owner.attribute(name)]
    return [getattr(owner, name)]


@rule("prim::CallMethod")
def _call_method(node, args, env):
    owner, name = args[0], node.s("name")
    if len(args) == 1 and node.output().type().kind() == "NoneType":
        return [None]  # a traced forward that only returned its input (nn.Identity)
    if hasattr(owner, "call_method") and name != "forward":
        return _results(node, owner.call_method(name, tuple(args[1:])))
    if re.fullmatch(r"forward\d*", name):
        # tracing names the second call of a shared module forward1, forward2, ...
        call = argorder.python_args(owner, tuple(args[1:]), name)
        if call is None:  # the recovered module does not reproduce the original: replay it
            return _results(node, _replay_of(owner).call_method(name, tuple(args[1:])))
        args_in_order, keywords, where = call
        result = owner(*args_in_order, **argorder.materialize(keywords, env.setdefault(_MASKS, {})))
        if isinstance(result, tuple):  # tracing flattens (out, (h, c)), drops what nobody reads
            values = argorder.flat(result)
            values = tuple(values[i] for i in where) if where is not None else tuple(values)
            if node.outputsSize() == 1 and node.output().type().kind() == "TupleType":
                result = values
            else:
                result = values[0] if node.outputsSize() == 1 else values[:node.outputsSize()]
        return _results(node, result)
    return _results(node, getattr(owner, name)(*args[1:]))


def _replay_of(module):
    """The script behind a recovered module, rebuilt as a Replay: its graph calls the script's
    children, each recovered (or replayed) in turn; the recovered module's own children were
    built by its constructor and know nothing of the calls tracing recorded."""
    replay = getattr(module, _REPLAY, None)
    if replay is None:
        # built at its first call, during a trace: unseen by the tracer, which would otherwise
        # record its parameters' detach() (a weight tied to another module's) in that trace only
        with torch._C.DisableTorchFunction():
            replay = _replay(argorder.script_of(module))
        object.__setattr__(module, _REPLAY, replay)  # not a child: the tracer inlines its calls
    return replay


_REPLAY = "_pnnx_replay"
_MASKS = "causal masks"  # env entry: the masks made for this graph's calls (argorder.materialize)


def _results(node, value) -> list:
    return [value] if node.outputsSize() == 1 else list(value)


@rule("prim::ListConstruct")
def _list(node, args, env):
    return [list(args)]


@rule("prim::TupleConstruct")
def _tuple(node, args, env):
    return [tuple(args)]


@rule("prim::ListUnpack", "prim::TupleUnpack")
def _unpack(node, args, env):
    return list(args[0])


@rule("prim::TupleIndex")
def _tuple_index(node, args, env):
    return [args[0][args[1]]]


@rule("prim::NumToTensor", "aten::Int", "aten::Float", "aten::Bool", "aten::ScalarImplicit", "prim::unchecked_cast",
      "aten::IntImplicit", "aten::FloatImplicit")
def _scalar(node, args, env):
    value = args[0]
    if isinstance(value, torch.Tensor) and value.dim() == 0 and node.kind() != "prim::NumToTensor" \
            and not _read_as_tensor(node):
        return [value.item()]
    return [value]


# calls whose Scalar arguments torch also takes as 0-dim tensors: the tensor the model passed
# stays a tensor there (`torch.arange(x[3], x[4])` reads the input's values at run time)
_TAKES_TENSOR_SCALARS = {"aten::arange", "aten::linspace"}


def _read_as_tensor(node) -> bool:
    """aten::ScalarImplicit (the tracer's conversion of a tensor passed as a Scalar) read only
    by calls that take the tensor itself."""
    if node.kind() != "aten::ScalarImplicit":
        return False
    users = [u.user.kind() for v in node.outputs() for u in v.uses()]
    return bool(users) and all(kind in _TAKES_TENSOR_SCALARS for kind in users)


@rule("prim::device")
def _device(node, args, env):
    return [args[0].device]


@rule("prim::dtype")
def _dtype(node, args, env):
    return [args[0].dtype]


@rule("prim::If")
def _if(node, args, env):
    then_block, else_block = node.blocks()
    return _run_block(then_block if args[0] else else_block, env)


@rule("prim::Loop")
def _loop(node, args, env):
    trips, cond, carried = args[0], args[1], list(args[2:])
    (body,) = node.blocks()
    step = 0
    while cond and step < trips:
        env.update(zip(body.inputs(), [step, *carried]))
        cond, *carried = _run_block(body, env)
        step += 1
    return carried


@rule("prim::RaiseException")
def _raise(node, args, env):
    raise ConversionError(f"the TorchScript model raised: {args[0] if args else ''}")


@rule("prim::CallFunction")
def _call_function(node, args, env):
    raise ConversionError("TorchScript function calls (prim::CallFunction) are not supported; "
                          "trace the model or inline the function")
