"""Recover a standard `torch.nn` module from its TorchScript form: the class from the
qualified type name, constructor arguments from attributes (scripted), weight shapes and the
constants its forward graph passes to `aten::` calls (traced), weights from its state."""
from __future__ import annotations

import importlib
import inspect
import re

import torch
import torch.nn as nn

from . import argorder, schema

_MANGLE = re.compile(r"___torch_mangle_\d+\.")
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict)
# Constructor arguments whose aten argument has another name (tried after the same name).
_ALIASES = {"scale_factor": "scale_factors", "padding": "pad", "unflattened_size": "sizes"}
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
    return arguments(cls, dict(script.state_dict()), schema.graph_constants(graph), kinds,
                     lambda name: _attribute(script, name),
                     _attention_dims(script) if cls is nn.MultiheadAttention else {})


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
                kwargs[name] = _plain(value)
                break
    return kwargs


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
    scaling the forward applies, batch_first from a leading transpose of the query. A misread
    is caught when the module is checked against the original (argorder)."""
    out = attention_sizes(dict(script.named_parameters(recurse=False)))
    if not out:
        return {}
    embed_dim = out["embed_dim"]
    graph = script._c._get_method("forward").graph
    for node in graph.nodes():
        if node.kind() in ("aten::mul", "aten::div") and node.inputsAt(1).node().kind() == "prim::Constant":
            scale = schema.constant_value(node.inputsAt(1))
            scale = scale.item() if isinstance(scale, torch.Tensor) else scale
            if isinstance(scale, float) and scale > 0:
                head_dim = round((scale if node.kind() == "aten::div" else 1 / scale) ** 2)
                if head_dim and embed_dim % head_dim == 0:
                    out["num_heads"] = embed_dim // head_dim
                break
    query = list(graph.inputs())[1]
    first = query.uses()[0].user if query.uses() else None
    out["batch_first"] = first is not None and first.kind() == "aten::transpose"
    return out


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


def _plain(value):
    if isinstance(value, list):
        return tuple(value)
    return value


def recover(script) -> nn.Module | None:
    """The real nn module, or None when `script` is not a standard one we can rebuild."""
    cls = torch_class(script)
    if cls is None:
        return None
    try:
        module = cls(**constructor_args(cls, script))
        _load_state(module, script)
        argorder.remember(module, script)
    except Exception:  # unrecoverable arguments: the caller replays the graph instead
        return None
    return module.eval()


def _load_state(module: nn.Module, script) -> None:
    load_state(module, script.state_dict())


def load_state(module: nn.Module, state: dict) -> None:
    """`state` into `module`; ValueError unless it is exactly the module's state."""
    state = {k: v.detach() for k, v in state.items()}
    missing, unexpected = module.load_state_dict(state, strict=False)
    mine = dict(module.state_dict())
    if unexpected or any(k not in state for k in mine if mine[k] is not None):
        raise ValueError("state mismatch")
