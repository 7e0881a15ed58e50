"""Decomposed composites folded back. torch.export records, on every node, the Python
function call it came from (`meta["torch_fn"]`: `("softsign_1", "function.softsign")`);
when one call left several aten nodes (`F.softsign` -> abs, add, div; after
`run_decompositions()`, `F.linear` -> permute, addmm, ...) they become that one call again.
Its non-tensor arguments are read from the constants of the nodes, by name or through the
call's rule in `FOLDS` (one small rule per function whose aten arguments are named otherwise);
a fold is kept only when it reproduces the nodes' values on the example inputs, so an
ambiguous pattern keeps the core operators."""
from __future__ import annotations

import inspect
import itertools

import torch
import torch.nn.functional as F
from torch.fx.node import map_arg

from ...registry import Registry
from ..aten import written
from ..torchscript import argorder
from . import nodes as fx
from .steps import Plan, Step, external_inputs, outputs_of, well_placed

FOLDS = Registry("export-folds", "Python function a decomposed call came from (`normalize`) -> "
                 "fn(constants) giving its non-tensor arguments", doors=(".pt2",))
fold = FOLDS.register

# Where torch.export says a call came from -> the namespaces it may name.
_KINDS = {"function": (F, torch), "builtin_function_or_method": (torch, F)}
# Functions that run several calls of their own, each recorded under its own name: never folded whole.
_NEVER = {"interpolate", "upsample", "dropout", "stft", "istft", "embedding_bag",
          "multi_head_attention_forward", "fractional_max_pool2d", "fractional_max_pool3d"}
# Random functions: a fold is checked by running its nodes and the call from one seed (the same
# draws, so the same bits), not against the values of the evaluation's own draw.
_SEEDED = {"gumbel_softmax"}


def plan_folds(plan: Plan, graph, values: dict) -> None:
    calls: dict[tuple, list] = {}
    for node in graph.nodes:
        origin = node.meta.get("torch_fn")
        if node.op == "call_function" and origin and node not in plan.covered:
            calls.setdefault(tuple(origin), []).append(node)
    for (key, where), members in calls.items():
        if len(members) > 1 or fx.aten_name(members[0]) not in (where.rpartition(".")[2], None):
            step = _fold(where, members, plan, values)
            if step is not None:
                plan.add(step)


def _function(where: str):
    kind, _, name = where.rpartition(".")
    if name in _NEVER or name.startswith("_"):
        return None, name
    for namespace in _KINDS.get(kind, ()):
        fn = getattr(namespace, name, None)
        if callable(fn):
            return fn, name
    return None, name


def _fold(where, members, plan, values) -> Step | None:
    fn, name = _function(where)
    if fn is None or not plan.free(members) or not well_placed(members, plan.order):
        return None
    inputs = external_inputs(members)
    outputs = outputs_of(members)
    if not inputs or len(outputs) != 1 or any(not isinstance(values.get(n), torch.Tensor) for n in inputs):
        return None
    rule = FOLDS.lookup(name)
    params = _params(fn, len(inputs), rule.fn(fx.constants(members)) if rule else fx.constants(members))
    if params is None:
        return None
    expected = values[outputs[0]]
    # a probe may write its arguments (F.embedding with max_norm renormalises the weight's rows):
    # the program's own tensors are probed as copies
    probe = {n: values[n].clone() if n.op == "placeholder" else values[n] for n in inputs}
    if name in _SEEDED:
        expected = _seeded(lambda: _replay(members, probe)[outputs[0]])
    for order in _orders(inputs):
        args = [probe[n] for n in order]
        if _reproduces(fn, args, params, expected, seeded=name in _SEEDED):
            return Step(members, list(order), outputs, _runner(fn, params), f"{where} (folded)")
    return None


def _orders(inputs: list):
    return itertools.permutations(inputs) if len(inputs) <= 3 else [inputs]


def _params(fn, tensors: int, constants: dict) -> dict | None:
    """The function's non-tensor arguments that the constants name; None when it takes fewer
    tensors than the pattern reads."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < tensors and not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        return None
    rest = parameters[tensors:]
    found = {p.name: constants[p.name] for p in rest if p.name in constants and p.kind != p.VAR_KEYWORD}
    return written.sizes(found, also=("output_size",))


def _reproduces(fn, args, params, expected, seeded: bool = False) -> bool:
    with torch._C.DisableTorchFunction(), torch.no_grad():
        try:
            got = _seeded(lambda: fn(*args, **params)) if seeded else fn(*args, **params)
        except Exception:
            return False
    if seeded:  # the same draws: the same bits
        return isinstance(got, torch.Tensor) and got.dtype == expected.dtype and got.shape == expected.shape \
            and torch.equal(got, expected)
    return isinstance(got, torch.Tensor) and got.dtype == expected.dtype and argorder.equal(got, expected)


def _seeded(run):
    """`run()` from a fixed seed of the CPU generator, whose state is given back afterwards."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return run()


def _replay(members: list, inputs: dict) -> dict:
    """The members' values, run again from the values of their inputs."""
    env = dict(inputs)
    with torch._C.DisableTorchFunction(), torch.no_grad():
        for node in members:
            env[node] = node.target(*map_arg(node.args, env.__getitem__), **map_arg(node.kwargs, env.__getitem__))
    return env


def _runner(fn, params):
    def run(inputs: list) -> list:
        return [fn(*inputs, **params)]
    return run


# --- functions whose aten arguments are named otherwise -----------------------------------------
@fold("embedding", produces=("F.embedding",))
def _embedding(constants):
    """aten's padding_idx -1 is F.embedding's None; max_norm and norm_type from embedding_renorm_."""
    out = {k: constants[k] for k in ("max_norm", "norm_type", "scale_grad_by_freq", "sparse") if k in constants}
    padding = constants.get("padding_idx", -1)
    out["padding_idx"] = None if padding == -1 else padding
    return out


@fold("normalize", produces=("F.normalize",))
def _normalize(constants):
    """linalg_vector_norm(ord, dim) .clamp_min(min) .expand_as .div; decomposed: pow/sum/pow/clamp."""
    out = {"p": constants.get("ord", 2.0), "eps": constants.get("min", 1e-12)}
    dim = constants.get("dim")
    if dim is not None:
        out["dim"] = dim[0] if isinstance(dim, (list, tuple)) and len(dim) == 1 else dim
    return out


@fold("gumbel_softmax", produces=("F.gumbel_softmax",))
def _gumbel_softmax(constants):
    """(logits - log(exponential noise)) / tau, softmax over dim; hard=True adds the one-hot
    scatter (value 1.0) of the maximum."""
    return {"tau": constants.get("other", 1.0), "hard": "value" in constants, "dim": constants.get("dim", -1)}


@fold("lp_pool1d", "lp_pool2d", "lp_pool3d", produces=("F.lp_pool1d", "F.lp_pool2d", "F.lp_pool3d"))
def _lp_pool(constants):
    """x ** p, avg_pool (kernel, stride, ceil_mode), then (sign * relu(abs)) * kernel volume
    ** (1/p): the first pow's exponent is p (the last one's 1/p, written as a float32
    literal, would not give torch's bits); no stride given is aten's empty list."""
    return {"norm_type": constants.get("exponent"), "kernel_size": constants.get("kernel_size"),
            "stride": constants.get("stride") or None, "ceil_mode": constants.get("ceil_mode", False)}


@fold("softmin", "softmax", "log_softmax", produces=("F.softmin", "F.softmax", "F.log_softmax"))
def _softmax_like(constants):
    return {"dim": constants.get("dim")}


@fold("local_response_norm", produces=("F.local_response_norm",))
def _local_response_norm(constants):
    """avg_pool over a padded square, then (k + alpha * mean) ** beta."""
    kernel = constants.get("kernel_size")
    size = kernel[0] if isinstance(kernel, (list, tuple)) else kernel
    return {"size": size, "beta": constants.get("exponent", 0.75)}
