"""Functions that TorchScript lowers into several `aten::` nodes, recognised at their first
node and replayed as the one Python-API call users wrote (`F.normalize`, `F.softsign`, ...).
A fusion returns (the nodes it replaces, the result of the last one) or None to run nodes one by one."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import aten
from ..aten import written
from . import schema
from .schema import constant_value

FUSIONS = {}


def fusion(kind: str):
    def register(fn):
        FUSIONS.setdefault(kind, []).append(fn)
        return fn
    return register


def chain(node, kinds: list[str]) -> list | None:
    """The nodes after `node`, each the only user of the previous one's single output."""
    nodes = [node]
    for kind in kinds:
        uses = nodes[-1].output().uses() if nodes[-1].outputsSize() == 1 else []
        if len(uses) != 1 or uses[0].user.kind() != kind:
            return None
        nodes.append(uses[0].user)
    return nodes


def constants(node, *indices):
    try:
        return [constant_value(node.inputsAt(i)) for i in indices]
    except KeyError:
        return None


def try_fuse(node, env: dict):
    for fn in FUSIONS.get(node.kind(), ()):
        fused = fn(node, env)
        if fused is not None:
            return fused
    return None


@fusion("aten::linalg_vector_norm")
def _normalize(node, env):
    """F.normalize: x / vector_norm(x, p, dim, keepdim=True).clamp_min(eps).expand_as(x)."""
    nodes = chain(node, ["aten::clamp_min", "aten::expand_as", "aten::div"])
    values = constants(node, 1, 2, 3)
    if nodes is None or values is None or not values[2] or nodes[1].inputsAt(1).node().kind() != "prim::Constant":
        return None
    x, (_, expand, div) = node.inputsAt(0), nodes[1:]
    if expand.inputsAt(1) != x or div.inputsAt(0) != x:
        return None
    p, dim, _ = values
    dim = dim[0] if isinstance(dim, list) and len(dim) == 1 else dim
    eps = constant_value(nodes[1].inputsAt(1))
    return nodes, F.normalize(env[x], p=p, dim=dim, eps=eps)


@fusion("aten::abs")
def _softsign(node, env):
    """F.softsign: x / (abs(x) + 1)."""
    nodes = chain(node, ["aten::add", "aten::div"])
    if nodes is None or constants(nodes[1], 1, 2) != [1, 1] or nodes[2].inputsAt(0) != node.inputsAt(0):
        return None
    return nodes, F.softsign(env[node.inputsAt(0)])


@fusion("aten::tanh")
def _tanhshrink(node, env):
    """F.tanhshrink: x - tanh(x)."""
    nodes = chain(node, ["aten::sub"])
    if nodes is None or nodes[1].inputsAt(0) != node.inputsAt(0) or constants(nodes[1], 2) != [1]:
        return None
    return nodes, F.tanhshrink(env[node.inputsAt(0)])


@fusion("aten::neg")
def _softmin(node, env):
    """F.softmin: softmax(-x, dim, dtype)."""
    nodes = chain(node, ["aten::softmax"])
    values = constants(nodes[1], 1, 2) if nodes else None
    if values is None:
        return None
    dtype = schema.scalar_type(values[1])  # TorchScript keeps the dtype as its ScalarType code
    return nodes, F.softmin(env[node.inputsAt(0)], dim=values[0], dtype=dtype)


@fusion("aten::contiguous")
@fusion("aten::embedding_renorm_")
def _embedding_max_norm(node, env):
    """F.embedding(x, w, max_norm=m, norm_type=p) is traced as x.contiguous(), the rows of w it
    reads renormalised in place (aten::embedding_renorm_ on w.detach()), then aten::embedding.
    Replayed as the one F.embedding with max_norm: the converted model starts from the weights
    before the renorm and renormalises them as this one did (as on the Python door)."""
    contiguous = node if node.kind() == "aten::contiguous" else None
    indices = node.output() if contiguous else node.inputsAt(1)
    users = [u.user for u in indices.uses()]
    renorm = node if contiguous is None else next((u for u in users if u.kind() == "aten::embedding_renorm_"), None)
    if renorm is None:
        return None
    weight = renorm.inputsAt(0)
    if weight.node().kind() == "aten::detach":
        weight = weight.node().inputsAt(0)
    lookup = next((u for u in users if u.kind() == "aten::embedding" and u.inputsAt(0) == weight), None)
    values = constants(renorm, 2, 3)
    if lookup is None or values is None or any(v not in env for v in lookup.inputs() if v != indices) \
            or (contiguous is not None and any(u not in (renorm, lookup) for u in users)):
        return None
    kwargs = schema.named_args(lookup, [env.get(v) for v in lookup.inputs()])
    kwargs["indices"] = env[contiguous.inputsAt(0)] if contiguous is not None else env[indices]
    nodes = [n for n in (contiguous, renorm, lookup) if n is not None]
    return nodes, aten.call("embedding", {**kwargs, "max_norm": values[0], "norm_type": values[1]})


def _unsqueezed(value, dim: int):
    """The tensor `value` was made from by `.unsqueeze(dim)`, read by nothing else; else None."""
    node = value.node()
    if node.kind() != "aten::unsqueeze" or constants(node, 1) != [dim] or len(value.uses()) != 1:
        return None
    return node.inputsAt(0)


@fusion("aten::_convolution")
def _unbatched_convolution(node, env):
    """F.convNd / F.conv_transposeNd on an unbatched input: traced as x.unsqueeze(0), the
    batched call, .squeeze(0). Replayed as the one call on x, as the model wrote it."""
    x = _unsqueezed(node.inputsAt(0), 0)
    squeeze = _only_user(node, "aten::squeeze")
    if x is None or squeeze is None or constants(squeeze, 1) != [0]:
        return None
    kwargs = schema.named_args(node, [env[v] for v in node.inputs()])
    return [node, squeeze], aten.call("_convolution", {**kwargs, "input": env[x]})


_UNBATCHED_DROPOUTS = {"dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"}


@fusion("aten::feature_dropout")
@fusion("aten::feature_alpha_dropout")
def _unbatched_dropout(node, env):
    """F.dropout1d/2d/3d on an unbatched input: traced as x.unsqueeze(0), the channel
    dropout, .squeeze(0); the function is the one the trace's Python stack names."""
    x = _unsqueezed(node.inputsAt(0), 0)
    squeeze = _only_user(node, "aten::squeeze")
    spelled = aten.spelling.from_stack(node.sourceRange(), node.kind()[len("aten::"):])
    values = constants(node, 1, 2)
    if x is None or squeeze is None or constants(squeeze, 1) != [0] or values is None \
            or spelled is None or spelled.kind != "F" or spelled.name not in _UNBATCHED_DROPOUTS:
        return None
    return [node, squeeze], getattr(F, spelled.name)(env[x], values[0], values[1])


@fusion("aten::max_unpool2d")
def _max_unpool1d(node, env):
    """F.max_unpool1d: max_unpool2d on x.unsqueeze(-1) and indices.unsqueeze(-1), output size
    (n, 1), then .squeeze(-1)."""
    x, indices = _unsqueezed(node.inputsAt(0), -1), _unsqueezed(node.inputsAt(1), -1)
    squeeze = _only_user(node, "aten::squeeze")
    size = constants(node, 2)
    if None in (x, indices, squeeze, size) or constants(squeeze, 1) != [-1] or len(size[0]) != 2 or size[0][1] != 1:
        return None
    return [node, squeeze], aten.call("max_unpool1d", {"self": env[x], "indices": env[indices],
                                                       "output_size": size[0][:1]})


@fusion("aten::empty_like")
def _gumbel_softmax(node, env):
    """F.gumbel_softmax(x, tau, hard=False, dim): noise -log(Exp(1)) drawn like x, then
    softmax((x + noise) / tau, dim). Kept as the one random call (the noise is drawn anew on
    every run, never a constant)."""
    nodes = chain(node, ["aten::exponential_", "aten::log", "aten::neg", "aten::add", "aten::div", "aten::softmax"])
    if nodes is None:
        return None
    x, add, div, softmax = node.inputsAt(0), nodes[4], nodes[5], nodes[6]
    lambd, alpha, tau, dim = constants(nodes[1], 1), constants(add, 2), constants(div, 1), constants(softmax, 1, 2)
    if add.inputsAt(0) != x or lambd != [1.0] or alpha != [1] or tau is None or dim is None or dim[1] is not None:
        return None
    return nodes, F.gumbel_softmax(env[x], tau=_number(tau[0]), hard=False, dim=dim[0])


@fusion("aten::embedding_bag")
def _embedding_bag_2d(node, env):
    """F.embedding_bag on a 2-d input (one bag per row): traced as the input flattened, and
    offsets arange(0, numel, row length). Replayed on the 2-d input without offsets."""
    flat, offsets = node.inputsAt(1).node(), node.inputsAt(2).node()
    if flat.kind() != "aten::reshape" or constants(flat, 1) != [[-1]] or offsets.kind() != "aten::arange" \
            or len(node.inputsAt(1).uses()) != 1:
        return None
    x = env[flat.inputsAt(0)]
    if not isinstance(x, torch.Tensor) or x.dim() != 2 \
            or not torch.equal(env[node.inputsAt(2)], torch.arange(0, x.numel(), x.shape[1])):
        return None
    kwargs = schema.named_args(node, [env[v] for v in node.inputs()])
    used = tuple(bool(v.uses()) for v in node.outputs())
    if any(used[1:]):
        return None
    if kwargs.get("per_sample_weights") is not None:  # flattened as the input was
        weights = node.inputsAt(6).node()
        if weights.kind() != "aten::reshape" or constants(weights, 1) != [[-1]] \
                or getattr(env[weights.inputsAt(0)], "shape", None) != x.shape:
            return None
        kwargs["per_sample_weights"] = env[weights.inputsAt(0)]
    return [node], aten.call("embedding_bag", {**kwargs, "indices": x, "offsets": None}, used)[0]


def _shape_chain(node, kinds: list[str]) -> list | None:
    """Like chain(), but a result may also be read by aten::size (the shape the next view
    takes): those reads die with the chain."""
    nodes = [node]
    for kind in kinds:
        if nodes[-1].outputsSize() != 1:
            return None
        users = [u.user for u in nodes[-1].output().uses()]
        following = [u for u in users if u.kind() == kind]
        if len(following) != 1 or any(u.kind() not in (kind, "aten::size") for u in users):
            return None
        nodes.append(following[0])
    return nodes


@fusion("aten::view")
def _stft_center(node, env):
    """torch.stft(x, center=True, pad_mode=m): view to 3-d, F.pad(n_fft // 2 each side, m),
    view back, aten::stft."""
    nodes = _shape_chain(node, ["aten::pad", "aten::view", "aten::stft"])
    if nodes is None:
        return None
    pad, stft = nodes[1], nodes[3]
    amounts, mode = constants(pad, 1, 2) or (None, None)
    names = schema.argument_names(stft)
    values = dict(zip(names, (env.get(v) if v in env else _constant_or_none(v) for v in stft.inputs())))
    n_fft = values.get("n_fft")
    if not isinstance(n_fft, int) or amounts != [n_fft // 2, n_fft // 2] or "center" in values:
        return None
    kwargs = {k: v for k, v in values.items() if k != "self"}
    return nodes, torch.stft(env[node.inputsAt(0)], center=True, pad_mode=mode, **kwargs)


def _constant_or_none(value):
    try:
        return constant_value(value)
    except KeyError:
        return None


_INT64_MAX = 9223372036854775807


def _index_chain(node) -> list:
    """`x[a:b][:, c]` as tracing writes it: consecutive aten::slice / aten::select nodes, each
    the only user of the previous one's result."""
    nodes = [node]
    while True:
        uses = nodes[-1].output().uses()
        if len(uses) != 1 or uses[0].user.kind() not in ("aten::slice", "aten::select") \
                or uses[0].offset != 0:
            return nodes
        nodes.append(uses[0].user)


@fusion("aten::slice")
@fusion("aten::select")
def _merged_index(node, env):
    """A chain of slices and selects is one index `x[a:b, c]` (one Tensor.slice, as the
    Python-API capture records the same indexing), so that a write into it (`x[a:b, c:d] = 0`)
    is a write into a slice of x, not into a slice of a slice."""
    nodes = _index_chain(node)
    x = env.get(node.inputsAt(0))
    if len(nodes) < 2 or not hasattr(x, "dim"):
        return None
    items = _combined_index(nodes, x.dim())
    if items is None:
        return None
    return nodes, x[tuple(items)]


def _combined_index(nodes, rank: int) -> list | None:
    items, alive = [slice(None)] * rank, list(range(rank))
    for node in nodes:
        values = constants(node, *range(1, node.inputsSize()))
        if values is None:
            return None
        dim = values[0] % len(alive)
        original = alive[dim]
        if items[original] != slice(None):
            return None  # the same dim indexed twice
        if node.kind() == "aten::select":
            items[original] = values[1]
            alive.pop(dim)
        else:
            start, end, step = values[1:4]
            items[original] = slice(None if start in (None, 0) else start,
                                    None if end in (None, _INT64_MAX) else end, None if step == 1 else step)
    return items


def _only_user(node, kind: str):
    """The one node reading `node`'s single output, when it is of `kind`."""
    uses = node.output().uses() if node.outputsSize() == 1 else []
    return uses[0].user if len(uses) == 1 and uses[0].user.kind() == kind else None


_LP_POOLS = {"aten::avg_pool1d": F.lp_pool1d, "aten::avg_pool2d": F.lp_pool2d, "aten::avg_pool3d": F.lp_pool3d}


@fusion("aten::pow")
def _lp_pool(node, env):
    """F.lp_poolNd: y = avg_poolNd(x ** p), then (sign(y) * relu(abs(y))) * kernel volume, ** (1 / p)."""
    uses = node.output().uses() if node.outputsSize() == 1 else []
    pool = uses[0].user if len(uses) == 1 else None
    if pool is None or pool.kind() not in _LP_POOLS:
        return None
    readers = {u.user.kind(): u.user for u in pool.output().uses()}
    if len(pool.output().uses()) != 2 or set(readers) != {"aten::sign", "aten::abs"}:
        return None
    sign, absolute = readers["aten::sign"], readers["aten::abs"]
    relu = _only_user(absolute, "aten::relu")
    product = relu and _only_user(relu, "aten::mul")
    scale = product and _only_user(product, "aten::mul")
    root = scale and _only_user(scale, "aten::pow")
    values = constants(node, 1)
    arguments = constants(pool, 1, 2, 4)
    if root is None or _only_user(sign, "aten::mul") is not product or values is None or arguments is None:
        return None
    kernel, stride, ceil_mode = arguments
    fn = _LP_POOLS[pool.kind()]
    result = fn(env[node.inputsAt(0)], values[0], written.short(kernel), written.stride(stride), ceil_mode)
    return [node, pool, sign, absolute, relu, product, scale, root], result


# F.local_response_norm lowered: x * x, a window average across channels (avg_pool3d over a
# 5-d view, or avg_pool2d over an unsqueezed 3-d input), then x / (k + alpha * avg) ** beta.
_LRN_CHAINS = (["aten::view", "aten::pad", "aten::avg_pool3d", "aten::squeeze", "aten::view",
                "aten::mul", "aten::add", "aten::pow", "aten::div"],
               ["aten::unsqueeze", "aten::pad", "aten::avg_pool2d", "aten::squeeze",
                "aten::mul", "aten::add", "aten::pow", "aten::div"])


@fusion("aten::mul")
def _local_response_norm(node, env):
    x = node.inputsAt(0)
    if node.inputsAt(1) != x:
        return None
    for kinds in _LRN_CHAINS:
        nodes = _shape_chain(node, kinds)
        if nodes is not None:
            break
    else:
        return None
    pool, (scale, offset, power, div) = nodes[3], nodes[-4:]
    window, alpha, k, beta = constants(pool, 1), constants(scale, 1), constants(offset, 1), constants(power, 1)
    if div.inputsAt(0) != x or None in (window, alpha, k, beta) or constants(offset, 2) != [1]:
        return None
    return nodes, F.local_response_norm(env[x], window[0][0], alpha=_number(alpha[0]), beta=_number(beta[0]),
                                        k=_number(k[0]))


def _number(value):
    return value.item() if isinstance(value, torch.Tensor) else value
