"""A standard `torch.nn` module kept as one operator: constructor arguments as params,
parameters and buffers as attrs."""
from __future__ import annotations

import functools
import inspect
import sys

import torch
import torch.nn as nn
from torch.nn.utils import parametrize
from torch.nn.utils.spectral_norm import SpectralNorm
from torch.nn.utils.weight_norm import WeightNorm

from ...errors import ConversionError, NotAParam
from ...ir import Attribute
from .params import to_param

# Never params: placement, in-place flags, and deprecated aliases of other arguments.
_SKIPPED = {"self", "device", "dtype", "inplace", "size_average", "reduce"}
_CONTAINERS = (nn.Sequential, nn.ModuleList, nn.ModuleDict, nn.ParameterList, nn.ParameterDict)

# Constructor arguments that are not stored under their own name on the module.
_READERS = {
    nn.MultiheadAttention: {
        "bias": lambda m: m.in_proj_bias is not None,
        "add_bias_kv": lambda m: m.bias_k is not None,
    },
    nn.PReLU: {"num_parameters": lambda m: m.weight.numel(), "init": None},
    nn.Embedding: {"_weight": None, "_freeze": None},
    nn.EmbeddingBag: {"_weight": None},
    nn.PairwiseDistance: {"p": lambda m: m.norm},
    nn.Hardtanh: {"min_value": None, "max_value": None},  # deprecated aliases of min_val/max_val
}


def _activation_name(layer) -> str:
    act = layer.activation
    return getattr(act, "__name__", type(act).__name__).lower()


def _layer_readers(first_layer) -> dict:
    """Constructor arguments of a Transformer*Layer, read back from its submodules."""
    return {
        "d_model": lambda m: first_layer(m).self_attn.embed_dim,
        "nhead": lambda m: first_layer(m).self_attn.num_heads,
        "dim_feedforward": lambda m: first_layer(m).linear1.out_features,
        "dropout": lambda m: first_layer(m).dropout.p,
        "activation": lambda m: _activation_name(first_layer(m)),
        "layer_norm_eps": lambda m: first_layer(m).norm1.eps,
        "batch_first": lambda m: first_layer(m).self_attn.batch_first,
        "norm_first": lambda m: first_layer(m).norm_first,
        "bias": lambda m: first_layer(m).linear1.bias is not None,
    }


for _cls in (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer):
    _READERS[_cls] = _layer_readers(lambda m: m)
_READERS[nn.Transformer] = {
    **_layer_readers(lambda m: m.encoder.layers[0]),
    "num_encoder_layers": lambda m: len(m.encoder.layers),
    "num_decoder_layers": lambda m: len(m.decoder.layers),
    "custom_encoder": None, "custom_decoder": None,
}
# Modules built from other modules (their constructor takes a layer): captured through their
# children instead of as one operator.
_COMPOSITES = (nn.TransformerEncoder, nn.TransformerDecoder)
# Modules whose constructor takes *args: the attributes that hold its arguments.
_STORED_ARGS = {
    nn.RNNBase: ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                 "bidirectional"),
}
_EXTRA_ARGS = {nn.LSTM: ("proj_size",), nn.RNN: ("nonlinearity",)}


# torchvision modules kept as one operator, under upstream's type
TORCHVISION_LEAVES = {"torchvision.ops.deform_conv.DeformConv2d": "torchvision.ops.DeformConv2d"}


def is_leaf(module: nn.Module) -> bool:
    """Standard torch.nn modules (not containers) stay one operator."""
    cls = plain_class(module)
    return is_leaf_class(cls) or _torchvision_type(cls) is not None


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _torchvision_type(cls: type) -> str | None:
    """The type of a torchvision module kept whole: the class itself, not a TorchScript
    module rebuilt under its name (torchscript/rebuilt.py), whose constructor is not known."""
    name = TORCHVISION_LEAVES.get(_qualified(cls))
    home = sys.modules.get(cls.__module__)
    return name if name is not None and getattr(home, cls.__qualname__, None) is cls else None


def is_leaf_class(cls: type) -> bool:
    module_name = cls.__module__
    return module_name.startswith("torch.nn.") and not issubclass(cls, _CONTAINERS + _COMPOSITES) \
        and not module_name.startswith(("torch.nn.parallel", "torch.nn.utils."))


def plain_class(module: nn.Module) -> type:
    """The class a module computes as. A parametrized module (`parametrizations.weight_norm`,
    `spectral_norm`, any `parametrize.register_parametrization`) is an instance of a class made
    for it, `Parametrized<Class>`, whose one base is the module's own class."""
    cls = type(module)
    return cls.__bases__[0] if parametrize.is_parametrized(module) else cls


def _computed_weights(module: nn.Module) -> tuple[list[str], set[str]]:
    """(the weights a parametrization or a legacy weight_norm / spectral_norm hook computes,
    the tensors it computes them from): the module is converted as the module it computes,
    with those weights as they are now (eval mode: spectral norm's power iteration is done)."""
    if parametrize.is_parametrized(module):
        return list(module.parametrizations), {f"parametrizations.{n}" for n in module.parametrizations}
    computed, sources = [], set()
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm):
            computed.append(hook.name)
            sources.update((f"{hook.name}_g", f"{hook.name}_v"))
        elif isinstance(hook, SpectralNorm):
            computed.append(hook.name)
            sources.update((f"{hook.name}_orig", f"{hook.name}_u", f"{hook.name}_v"))
    return computed, sources


def module_type(module: nn.Module, *, custom: bool = False) -> str:
    cls = plain_class(module)
    if custom:
        return _qualified(cls)
    return _torchvision_type(cls) or f"nn.{cls.__name__}"


@functools.lru_cache(maxsize=None)
def _constructor_parameters(cls) -> tuple:
    try:
        return tuple(inspect.signature(cls.__init__).parameters.values())
    except (TypeError, ValueError):
        return ()


def constructor_params(module: nn.Module) -> dict:
    for base, names in _STORED_ARGS.items():
        if isinstance(module, base):
            names = names + _EXTRA_ARGS.get(type(module), ())
            return dict(sorted((n, to_param(getattr(module, n), n)) for n in names))
    readers = _READERS.get(plain_class(module), {})
    params = {}
    for p in _constructor_parameters(plain_class(module)):
        if p.name in _SKIPPED or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in readers:
            if readers[p.name] is not None:
                params[p.name] = to_param(readers[p.name](module), p.name)
            continue
        if p.name.startswith("_"):
            continue
        value = _read(module, p)
        if value is _MISSING:
            continue
        try:
            params[p.name] = to_param(value, p.name)
        except NotAParam as err:
            if p.default is p.empty:  # a required argument the op could not be rebuilt without
                raise ConversionError(f"{module_type(module)}: argument {p.name}: {err}") from None
    return dict(sorted(params.items()))


_MISSING = object()


def _read(module, p):
    if hasattr(module, p.name):
        value = getattr(module, p.name)
        if isinstance(p.default, bool) and (value is None or isinstance(value, torch.Tensor)):
            return value is not None  # `bias=True` stores a Parameter (or None)
        if isinstance(value, (torch.Tensor, nn.Module)) or callable(value):
            return _MISSING
        return value
    if p.default is not p.empty:
        return p.default
    return _MISSING


def module_attrs(module: nn.Module) -> dict[str, Attribute]:
    attrs = {}
    computed, sources = _computed_weights(module)
    for name, tensor in list(module.named_parameters()) + list(module.named_buffers()):
        if tensor is None or name.split(".")[-1] == "num_batches_tracked" \
                or any(name == s or name.startswith(s + ".") for s in sources):
            continue
        attrs[name] = Attribute.from_torch(tensor)
    for name in computed:
        attrs[name] = Attribute.from_torch(getattr(module, name).detach())
    return dict(sorted(attrs.items()))


def _conv_transpose_call(module, args, kwargs) -> dict:
    """`deconv(x, output_size=...)` picks output_padding at call time; the op records it."""
    bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
    if bound.get("output_size") is None:
        return {}
    dims = len(module.kernel_size)
    padding = module._output_padding(bound["input"], list(bound["output_size"]), list(module.stride),
                                     list(module.padding), list(module.kernel_size), dims,
                                     list(module.dilation))
    return {"output_padding": [int(p) for p in padding]}


def _max_unpool_call(module, args, kwargs) -> dict:
    """`unpool(x, indices, output_size=...)`: the size is a forward argument, recorded as is."""
    size = inspect.signature(module.forward).bind(*args, **kwargs).arguments.get("output_size")
    return {} if size is None else {"output_size": [int(v) for v in size]}


def _attention_call(module, args, kwargs) -> dict:
    """need_weights / average_attn_weights change the result (and the kernel): recorded when
    they differ from the defaults, so the usual graph keeps upstream's params."""
    bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
    return {k: False for k in ("need_weights", "average_attn_weights") if bound.get(k, True) is False}


# Modules whose forward takes non-tensor arguments that change what the op computes. Those
# not accepted by the constructor are passed back at the call (emit/python FORWARD_PARAMS).
_CALL_PARAMS = {nn.ConvTranspose1d: _conv_transpose_call, nn.ConvTranspose2d: _conv_transpose_call,
                nn.ConvTranspose3d: _conv_transpose_call, nn.MaxUnpool1d: _max_unpool_call,
                nn.MaxUnpool2d: _max_unpool_call, nn.MaxUnpool3d: _max_unpool_call,
                nn.MultiheadAttention: _attention_call}


def call_params(module: nn.Module, args, kwargs) -> dict:
    """Params implied by the forward call itself (see _CALL_PARAMS)."""
    reader = _CALL_PARAMS.get(plain_class(module))
    return reader(module, args, kwargs) if reader is not None else {}
