"""`Model.__init__`: nn modules rebuilt from their constructor params, weights from pnnx.bin."""
from __future__ import annotations

from pnnx_reference.emit.python.api_paths import check_api_type
from pnnx_reference.emit.python.forward import FORWARD_PARAMS, is_module_type
from pnnx_reference.emit.python.names import check_keyword_name
from pnnx_reference.errors import InvalidGraph
from pnnx_reference.formats.textfile import is_digits
from pnnx_reference.emit.python.values import render_kwargs, render_shape
from pnnx_reference.ir import DTYPES, NULL_DTYPE, Attribute, Graph, Operator

# module attributes that are buffers: assigned as plain tensors, not nn.Parameter
BUFFER_ATTRS = {"running_mean", "running_var", "num_batches_tracked"}
# F.* inputs that take a buffer-like tensor
_BUFFER_SLOTS = {("F.batch_norm", "running_mean"), ("F.batch_norm", "running_var"),
                 ("F.instance_norm", "running_mean"), ("F.instance_norm", "running_var")}


def constructor_line(op: Operator, ctx) -> str:
    check_api_type(op.type, op.name)
    params = {k: v for k, v in op.params.items() if k not in FORWARD_PARAMS.get(op.type, ())}
    if op.type.startswith("nn.Adaptive") and "output_size" in params:
        params["output_size"] = _zero_to_none(params["output_size"])
    if op.type in ("nn.quantized.Conv2d", "nn.quantized.Linear"):
        params = {k: v for k, v in params.items() if k not in ("scale", "zero_point")}
    return f"self.{ctx.member(op)} = {op.type}({', '.join(render_kwargs(params, op.name))})"


def _zero_to_none(value):
    if isinstance(value, list):
        return [None if v == 0 else v for v in value]
    return None if value == 0 else value


def _load_call(op: Operator, key: str, attr: Attribute, as_tensor: bool, ctx, grad: bool = True) -> str:
    if attr.dtype not in DTYPES:
        raise InvalidGraph(f"{op.name!r}: attribute {key!r} has unknown dtype {attr.dtype!r}")
    dtype = DTYPES[attr.dtype]
    entry = ctx.bin_entry(op, key)  # the pnnx.bin entry name, quoted by repr()
    shape = render_shape(attr.shape)
    if as_tensor:
        return f"self.load_pnnx_bin_as_tensor(archive, {entry}, {shape}, {dtype.numpy!r})"
    frozen = ", requires_grad=False" if dtype.is_integer or not grad else ""
    return f"self.load_pnnx_bin_as_parameter(archive, {entry}, {shape}, {dtype.numpy!r}{frozen})"


def _attr_path(op: Operator, key: str) -> str:
    """`.weight`, `.out_proj.weight`, `.layers[0].linear1.weight`: each part is a Python
    attribute name, or a child index of a Sequential / ModuleList."""
    parts = key.split(".")
    text = ""
    for k, part in enumerate(parts):
        if is_digits(part) and 0 < k < len(parts) - 1 and len(part) < 10:
            text += f"[{int(part)}]"
        else:
            text += "." + check_keyword_name(part, "attribute", op.name)
    return text


def module_weight_lines(op: Operator, ctx) -> list[str]:
    lines = []
    for key, attr in op.attrs.items():
        if attr.dtype == NULL_DTYPE:
            continue
        path = _attr_path(op, key)
        as_tensor = key.rsplit(".", 1)[-1] in BUFFER_ATTRS
        lines.append(f"self.{ctx.member(op)}{path} = {_load_call(op, key, attr, as_tensor, ctx)}")
    return lines


def _feeds_only_buffer_slots(op: Operator) -> bool:
    out = op.outputs[0] if op.outputs else None
    if out is None or not out.consumers:
        return False
    for consumer in out.consumers:
        for operand, name in zip(consumer.inputs, consumer.inputnames):
            if operand is out and (consumer.type, name) not in _BUFFER_SLOTS:
                return False
        if not consumer.inputnames:
            return False
    return True


def _computed_constant(op: Operator) -> bool:
    """A pnnx.Attribute the converter made (`pnnx_fold_*`, `pnnx_<n>`), not a weight of the
    model: a value the forward computed, which carries no gradient. Loaded as a parameter that
    requires grad it would change the computation: attention takes another kernel for a mask
    that requires grad, even under no_grad, and its outputs are no longer bit-identical to the
    original model's. (A parameter that does not, rather than a plain tensor, so that a
    TorchScript trace of the generated model reads it as an attribute, not a constant.)"""
    return op.name.startswith("pnnx_")


def attribute_lines(op: Operator, ctx) -> list[str]:
    lines = []
    as_tensor, grad = _feeds_only_buffer_slots(op), not _computed_constant(op)
    for key, attr in op.attrs.items():
        if attr.dtype == NULL_DTYPE:
            continue
        load = _load_call(op, key, attr, as_tensor, ctx, grad)
        member = ctx.attr_member(op, key)
        if as_tensor:  # a buffer, as in the model: a TorchScript trace reads it as an attribute, not a constant
            owner, _, leaf = member.rpartition(".")  # a dotted member path: its own submodule registers it
            lines.append(f"self{'.' + owner if owner else ''}.register_buffer({leaf!r}, {load})")
        else:
            lines.append(f"self.{member} = {load}")
    return lines


def body_module_line(op: Operator, ctx) -> str:
    """A moduleop with a captured body: its generated class, reading its weights itself."""
    return f"self.{ctx.member(op)} = {ctx.classes[id(op)]}(archive, {ctx.bin_prefix(op)})"


def init_body(graph: Graph, ctx) -> tuple[list[str], list[str]]:
    """(constructor lines, lines that need the open pnnx.bin `archive`)."""
    modules = [op for op in graph.ops if is_module_type(op.type)]
    constructors = ctx.container_lines() + [constructor_line(op, ctx) for op in modules]
    weights = []
    for op in graph.ops:
        if op.subgraph is not None:
            weights.append(body_module_line(op, ctx))
        elif is_module_type(op.type):
            weights += module_weight_lines(op, ctx)
        elif op.type == "pnnx.Attribute":
            weights += attribute_lines(op, ctx)
    return constructors, weights
