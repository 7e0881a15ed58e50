"""Recover a standard `torch.nn` module from its TorchScript form: the class from the
qualified type name, constructor arguments from attributes (scripted), weight shapes and the
constants its forward graph passes to `aten::` calls (traced), weights from its state."""
from __future__ import annotations

import importlib
import inspect
import re

import torch
import torch.nn as nn

from ..aten import written
from . import argorder, schema

_MANGLE = re.compile(r"___torch_mangle_\d+\.")
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)
# Constructor arguments whose aten argument has another name (tried after the same name).
_ALIASES = {"scale_factor": "scale_factors", "padding": "pad", "unflattened_size": "sizes",
            "size": "output_size", "norm_type": "exponent"}
# aten values that mean "not given" for one constructor argument.
_UNSET = {"padding_idx": -1}
_MODES = {"upsample_nearest": "nearest", "upsample_linear1d": "linear", "upsample_bilinear2d": "bilinear",
          "upsample_trilinear3d": "trilinear", "upsample_bicubic2d": "bicubic",
          "_upsample_nearest_exact": "nearest-exact"}


def qualified_name(script) -> str:
    """`__torch__.models.common.Focus`, without TorchScript's name mangling."""
    return _MANGLE.sub("", script._c._type().qualified_name())


def torch_class(script) -> type | None:
    """`__torch__.torch.nn.modules.conv.Conv2d` -> nn.Conv2d (None for user classes)."""
    return nn_class(qualified_name(script).removeprefix("__torch__."))


def nn_class(qualified: str) -> type | None:
    """`torch.nn.modules.conv.Conv2d` -> nn.Conv2d (None for user classes and containers)."""
    if not qualified.startswith("torch.nn.modules."):
        return None
    module_name, _, class_name = qualified.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError):
        return None
    if not issubclass(cls, nn.Module) or issubclass(cls, _CONTAINERS):
        return None
    return cls


def _weight_dims(cls, state: dict) -> dict:
    """Constructor arguments implied by the weight shapes (`state`: the module's state_dict)."""
    weight = state.get("weight")
    has_bias = state.get("bias") is not None
    out = {"bias": has_bias}
    if weight is None:
        out.update(affine=False, elementwise_affine=False)
        stats = state.get("running_mean")
        out["track_running_stats"] = stats is not None
        if stats is not None:
            out["num_features"] = stats.shape[0]
        return out
    out.update(affine=True, elementwise_affine=True)
    if issubclass(cls, nn.modules.conv._ConvNd):
        transposed = issubclass(cls, nn.modules.conv._ConvTransposeNd)
        outer, inner = weight.shape[0], weight.shape[1]
        out["kernel_size"] = tuple(weight.shape[2:])
        out["in_channels"] = outer if transposed else None
        out["out_channels"] = None if transposed else outer
        out["_inner"] = inner
    elif issubclass(cls, nn.Linear):
        out.update(out_features=weight.shape[0], in_features=weight.shape[1])
    elif issubclass(cls, nn.Bilinear):
        out.update(out_features=weight.shape[0], in1_features=weight.shape[1], in2_features=weight.shape[2])
    elif issubclass(cls, (nn.Embedding, nn.EmbeddingBag)):
        out.update(num_embeddings=weight.shape[0], embedding_dim=weight.shape[1])
    elif issubclass(cls, nn.PReLU):
        out["num_parameters"] = weight.numel()
    elif weight.dim() == 1:
        out.update(num_features=weight.shape[0], num_channels=weight.shape[0])
    if issubclass(cls, nn.LayerNorm):
        out["normalized_shape"] = tuple(weight.shape)
    out["track_running_stats"] = state.get("running_mean") is not None
    return out


def _conv_channels(dims: dict, constants: dict) -> dict:
    """Conv weight is (out, in/groups, k...) or, transposed, (in, out/groups, k...)."""
    inner = dims.pop("_inner", None)
    if inner is None:
        return dims
    groups = int(constants.get("groups", 1))
    if dims["in_channels"] is None:
        dims["in_channels"] = inner * groups
    else:
        dims["out_channels"] = inner * groups
    return dims


def _attribute(script, name: str):
    """A scripted module keeps its constructor arguments as attributes."""
    try:
        value = getattr(script, name)
    except (AttributeError, RuntimeError):
        return None
    if isinstance(value, (torch.Tensor, torch.nn.Module)) or callable(value):
        return None
    return value


def constructor_args(cls, script) -> dict:
    graph = script._c._get_method("forward").graph
    kinds = [n.kind()[len("aten::"):] for n in graph.nodes()]
    extra = {**(_attention_dims(script) if cls is nn.MultiheadAttention else {}),
             **(_transformer_dims(cls, script) if issubclass(cls, _TRANSFORMERS) else {}),
             **_EXTRACTORS.get(cls, lambda script: {})(script)}
    return arguments(cls, dict(script.state_dict()), schema.graph_constants(graph), kinds,
                     lambda name: _stored(script, name), extra)


def arguments(cls, state: dict, constants: dict, kinds: list[str], attribute=lambda name: None,
              extra: dict | None = None) -> dict:
    """Constructor arguments of `cls` from its state_dict, the constants its forward passes to
    aten calls (by schema name), the aten operators it calls, stored attributes and `extra`
    (what a frontend read otherwise); shared by the `.pt` and `.pt2` frontends."""
    dims = {**_conv_channels(_weight_dims(cls, state), constants), **_graph_dims(kinds),
            **_rnn_dims(state), **(extra or {})}
    kwargs = {}
    for name, parameter in _signature(cls).items():
        if name in ("self", "device", "dtype") or parameter.kind in (parameter.VAR_POSITIONAL,
                                                                     parameter.VAR_KEYWORD):
            continue
        for value in (dims.get(name), attribute(name), constants.get(name),
                      constants.get(_ALIASES.get(name, ""))):
            if value is not None and _UNSET.get(name, object()) != value:
                kwargs[name] = _plain(value, one_dim=cls.__name__.endswith("1d"))
                break
    if kwargs.get("stride") == ():  # aten's `stride=[]`: the default, the kernel size
        kwargs["stride"] = None
    kwargs = written.sizes(kwargs, also=("output_size",) if issubclass(cls, _ADAPTIVE) else ())
    if issubclass(cls, nn.Upsample) and kwargs.get("align_corners") is False:
        kwargs["align_corners"] = None  # F.interpolate's default, which aten spells False
    if "scale_factor" in kwargs:  # nn.Upsample(scale_factor=2): the traced output size is derived
        kwargs.pop("size", None)
    return kwargs


def _stored(script, name: str):
    """A constructor argument the module stores: an attribute (scripted), or a tensor one it
    keeps as a buffer (`_random_samples`)."""
    value = _attribute(script, name)
    if value is None and name.startswith("_"):
        return dict(script.named_buffers(recurse=False)).get(name)
    return value


def _signature(cls) -> dict:
    """Constructor parameters; nn.RNN/LSTM/GRU take *args, spelled out by RNNBase."""
    parameters = dict(inspect.signature(cls.__init__).parameters)
    if issubclass(cls, nn.RNNBase) and cls is not nn.RNNBase:
        parameters = {k: v for k, v in inspect.signature(nn.RNNBase.__init__).parameters.items()
                      if k != "mode"}
        if issubclass(cls, nn.RNN):
            parameters["nonlinearity"] = inspect.Parameter("nonlinearity", inspect.Parameter.KEYWORD_ONLY)
    return parameters


def _graph_dims(kinds: list[str]) -> dict:
    """Constructor arguments implied by which aten op the forward calls."""
    out = {}
    for kind in kinds:
        out.update({"mode": m for prefix, m in _MODES.items() if kind.startswith(prefix)})
        if kind in ("rnn_relu", "rnn_relu_cell"):
            out["nonlinearity"] = "relu"
    return out


def attention_sizes(state: dict) -> dict:
    """nn.MultiheadAttention's sizes and flags from its projection weights."""
    weight = state.get("in_proj_weight", state.get("q_proj_weight"))
    if weight is None:
        return {}
    embed_dim = weight.shape[1]
    return {"embed_dim": embed_dim, "bias": "in_proj_bias" in state, "add_bias_kv": "bias_k" in state,
            "kdim": state["k_proj_weight"].shape[1] if "k_proj_weight" in state else embed_dim,
            "vdim": state["v_proj_weight"].shape[1] if "v_proj_weight" in state else embed_dim}


def _attention_dims(script) -> dict:
    """nn.MultiheadAttention: sizes from the projections, num_heads from the 1/sqrt(head_dim)
    scaling the forward applies, batch_first from a leading transpose of an input. A misread
    is caught when the module is checked against the original (argorder)."""
    out = attention_sizes(dict(script.named_parameters(recurse=False)))
    if not out:
        return {}
    embed_dim = out["embed_dim"]
    graph = script._c._get_method("forward").graph
    native = next((n for n in graph.nodes() if n.kind() == "aten::_native_multi_head_attention"), None)
    if native is not None:  # the fused fast path (traced under no_grad) names its head count
        heads = schema.named_constants(native).get("num_head")
        return {**out, "batch_first": True, **({"num_heads": heads} if isinstance(heads, int) else {})}
    out["add_zero_attn"] = any(n.kind() == "aten::zeros" and _concatenated(n.output()) for n in graph.nodes())
    for node in graph.nodes():
        if node.kind() in ("aten::mul", "aten::div") and node.inputsAt(1).node().kind() == "prim::Constant":
            scale = schema.constant_value(node.inputsAt(1))
            scale = scale.item() if isinstance(scale, torch.Tensor) else scale
            if isinstance(scale, float) and scale > 0:
                head_dim = round((scale if node.kind() == "aten::div" else 1 / scale) ** 2)
                if head_dim and embed_dim % head_dim == 0:
                    out["num_heads"] = embed_dim // head_dim
                break
    if "num_heads" not in out:  # scaled_dot_product_attention scales by itself
        heads = _heads(graph, embed_dim)
        if heads:
            out["num_heads"] = heads
    # tracing orders the inputs by first use: the query need not come first (a mask may)
    out["batch_first"] = any(value.uses() and value.uses()[0].user.kind() == "aten::transpose"
                             for value in list(graph.inputs())[1:])
    return out


def _concatenated(value) -> bool:
    """Whether `value` is one of the tensors an aten::cat joins: add_zero_attn's zero key/value
    row, which no state tells."""
    lists = [u.user for u in value.uses() if u.user.kind() == "prim::ListConstruct"]
    return any(u.user.kind() == "aten::cat" for lst in lists for u in lst.output().uses())


_TRANSFORMERS = (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.Transformer)


def _heads(graph, embed_dim: int) -> int | None:
    """The query's split into heads, `q.view(tgt_len, bsz * num_heads, head_dim)`: the first
    3-d view; its middle size multiplies the batch by the constant head count, its last is the
    head size (a constant unless computed from the input's size)."""
    for node in graph.nodes():
        if node.kind() != "aten::view" or node.inputsAt(1).node().kind() != "prim::ListConstruct":
            continue
        sizes = list(node.inputsAt(1).node().inputs())
        if len(sizes) != 3:
            continue
        product = sizes[1].node()
        if product.kind() == "aten::Int":
            product = product.inputsAt(0).node()
        if product.kind() == "aten::mul" and product.inputsAt(1).node().kind() == "prim::Constant":
            heads = schema.constant_value(product.inputsAt(1))
            heads = int(heads.item() if isinstance(heads, torch.Tensor) else heads)
            return heads if heads > 0 and embed_dim % heads == 0 else None
        if sizes[-1].node().kind() == "prim::Constant":
            head_dim = sizes[-1].toIValue()
            return embed_dim // head_dim if isinstance(head_dim, int) and head_dim > 0 else None
        return None
    return None


def _transformer_dims(cls, script) -> dict:
    """nn.Transformer*Layer (and nn.Transformer, from its first encoder layer): sizes from the
    attention and feed-forward children, activation, norm order and eps from the layer's graph
    (or from the fused fast-path call a trace under no_grad records)."""
    out = {}
    if issubclass(cls, nn.Transformer):
        out["num_encoder_layers"] = len(list(script.encoder.layers.children()))
        out["num_decoder_layers"] = len(list(script.decoder.layers.children()))
        script = getattr(script.encoder.layers, "0")
    linear1 = script.linear1
    out.update(dim_feedforward=linear1.weight.shape[0], bias=isinstance(getattr(linear1, "bias", None), torch.Tensor),
               dropout=_forward_constants(script.dropout).get("p"))
    graph = script._c._get_method("forward").graph
    fused = next((n for n in graph.nodes() if n.kind() == "aten::_transformer_encoder_layer_fwd"), None)
    if fused is not None:
        given = schema.named_constants(fused)
        return {**out, "d_model": given.get("embed_dim"), "nhead": given.get("num_heads"), "batch_first": True,
                "activation": "gelu" if given.get("use_gelu") else "relu", "norm_first": given.get("norm_first"),
                "layer_norm_eps": given.get("eps")}
    attention = _attention_dims(script.self_attn)
    kinds = [n.kind() for n in graph.nodes()]
    calls = [_owner_name(n) for n in graph.nodes() if n.kind() == "prim::CallMethod"]
    out.update(d_model=attention.get("embed_dim"), nhead=attention.get("num_heads"),
               batch_first=attention.get("batch_first"),
               activation="gelu" if "aten::gelu" in kinds else "relu",
               norm_first="norm1" in calls and "self_attn" in calls and calls.index("norm1") < calls.index("self_attn"),
               layer_norm_eps=_forward_constants(script.norm1).get("eps"))
    return out


def _forward_constants(script) -> dict:
    """The constant aten arguments of a child's forward ({} when tracing never called it)."""
    try:
        return schema.graph_constants(script._c._get_method("forward").graph)
    except RuntimeError:
        return {}


def _owner_name(call) -> str | None:
    owner = call.inputsAt(0).node()
    return owner.s("name") if owner.kind() == "prim::GetAttr" else None


def _local_response_norm_dims(script) -> dict:
    """size from the window average, alpha its scale, k the offset, beta the power."""
    out = {}
    for node in script._c._get_method("forward").graph.nodes():
        given = schema.named_constants(node)
        kind = node.kind()
        if kind.startswith("aten::avg_pool") and "kernel_size" in given:
            out["size"] = given["kernel_size"][0]
        elif kind == "aten::mul" and isinstance(given.get("other"), (int, float, torch.Tensor)):
            out["alpha"] = _number(given["other"])
        elif kind == "aten::add" and isinstance(given.get("other"), (int, float, torch.Tensor)):
            out["k"] = _number(given["other"])
        elif kind == "aten::pow" and "exponent" in given:
            out["beta"] = _number(given["exponent"])
    return out


def _number(value):
    return value.item() if isinstance(value, torch.Tensor) else value


_BAG_MODES = ("sum", "mean", "max")


def _embedding_bag_dims(script) -> dict:
    for node in script._c._get_method("forward").graph.nodes():
        if node.kind() in ("aten::embedding_bag", "aten::_embedding_bag"):
            mode = schema.named_constants(node).get("mode")
            return {"mode": _BAG_MODES[mode]} if isinstance(mode, int) and 0 <= mode < 3 else {}
    return {}


def _instance_norm_dims(script) -> dict:
    """Without weights or statistics nothing holds the feature count: the input's channel
    count gives it at the first call (argorder.fill_unknown)."""
    return {} if dict(script.state_dict()) else {"num_features": argorder.UNKNOWN}


def _max_unpool_dims(script) -> dict:
    """The kernel is not in the graph: guessed at the first call (argorder.fill_unknown)."""
    return {"kernel_size": argorder.UNKNOWN}


_EXTRACTORS = {nn.LocalResponseNorm: _local_response_norm_dims, nn.EmbeddingBag: _embedding_bag_dims,
               nn.InstanceNorm1d: _instance_norm_dims, nn.InstanceNorm2d: _instance_norm_dims,
               nn.InstanceNorm3d: _instance_norm_dims, nn.MaxUnpool1d: _max_unpool_dims,
               nn.MaxUnpool2d: _max_unpool_dims, nn.MaxUnpool3d: _max_unpool_dims}


def _rnn_dims(state: dict) -> dict:
    """RNN/LSTM/GRU (and cells): sizes and layers from the weight names and shapes."""
    suffix = "_l0" if "weight_ih_l0" in state else ""
    if f"weight_ih{suffix}" not in state:
        return {}
    out = {"input_size": state[f"weight_ih{suffix}"].shape[1],
           "hidden_size": state[f"weight_hh{suffix}"].shape[1], "bias": f"bias_ih{suffix}" in state}
    if suffix:
        out["num_layers"] = sum(1 for k in state if re.fullmatch(r"weight_ih_l\d+", k))
        out["bidirectional"] = "weight_ih_l0_reverse" in state
        if "weight_hr_l0" in state:
            out["proj_size"] = state["weight_hr_l0"].shape[0]
            out["hidden_size"] = state["weight_hr_l0"].shape[1]
    return out


# Sizes a module takes as one int for every dim (`nn.MaxPool2d(2)`) are written short (aten
# spells them out per dim): what models write and what such modules keep; modules that expand
# them themselves (nn.Conv2d) expand them again.
_ADAPTIVE = (nn.modules.pooling._AdaptiveAvgPoolNd, nn.modules.pooling._AdaptiveMaxPoolNd)


def _plain(value, one_dim: bool = False):
    """aten's int lists as the tuples modules take; a 1-d module's one size as the int users
    write (LPPool1d multiplies by its kernel_size)."""
    if isinstance(value, list):
        return value[0] if one_dim and len(value) == 1 else tuple(value)
    return value


def recover(script) -> nn.Module | None:
    """The real nn module, or None when `script` is not a standard one we can rebuild."""
    cls = torch_class(script)
    if cls is None:
        return None
    try:
        module = built(cls, constructor_args(cls, script), script.state_dict())
        argorder.remember(module, script)
    except Exception:  # unrecoverable arguments: the caller replays the graph instead
        return None
    return module.eval()


def built(cls, kwargs: dict, state: dict) -> nn.Module:
    """`cls(**kwargs)` holding `state`: its own tensors where the module's state matches them
    name for name, shape and dtype (`_sharing`), copies otherwise; ValueError unless `state` is
    exactly the module's state."""
    module = _sharing(cls, kwargs, state)
    if module is None:
        module = cls(**kwargs)
        load_state(module, state)
    return module


def _sharing(cls, kwargs: dict, state: dict) -> nn.Module | None:
    """The module built on the meta device (nothing allocated or initialised) holding the
    tensors of `state`: no copy of the weights. None when its state does not match them name
    for name, shape and dtype (then it is built and loaded by copying)."""
    state = {k: v.detach() for k, v in state.items()}
    try:
        with torch.device("meta"):
            module = cls(**kwargs)
    except Exception:
        return None
    mine = {k: v for k, v in module.state_dict().items() if v is not None}
    if set(mine) != set(state) or any((v.shape, v.dtype) != (state[k].shape, state[k].dtype) for k, v in mine.items()):
        return None
    module.load_state_dict(state, assign=True)
    if any(t.is_meta for t in [*module.parameters(), *module.buffers()]):
        return None
    return module


def load_state(module: nn.Module, state: dict) -> None:
    """`state` into `module`; ValueError unless it is exactly the module's state."""
    state = {k: v.detach() for k, v in state.items()}
    missing, unexpected = module.load_state_dict(state, strict=False)
    mine = dict(module.state_dict())
    if unexpected or any(k not in state for k in mine if mine[k] is not None):
        raise ValueError("state mismatch")
