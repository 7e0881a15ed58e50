"""Check a recovered standard module against its TorchScript original on the real inputs.
Tracing orders a submodule's inputs by first use, not by the Python signature
(`nn.RNNCell(x, h)` may be traced as forward(h, x)): we look for the argument order that
reproduces the original's result. None means no order does (constructor arguments were
misread): the caller then replays the original graph instead.

Within `unprobed()` (a whole-model capture, rebuilt.Replay.checked_capture) a call only one
order fits goes unprobed: the whole model's result is checked against the original's once,
and on a difference the capture runs again, probing every call."""
from __future__ import annotations

import contextlib
import functools
import inspect
import itertools

import torch

from ..aten.families.pool import unpool_stride

_SCRIPT = "_pnnx_script"


def remember(module, script) -> None:
    object.__setattr__(module, _SCRIPT, script)


# Modules whose state argument is a tuple that tracing passes as separate inputs: its position.
_PACKED_STATE = {torch.nn.LSTM: 1, torch.nn.LSTMCell: 1}


# Modules whose trailing list argument tracing passes as separate numbers: its position
# (`deconv(x, output_size=[h, w])` is traced as forward(x, h, w)).
_PACKED_SIZES = {torch.nn.ConvTranspose1d: 1, torch.nn.ConvTranspose2d: 1, torch.nn.ConvTranspose3d: 1}


def _pack(module, args: tuple) -> tuple:
    at = _PACKED_SIZES.get(type(module))
    if at is not None and len(args) > at and all(_is_number(a) for a in args[at:]):
        return (*args[:at], list(args[at:]))
    at = _PACKED_STATE.get(type(module))
    if at is None or len(args) <= at + 1:
        return args
    return (*args[:at], tuple(args[at:]))


def _is_number(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _copies(args):
    """`args` with every tensor cloned: the probes below must not touch the real inputs (an
    in-place module, `nn.Hardswish(inplace=True)`, would otherwise apply twice)."""
    if isinstance(args, (tuple, list)):
        return type(args)(_copies(a) for a in args)
    return args.clone() if isinstance(args, torch.Tensor) else args


def _as_script_args(args: tuple) -> tuple:
    """The script took traced numbers as tensors (prim::NumToTensor)."""
    return tuple(torch.tensor(int(a)) if _is_number(a) else a for a in args)


# Tracing passes a tensor given for several parameters once (`mha(x, x, x)` -> forward(x)).
_ARITY = {torch.nn.MultiheadAttention: 3}


def _with_repeats(module, args: tuple):
    arity = _ARITY.get(type(module), 0)
    if len(args) >= arity:
        return []
    return [c for c in itertools.product(args, repeat=arity)
            if all(any(a is b for b in c) for a in args)]


def script_of(module):
    return getattr(module, _SCRIPT, None)


# Keyword arguments a traced call may have passed (the graph only keeps their effect).
def _call_keywords(module, script) -> tuple[dict, ...]:
    """nn.MultiheadAttention computes its weights (bmm, softmax, bmm) only when asked for them,
    and calls scaled_dot_product_attention otherwise: the traced kernel tells which call was
    made, and the same call gives bit for bit the same result."""
    if not isinstance(module, torch.nn.MultiheadAttention):
        return ({},)
    graph = script.inlined_graph  # held: its nodes die with it
    fused = graph.findAllNodes("aten::scaled_dot_product_attention") or \
        graph.findAllNodes("aten::_native_multi_head_attention")
    return ({"need_weights": False}, {}) if fused else ({}, {"need_weights": False})


# Constructor arguments a traced module keeps no trace of, built with this placeholder and
# filled at its first call from its input (fill_unknown); the check against the original
# below rejects a wrong guess.
UNKNOWN = 0


def fill_unknown(module, args: tuple) -> None:
    """nn.InstanceNorm without weights or statistics: num_features is the input's channel count
    (its forward only warns about a wrong one). nn.MaxUnpool: the graph keeps the output size
    only; kernel_size = stride = output / input, no padding (nn.MaxUnpool2d(2))."""
    x = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if x is None:
        return
    if isinstance(module, torch.nn.modules.instancenorm._InstanceNorm) and module.num_features == UNKNOWN:
        module.num_features = x.shape[x.dim() - module._get_no_batch_dim()]
    elif isinstance(module, torch.nn.modules.pooling._MaxUnpoolNd) and set(module.kernel_size) == {UNKNOWN}:
        size = _unpool_size(module)
        if size is not None and len(size) <= x.dim():
            spatial = x.shape[x.dim() - len(size):]
            module.kernel_size = module.stride = tuple(unpool_stride(int(o), int(i)) for o, i in zip(size, spatial))
            module.padding = (0,) * len(size)


def _unpool_size(module) -> list | None:
    """The output size the traced forward passed to aten::max_unpoolNd (a 1-d unpool is traced
    as a 2-d one of size (n, 1))."""
    script = script_of(module)
    if script is None:
        return None
    graph = script.inlined_graph  # held: its nodes die with it
    for kind in ("aten::max_unpool2d", "aten::max_unpool3d"):
        for node in graph.findAllNodes(kind):
            size = node.inputsAt(2).node()
            if size.kind() == "prim::ListConstruct" and all(v.node().kind() == "prim::Constant" for v in size.inputs()):
                values = [v.toIValue() for v in size.inputs()]
                return values[:1] if isinstance(module, torch.nn.MaxUnpool1d) else values
    return None


_UNPROBED: list = []  # while unprobed() runs: a list of the modules whose calls went unprobed


@contextlib.contextmanager
def unprobed():
    """Unambiguous calls go unprobed within; yields the list of the modules they called."""
    skipped: list = []
    _UNPROBED.append(skipped)
    try:
        yield skipped
    finally:
        _UNPROBED.pop()


def _one_call(module, script, args: tuple, method: str) -> bool:
    """Whether one call only can be the traced one: a single tensor argument, a module whose
    forward takes exactly one (no masks, packed states, repeats or guessed sizes) and a
    traced method that returns one tensor."""
    if len(args) != 1 or not isinstance(args[0], torch.Tensor) or not _single_input(type(module)):
        return False
    if getattr(module, "return_indices", False):
        return False
    outputs = list(script._c._get_method(method).graph.outputs())
    return len(outputs) == 1 and isinstance(outputs[0].type(), torch._C.TensorType)


@functools.lru_cache(maxsize=None)
def _single_input(cls) -> bool:
    if any(issubclass(cls, c) for c in (*_PACKED_STATE, *_PACKED_SIZES, *_ARITY, *_CAUSAL_SLOT)) or \
            issubclass(cls, (torch.nn.modules.pooling._MaxUnpoolNd, torch.nn.modules.instancenorm._InstanceNorm)):
        return False
    parameters = list(inspect.signature(cls.forward).parameters.values())[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
        return False
    tensors = [p for p in parameters if p.default is inspect.Parameter.empty or p.name.endswith("mask")
               or p.name in _OPTIONAL_TENSORS]
    return len(tensors) == 1


def python_args(module, args: tuple, method: str = "forward") -> tuple[tuple, dict, list[int] | None] | None:
    """The arguments in the order (and nesting) the module's Python forward takes them, the
    keyword arguments the traced call passed, and where each of the traced results is among
    the Python call's flattened results (None: in order; tracing may drop results nobody
    reads and reorder a tuple's, as an LSTM with proj_size returns (h, c, out)). `method`:
    the traced call (`forward1` for the second call of a shared module, traced apart)."""
    script = script_of(module)
    fill_unknown(module, args)
    if script is None:
        return _pack(module, args), {}, None
    if _UNPROBED and _one_call(module, script, args, method):
        _UNPROBED[-1].append(module)
        return args, {}, None
    with torch._C.DisableTorchFunction(), torch.no_grad():  # unseen by the tracer
        expected = flat(getattr(script, method)(*_as_script_args(_copies(args))))
        for keywords in _call_keywords(module, script):
            for packed, masks in _calls(module, script, args):
                try:  # no hooks: unrecorded
                    got = flat(type(module).forward(module, *_copies(packed), **keywords,
                                                    **materialize(masks)))
                except Exception:  # a wrong order usually fails on shapes
                    continue
                where = _positions(got, expected)
                if where is not None:
                    return packed, {**keywords, **masks}, None if where == list(range(len(where))) else where
    return None


def _calls(module, script, args: tuple):
    """(positional arguments, mask keywords) the module may have been called with: the orders
    below; for attention modules also the traced tensors spread over the query (source,
    target) parameters and the masks, and, where the recorded attention is causal and tracing
    dropped the mask, a causal mask of our own."""
    if isinstance(module, torch.nn.modules.pooling._MaxUnpoolNd) and _unpool_size(module) is not None:
        # the output size tracing made a constant: given by name, as models give it
        yield from ((packed, {"output_size": _unpool_size(module)}) for packed in orders(module, args))
    calls = mask_calls(module, args)
    yield from calls
    slot = _CAUSAL_SLOT.get(type(module))
    if slot is not None and _causal(script):
        for packed, masks in calls:
            if slot not in masks:
                yield packed, {**masks, slot: _causal_mask(module, packed)}


def mask_calls(module, args: tuple) -> list[tuple[tuple, dict]]:
    """(positional arguments, mask keywords): for a module with mask parameters each traced
    tensor in a required parameter or a mask given by name (first, as the emitters want
    them), then the plain orders."""
    plain = [(packed, {}) for packed in orders(module, args)]
    return [*_masked(module, args), *plain] if _mask_slots(module) else plain


def _mask_slots(module) -> list[str]:
    """Optional tensor parameters a call may have given by name (attention masks,
    nn.EmbeddingBag's per_sample_weights)."""
    return [name for name in inspect.signature(type(module).forward).parameters
            if name.endswith("mask") or name in _OPTIONAL_TENSORS]


_OPTIONAL_TENSORS = {"per_sample_weights"}  # offsets: positional, as models pass them


def _masked(module, args: tuple):
    """Each traced tensor in a required parameter (several may take the same one: `mha(x, x,
    x)` is traced as forward(x)) or in one mask parameter; every tensor used."""
    parameters = list(inspect.signature(type(module).forward).parameters.values())[1:]
    required = [p.name for p in parameters if p.default is inspect.Parameter.empty
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    slots = _mask_slots(module)
    for picks in itertools.product(range(len(args)), repeat=len(required)):
        rest = [i for i in range(len(args)) if i not in picks]
        if not rest:
            continue  # without masks: one of orders()
        for names in itertools.permutations(slots, len(rest)):
            yield tuple(args[i] for i in picks), {n: args[i] for n, i in zip(names, rest)}


# Where a causal attention's mask goes, and which positional argument's sequence it covers.
_CAUSAL_SLOT = {torch.nn.MultiheadAttention: "attn_mask", torch.nn.TransformerEncoderLayer: "src_mask",
                torch.nn.TransformerEncoder: "mask", torch.nn.TransformerDecoderLayer: "tgt_mask",
                torch.nn.TransformerDecoder: "tgt_mask", torch.nn.Transformer: "tgt_mask"}
_CAUSAL_SEQUENCE = {torch.nn.Transformer: 1}  # the target; the others' first argument


def _causal(script) -> bool:
    """Whether an attention of the traced forward is causal with no mask (`is_causal=True`:
    tracing keeps the flag and drops the mask the Python call was given)."""
    graph = script.inlined_graph  # held: its nodes die with it
    for node in graph.findAllNodes("aten::scaled_dot_product_attention"):
        flag = node.inputsAt(5).node()
        if flag.kind() == "prim::Constant" and flag.output().toIValue() is True:
            return True
    return False


def _causal_mask(module, packed: tuple):
    x = packed[_CAUSAL_SEQUENCE.get(type(module), 0)]
    attention = next(m for m in module.modules() if isinstance(m, torch.nn.MultiheadAttention))
    return CausalMask(x.shape[1 if attention.batch_first and x.dim() == 3 else 0], x.dtype)


class CausalMask:
    """A causal attention mask of `size` x `size`, made when the call is made (so the tracer
    records how: torch.full and torch.triu, as models write it)."""

    def __init__(self, size: int, dtype: torch.dtype):
        self.size, self.dtype = size, dtype

    def make(self) -> torch.Tensor:
        return torch.triu(torch.full((self.size, self.size), float("-inf"), dtype=self.dtype), diagonal=1)


def materialize(keywords: dict, made: dict | None = None) -> dict:
    """The keywords with each CausalMask made; `made` keeps those of one graph's calls, so that
    the layers of one nn.TransformerEncoder share one mask, as the model's did."""
    made = {} if made is None else made
    out = dict(keywords)
    for k, v in keywords.items():
        if isinstance(v, CausalMask):
            if (v.size, v.dtype) not in made:
                made[v.size, v.dtype] = v.make()
            out[k] = made[v.size, v.dtype]
    return out


def orders(module, args: tuple):
    """The argument tuples the module's forward may have been called with: each order of
    `args` (and, for modules taking one tensor several times, repeats), packed."""
    candidates = itertools.chain(itertools.permutations(args) if len(args) <= 4 else [args],
                                 _with_repeats(module, args))
    for order in candidates:
        yield _pack(module, tuple(order))


def flat(value) -> list:
    """The values of nested tuples and lists; None dropped (`mha(..., need_weights=False)`
    returns (out, None), which tracing records as out alone)."""
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in flat(v)]
    return [] if value is None else [value]


def _positions(got: list, expected: list) -> list[int] | None:
    """For each expected result, the first unused equal one among `got`."""
    where, used = [], set()
    for value in expected:
        found = next((i for i, g in enumerate(got) if i not in used and equal(g, value)), None)
        if found is None:
            return None
        used.add(found)
        where.append(found)
    return where


def equal(x, y) -> bool:
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        return x.shape == y.shape and torch.allclose(x, y, rtol=1e-4, atol=1e-5, equal_nan=True)
    return not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor) and x == y
