"""Standard `nn.*` modules back from `nn_module_stack`: the nodes a call of a standard module
left in the graph become one call of the real `nn.X`, its class from the stack, its constructor
arguments from its weights and the constants of its aten calls (`torchscript/stdmodules.py`
reads both), its weights from the program's state. The outermost standard module is tried
first (the Python door keeps it whole); one that cannot be rebuilt exactly, checked on the
example values, gives way to the standard modules inside it, and at last to its nodes."""
from __future__ import annotations

import inspect
import itertools

import torch
import torch.nn as nn

from ..python.modules import is_leaf_class
from ..torchscript import argorder, stdmodules
from . import nodes as fx
from .steps import Plan, Step, external_inputs, outputs_of, well_placed


def stack_entries(node) -> list[tuple[str, str, type]]:
    """(call key, module path, class) of each standard module the node runs in, outermost first."""
    out = []
    for key, (path, qualified) in (node.meta.get("nn_module_stack") or {}).items():
        qualified = qualified if isinstance(qualified, str) else f"{qualified.__module__}.{qualified.__qualname__}"
        cls = stdmodules.nn_class(qualified)
        if cls is not None and is_leaf_class(cls):
            out.append((key, path, cls))
    return out


def plan_modules(plan: Plan, graph, values: dict, state: dict, fqns: dict, shared: dict) -> None:
    """Add a step for every standard-module call that can be rebuilt. `state`: the program's
    tensors by path; `fqns`: placeholder -> the path of the tensor it stands for; `shared`
    (path -> module) collects the modules, one per path."""
    calls = [n for n in graph.nodes if n.op == "call_function" and stack_entries(n)]
    _plan_level(plan, calls, 0, (values, state, fqns, shared))


def _plan_level(plan, calls, level, context) -> None:
    groups: dict[str, list] = {}
    for node in calls:
        entries = stack_entries(node)
        if len(entries) > level:
            groups.setdefault(entries[level][0], []).append(node)
    for key, members in groups.items():
        _, path, cls = stack_entries(members[0])[level]
        step = _module_step(cls, path, members, plan, *context)
        if step is not None:
            plan.add(step)
        else:
            _plan_level(plan, members, level + 1, context)


def _module_step(cls, path, members, plan, values, state, fqns, shared) -> Step | None:
    if not well_placed(members, plan.order) or not plan.free(members):
        return None
    prefix = path + "."
    own = {k[len(prefix):]: v for k, v in state.items() if k.startswith(prefix)}
    owned = {n for n in external_inputs(members) if fqns.get(n, "").startswith(prefix)}
    inputs = [n for n in external_inputs(members) if n not in owned]
    outputs = outputs_of(members)
    if any(n.op != "placeholder" and n.op != "call_function" for n in inputs):
        return None
    args = tuple(_as_read(values, n, members) for n in inputs)
    expected = [values[n] for n in outputs]
    candidates = [shared[path]] if path in shared else _candidates(cls, own, members, args)
    for module in candidates:
        call = _matching_call(module, args, expected, _call_keywords(module, members))
        if call is not None:
            shared.setdefault(path, module)
            pack, named, picks = call
            return Step(members, inputs, outputs, _runner(module, pack, named, picks, _positional(module)),
                        f"nn.{cls.__name__} {path}")
    return None


def _as_read(values, node, members: list):
    """The input's value when the module's first call reads it (written in place before: a
    mask filled by index)."""
    reader = next(m for m in members if node in m.all_input_nodes)
    return values.as_read(reader, node) if isinstance(values, fx.Values) else values[node]


def _candidates(cls, state: dict, members: list, args: tuple):
    """Modules of `cls` that the constructor arguments read from the graph allow, the most
    likely first (alternatives where the graph leaves an argument open, `_OPEN`)."""
    constants = fx.constants(members)
    kinds = [fx.aten_name(n) or "" for n in members]
    sizes = stdmodules.attention_sizes(state) if cls is nn.MultiheadAttention else \
        _layer_sizes(state, constants, kinds) if cls in _LAYERS else {}
    base = stdmodules.arguments(cls, state, constants, kinds, extra=sizes)
    for extra in _OPEN.get(cls, lambda m, b, a: [{}])(members, base, args):
        try:
            module = stdmodules.built(cls, {**base, **extra}, state)  # the program's tensors, not copies
        except Exception:  # arguments misread: no such module
            continue
        yield module.eval()


def _attention_variants(members: list, base: dict, args: tuple):
    """nn.MultiheadAttention: the head count and batch_first leave no trace in the weights.
    The graph hints at them (`_hinted_heads`, a leading transpose of the query); the hinted
    pair comes first, since a small example may not tell the others apart, and each other
    candidate is a module built and run (vit_b_16: 25 of them a layer without the hint)."""
    embed = base.get("embed_dim")
    if embed is None:
        return []
    heads = [h for h in range(1, embed + 1) if embed % h == 0]
    fused = any(fx.aten_name(n) == "_native_multi_head_attention" for n in members)  # batch_first only
    hinted = {"num_heads": _hinted_heads(members, embed),
              "batch_first": fused or fx.aten_name(members[0]) in ("transpose", "permute")}
    others = [{"num_heads": h, "batch_first": b} for b, h in itertools.product((False, True), heads)]
    return [hinted] + [o for o in others if o != hinted] if hinted["num_heads"] else others


def _hinted_heads(members: list, embed: int) -> int | None:
    """The head count the attention's nodes show: the fused kernel's argument, the
    1/sqrt(head_dim) scaling of the query (need_weights), or the query's last size where
    scaled_dot_product_attention takes it split into heads, (batch, heads, length, head_dim)."""
    for node in members:
        name, head_dim = fx.aten_name(node), None
        if name == "_native_multi_head_attention":
            heads = node.args[4] if len(node.args) > 4 else None
            return heads if isinstance(heads, int) and heads > 0 and embed % heads == 0 else None
        if name in ("mul", "div") and isinstance(node.args[1], float) and node.args[1] > 0:
            scale = node.args[1] if name == "div" else 1 / node.args[1]
            head_dim = round(scale ** 2)
        elif name == "scaled_dot_product_attention":
            head_dim = _last_size(node.args[0])
        if head_dim and embed % head_dim == 0:
            return embed // head_dim
    return None


def _last_size(node) -> int | None:
    """A node's static last size from the program's metadata (None where it is symbolic)."""
    value = node.meta.get("val") if hasattr(node, "meta") else None
    size = value.shape[-1] if isinstance(value, torch.Tensor) and value.dim() else None
    return size if isinstance(size, int) else None


_LAYERS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)


def _layer_sizes(state: dict, constants: dict, kinds: list) -> dict:
    """nn.Transformer{Encoder,Decoder}Layer's sizes from its attention and feed-forward weights."""
    attention, linear1 = state.get("self_attn.in_proj_weight"), state.get("linear1.weight")
    if attention is None or linear1 is None:
        return {}
    return {"d_model": attention.shape[1], "dim_feedforward": linear1.shape[0], "bias": "linear1.bias" in state,
            "activation": "gelu" if "gelu" in kinds else "relu", "layer_norm_eps": constants.get("eps", 1e-5),
            "dropout": constants.get("p", 0.1)}


def _layer_variants(members: list, base: dict, args: tuple):
    """nn.Transformer{Encoder,Decoder}Layer: the head count, batch_first and norm_first leave no trace in
    the weights; each is tried (different heads, layouts or norm orders give other values), the
    head count its attention's nodes hint at first (`_hinted_heads`)."""
    embed = base.get("d_model")
    if embed is None:
        return []
    hinted = _hinted_heads(members, embed)
    heads = sorted((h for h in range(1, embed + 1) if embed % h == 0), key=lambda h: h != hinted)
    return [{"nhead": h, "batch_first": b, "norm_first": n}
            for h, n, b in itertools.product(heads, (False, True), (False, True))]


def _channel_variants(spatial: int):
    """A normalisation without weights: its feature count is the input's channel count, the
    dim before its `spatial` ones (dim 1 of a batch, dim 0 of an unbatched input). Its result
    does not depend on the count, so the check on the example values cannot tell."""
    def variants(members: list, base: dict, args: tuple):
        if "num_features" in base or not args or not isinstance(args[0], torch.Tensor) \
                or args[0].dim() not in (spatial + 1, spatial + 2):
            return [{}]
        return [{"num_features": args[0].shape[args[0].dim() - spatial - 1]}]
    return variants


_OPEN = {nn.MultiheadAttention: _attention_variants, nn.TransformerEncoderLayer: _layer_variants,
         nn.TransformerDecoderLayer: _layer_variants,
         nn.InstanceNorm1d: _channel_variants(1),
         nn.InstanceNorm2d: _channel_variants(2), nn.InstanceNorm3d: _channel_variants(3)}


def _call_keywords(module, members: list) -> tuple[dict, ...]:
    """Keyword arguments of an nn.MultiheadAttention call: need_weights=False changes the kernel,
    not the value (scaled_dot_product_attention, as the graph shows, instead of bmm, softmax,
    bmm), and the same call gives the oracle's bits; average_attn_weights=False keeps the
    weights per head (their shape tells)."""
    if not isinstance(module, nn.MultiheadAttention):
        return ({},)
    fused = any(fx.aten_name(n) in _FUSED_ATTENTION for n in members)
    kernels = ({"need_weights": False}, {}) if fused else ({}, {"need_weights": False})
    return (*kernels, {"average_attn_weights": False})


_FUSED_ATTENTION = {"scaled_dot_product_attention", "_native_multi_head_attention"}


def _matching_call(module, args: tuple, expected: list, keywords: tuple[dict, ...] = ({},)):
    """(how to pack the inputs, the keyword arguments, which flat result is each output) for
    a call of `module` that reproduces `expected` (masks may go by name: `argorder.mask_calls`);
    None when no call does."""
    with torch._C.DisableTorchFunction(), torch.no_grad():  # unseen by the tracer
        for extra in keywords:
            for packed, masks in argorder.mask_calls(module, args):
                try:
                    got = argorder.flat(type(module).forward(module, *packed, **extra, **masks))
                except Exception:  # a wrong order usually fails on shapes
                    continue
                picks = _picks(got, expected)
                if picks is not None:
                    named = {**extra, **{k: _template(v, args) for k, v in masks.items()}}
                    return _template(packed, args), named, picks
    return None


class _At(int):
    """In a call template: the call's input at this index (anything else is a constant)."""


def _template(packed, args: tuple):
    """The packed call with each argument replaced by its index among `args`."""
    if isinstance(packed, tuple):
        return tuple(_template(p, args) for p in packed)
    return _At(next(i for i, a in enumerate(args) if a is packed))


def _fill(template, values: list):
    if isinstance(template, tuple):
        return tuple(_fill(t, values) for t in template)
    return values[template] if isinstance(template, _At) else template


def _picks(got: list, expected: list) -> list[int] | None:
    picks = []
    for value in expected:
        index = next((i for i, g in enumerate(got) if _same(g, value)), None)
        if index is None:
            return None
        picks.append(index)
    return picks


def _same(a, b) -> bool:
    try:
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype != b.dtype:
            return False
        return argorder.equal(a, b)
    except (RuntimeError, TypeError):
        return False


def _positional(module) -> int | None:
    """How many leading arguments a call passes by position; the rest go by name, as a model
    passes a transformer layer's masks (`tgt_mask=`), which the emitters tell apart by name.
    None: all by position."""
    if isinstance(module, _LAYERS):
        return 2 if isinstance(module, nn.TransformerDecoderLayer) else 1
    return None


def _runner(module, pack, named: dict, picks, positional: int | None = None):
    names = list(inspect.signature(type(module).forward).parameters)[1:] if positional is not None else []

    def run(inputs: list) -> list:
        args = _fill(pack, inputs)
        keywords = dict(zip(names[positional:], args[positional:])) if positional is not None else {}
        keywords.update({k: _fill(v, inputs) for k, v in named.items()})
        result = argorder.flat(module(*args[:positional], **keywords))
        return [result[i] for i in picks]
    return run
