"""One `forward` statement per operator, written by the renderer the RENDERERS registry holds
for its type: exact types (pnnx.Expression, Tensor.slice, ...) and API prefixes (`F.`, `torch.`,
`Tensor.`, `nn.`, ...; the longest matching prefix wins).

A renderer refuses what a hostile or malformed file asks for (a type outside the allowed
PyTorch API, a name that is not an identifier, a malformed slice) with `InvalidGraph`, which
stops the whole file: generating code from such a graph is never safe. An operator type with no
renderer at all raises `UnsupportedOperator`, which export() records as this emitter's refusal
while the other artefacts are still written."""
from __future__ import annotations

from pnnx_reference import expression
from pnnx_reference.emit.python.api_paths import check_api_type, tensor_method_name
from pnnx_reference.emit.python.names import check_keyword_name, is_identifier
from pnnx_reference.emit.python.slicing import index_expression, slice_expression
from pnnx_reference.emit.python.values import render_kwargs, render_value
from pnnx_reference.errors import InvalidGraph, UnsupportedOperator
from pnnx_reference.ir import Operator
from pnnx_reference.registry import Registry

RENDERERS = Registry("_pnnx.py", "pnnx operator type (or API prefix) -> fn(ctx, op) returning forward() lines")

# functions taking one sequence of tensors: their inputs are passed as one tuple
SEQUENCE_FUNCS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack",
                  "torch.vstack", "torch.dstack", "torch.column_stack", "torch.row_stack"}
# functions taking tensors as *args
VARARGS_FUNCS = {"torch.einsum", "torch.block_diag", "torch.broadcast_tensors",
                 "torch.cartesian_prod", "torch.meshgrid", "torch.atleast_1d", "torch.atleast_2d",
                 "torch.atleast_3d"}
SEQUENCE_NAMES = {"tensors", "operands"}
# per-function sequence parameters (a repeated input name is always a sequence as well)
SEQUENCE_PARAMS = {"Tensor.index_put": {"indices"}, "Tensor.index_put_": {"indices"},
                   "torch.index_put": {"indices"}, "torch.index_put_": {"indices"}}
# tensor inputs passed positionally after the receiver (their Python keyword differs from
# the schema name the graph records: `Tensor.copy_(src)` is bound as `other` in Python)
POSITIONAL_INPUTS = {"Tensor.copy": {"src"}, "Tensor.to": {"other"}}
# scalar params that the Python call needs as tensors, as upstream writes them
TENSOR_PARAMS = {"Tensor.index_put": ("values",)}
# functions written with every argument positional, tensors and numbers alike: torch.where's
# number overloads take `self`/`other`, so `input=1.0` as a keyword would not bind
POSITIONAL_SIGNATURES = {"torch.where": ("condition", "input", "other")}
# params passed positionally before the tensors
LEADING_PARAMS = {"torch.einsum": ("equation",)}
# Tensor methods whose size list is spread positionally: `v.reshape(1, 2, -1)`
SPREAD_SIZES = {"Tensor.reshape", "Tensor.view", "Tensor.expand", "Tensor.repeat"}
_SIZE_KEYS = {"shape", "size", "sizes", "repeats"}
# nn modules returning a structure: how the outputs are unpacked (`_` when missing)
RESULT_SHAPES = {"nn.LSTM": (1, (1, 1)), "nn.GRU": (1, 1), "nn.RNN": (1, 1),
                 "nn.MultiheadAttention": (1, 1)}
# nn module params that are forward arguments, not constructor arguments
FORWARD_PARAMS = {"nn.MaxUnpool1d": ("output_size",), "nn.MaxUnpool2d": ("output_size",),
                  "nn.MaxUnpool3d": ("output_size",),
                  "nn.MultiheadAttention": ("need_weights", "average_attn_weights")}
# calls returning a sequence of tensors: one output is unpacked from a one-element sequence
SEQUENCE_RESULTS = {f"{table}.{name}" for table in ("torch", "Tensor") for name in (
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes")} | {
    "torch.meshgrid", "torch.broadcast_tensors"}


def _targets(op: Operator, ctx) -> str:
    trailing = "," if len(op.outputs) == 1 and op.type in SEQUENCE_RESULTS else ""
    return ", ".join(ctx.var(o) for o in op.outputs) + trailing


def _assign(op: Operator, ctx, rhs: str) -> list[str]:
    if not op.outputs:
        return [rhs]
    return [f"{_targets(op, ctx)} = {rhs}"]


def _input_name(op: Operator, i: int) -> str:
    name = op.inputnames[i] if i < len(op.inputnames) else ""
    return check_keyword_name(name, "input name", op.name) if name else ""


def _groups(op: Operator, ctx, first: int) -> list[tuple[str, list[str]]]:
    """(name, [vars]) per argument; consecutive inputs of a sequence parameter share one."""
    if not op.inputnames and op.type in SEQUENCE_FUNCS | VARARGS_FUNCS:
        return [("", [ctx.var(o) for o in op.inputs[first:]])]
    groups: list[tuple[str, list[str]]] = []
    for i in range(first, len(op.inputs)):
        name = _input_name(op, i)
        if groups and name and groups[-1][0] == name:
            groups[-1][1].append(ctx.var(op.inputs[i]))
        else:
            groups.append((name, [ctx.var(op.inputs[i])]))
    return groups


def _is_sequence(op: Operator, name: str, names: list[str]) -> bool:
    return (len(names) > 1 or name in SEQUENCE_NAMES or name in SEQUENCE_PARAMS.get(op.type, ())
            or (not name and op.type in SEQUENCE_FUNCS))


def _group_text(op: Operator, name: str, names: list[str]) -> str:
    if op.type in VARARGS_FUNCS:
        return ", ".join(names)
    if _is_sequence(op, name, names):
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    return names[0]


def call_arguments(op: Operator, ctx, first: int = 0, skip_params=()) -> str:
    """Unnamed inputs and a leading `input` positionally, other inputs as keywords, then params."""
    if op.type in POSITIONAL_SIGNATURES:
        return _positional_arguments(op, ctx, first, POSITIONAL_SIGNATURES[op.type])
    leading = [op.params[k] for k in LEADING_PARAMS.get(op.type, ()) if k in op.params]
    if not all(isinstance(v, str) for v in leading):
        raise InvalidGraph(f"{op.name!r}: {op.type} expects a string equation")
    positional = [repr(v) for v in leading]
    keywords = []
    for index, (name, names) in enumerate(_groups(op, ctx, first)):
        text = _group_text(op, name, names)
        if (not name or (index == 0 and (name == "input" or name in SEQUENCE_NAMES)) or op.type in VARARGS_FUNCS
                or name in POSITIONAL_INPUTS.get(op.type, ())):
            positional.append(text)
        else:
            keywords.append(f"{name}={text}")
    skip = set(skip_params) | set(LEADING_PARAMS.get(op.type, ()))
    if op.type in VARARGS_FUNCS:  # `torch.einsum(eq, *operands)` takes no `path=None` keyword
        skip |= {k for k, v in op.params.items() if v is None}
    values = op.params
    if op.type.startswith("F.adaptive_") and isinstance(values.get("output_size"), list):
        values = {**values, "output_size": [None if v == 0 else v for v in values["output_size"]]}
    params = render_kwargs(values, op.name, skip, as_tensor=TENSOR_PARAMS.get(op.type, ()))
    return ", ".join(positional + keywords + params)


def _positional_arguments(op: Operator, ctx, first: int, signature: tuple[str, ...]) -> str:
    groups = {name: _group_text(op, name, names) for name, names in _groups(op, ctx, first)}
    texts = []
    for key in signature:
        if key in groups:
            texts.append(groups[key])
        elif key in op.params:
            texts.append(render_value(op.params[key]))
        else:
            raise InvalidGraph(f"{op.name!r}: {op.type} has no argument {key!r}")
    rest = {k: v for k, v in op.params.items() if k not in signature}
    return ", ".join(texts + render_kwargs(rest, op.name))


# --- renderers ---------------------------------------------------------------------------
@RENDERERS.register_prefix("F.", "torch.")
def render_function(ctx, op: Operator) -> list[str]:
    check_api_type(op.type, op.name)
    skip = ("value",) if op.type == "F.pad" and op.params.get("mode", "constant") != "constant" else ()
    rhs = f"{op.type}({call_arguments(op, ctx, skip_params=skip)})"
    if op.type in ("torch.max", "torch.min") and "dim" in op.params and len(op.outputs) == 1:
        return [f"{_targets(op, ctx)}, _ = {rhs}"]
    return _assign(op, ctx, rhs)


@RENDERERS.register_prefix("Tensor.")
def render_tensor_method(ctx, op: Operator) -> list[str]:
    check_api_type(op.type, op.name)
    if not op.inputs:
        raise InvalidGraph(f"{op.name!r}: {op.type} needs its tensor as input 0")
    method = tensor_method_name(op.type)
    receiver = ctx.var(op.inputs[0])
    size_key = _spread_key(op)
    if size_key is not None:
        sizes = [str(int(d)) for d in op.params[size_key]]
        args = ", ".join(sizes + render_kwargs(op.params, op.name, skip=(size_key,)))
    elif op.type in SPREAD_SIZES and any(n in _SIZE_KEYS for n in op.inputnames[1:]):
        args = _spread_size_input(op, ctx)
    else:
        args = call_arguments(op, ctx, first=1)
    return _assign(op, ctx, f"{receiver}.{method}({args})")


def _spread_key(op: Operator):
    if op.type not in SPREAD_SIZES:
        return None
    for key in sorted(_SIZE_KEYS):
        value = op.params.get(key)
        if isinstance(value, list) and all(isinstance(d, int) and not isinstance(d, bool) for d in value):
            return key
    return None


def _spread_size_input(op: Operator, ctx) -> str:
    """`v.reshape(*v_shape)` where the size list is an operand."""
    spread = [f"*{ctx.var(o)}" for o, n in zip(op.inputs[1:], op.inputnames[1:]) if n in _SIZE_KEYS]
    return ", ".join(spread + render_kwargs(op.params, op.name))


def render_body_module(ctx, op: Operator) -> list[str]:
    """A moduleop with a captured body: its generated class takes the tensors in op order."""
    return _assign(op, ctx, f"self.{ctx.member(op)}({', '.join(ctx.var(o) for o in op.inputs)})")


@RENDERERS.register_prefix("nn.")
def render_module(ctx, op: Operator) -> list[str]:
    check_api_type(op.type, op.name)
    member = ctx.member(op)
    args = [ctx.var(o) for o in op.inputs]
    names = [_input_name(op, i) for i in range(len(op.inputs))] if op.inputnames else [""] * len(args)
    if op.type in ("nn.LSTM", "nn.LSTMCell") and len(args) == 3:  # (h, c) is one argument
        args, names = [args[0], f"({args[1]}, {args[2]})"], names[:2]
    texts = [a if i == 0 or n in ("", "input") else f"{n}={a}" for i, (a, n) in enumerate(zip(args, names))]
    texts = sorted(texts, key=lambda t: "=" in t)  # keep positional ones first
    forward_params = {k: op.params[k] for k in FORWARD_PARAMS.get(op.type, ()) if k in op.params}
    texts += render_kwargs(forward_params, op.name)
    rhs = f"self.{member}({', '.join(texts)})"
    structure = RESULT_SHAPES.get(op.type)
    if structure is None or not op.outputs:
        return _assign(op, ctx, rhs)
    outputs = iter(ctx.var(o) for o in op.outputs)
    return [f"{', '.join(_unpack_part(s, outputs) for s in structure)} = {rhs}"]


def _unpack_part(structure, outputs) -> str:
    if isinstance(structure, tuple):
        parts = [_unpack_part(s, outputs) for s in structure]
        return "_" if set(parts) == {"_"} else "(" + ", ".join(parts) + ")"
    return next(outputs, "_")


@RENDERERS.register("pnnx.Expression")
def render_expression(ctx, op: Operator) -> list[str]:
    node = expression.parse(op.params.get("expr", ""))
    return _assign(op, ctx, expression.render_python(node, [ctx.var(o) for o in op.inputs]))


@RENDERERS.register("pnnx.Attribute")
def render_attribute(ctx, op: Operator) -> list[str]:
    if not op.attrs:
        raise InvalidGraph(f"{op.name!r}: pnnx.Attribute has no data")
    key = next(iter(op.attrs))
    return _assign(op, ctx, f"self.{ctx.attr_member(op, key)}")


@RENDERERS.register("Tensor.slice")
def render_slice(ctx, op: Operator) -> list[str]:
    return _assign(op, ctx, f"{ctx.var(op.inputs[0])}[{slice_expression(op, ctx)}]")


@RENDERERS.register("Tensor.slice_copy")
def render_slice_copy(ctx, op: Operator) -> list[str]:
    """`v_out = v_in` then `v_out[<slice>] = v_src`, as upstream writes it."""
    if len(op.inputs) < 2 or len(op.outputs) != 1:
        raise InvalidGraph(f"operator {op.name!r}: Tensor.slice_copy needs input, src and one output")
    src = op.input("src", 1)
    if src is None:
        raise InvalidGraph(f"operator {op.name!r}: Tensor.slice_copy needs its src input")
    out = ctx.var(op.outputs[0])
    return [f"{out} = {ctx.var(op.inputs[0])}", f"{out}[{slice_expression(op, ctx)}] = {ctx.var(src)}"]


@RENDERERS.register("Tensor.index")
def render_index(ctx, op: Operator) -> list[str]:
    return _assign(op, ctx, f"{ctx.var(op.inputs[0])}[{index_expression(op, ctx)}]")


@RENDERERS.register("prim::TupleConstruct")
def render_tuple(ctx, op: Operator) -> list[str]:
    items = [ctx.var(o) for o in op.inputs]
    text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return _assign(op, ctx, text)


@RENDERERS.register("prim::ListConstruct")
def render_list(ctx, op: Operator) -> list[str]:
    return _assign(op, ctx, "[" + ", ".join(ctx.var(o) for o in op.inputs) + "]")


@RENDERERS.register("prim::TupleUnpack", "prim::ListUnpack")
def render_unpack(ctx, op: Operator) -> list[str]:
    return [f"{_targets(op, ctx)}{',' if len(op.outputs) == 1 else ''} = {ctx.var(op.inputs[0])}"]


@RENDERERS.register_prefix("pnnx.custom_op.")
def render_custom_op(ctx, op: Operator) -> list[str]:
    parts = op.type.split(".")[2:]
    if len(parts) != 2 or not all(is_identifier(p) and not p.startswith("_") for p in parts):
        raise InvalidGraph(f"operator {op.name!r}: bad custom operator type {op.type!r}")
    positional = _positional_custom_args(op, ctx)
    args = positional if positional is not None else [ctx.var(o) for o in op.inputs] + render_kwargs(op.params, op.name)
    return _assign(op, ctx, f"torch.ops.{parts[0]}.{parts[1]}({', '.join(args)})")


def _positional_custom_args(op: Operator, ctx) -> list[str] | None:
    """An operator read from a `.pt` names its arguments by position (`$arg_0`, `arg_5=1`, as
    upstream writes them): they are passed in that order, the schema's own names being unknown
    here. None when the names are not exactly arg_0 .. arg_N."""
    by_index = {}
    for name, operand in zip(op.inputnames, op.inputs):
        by_index[name] = ctx.var(operand)
    for name, value in op.params.items():
        by_index[name] = render_value(value)
    order = [f"arg_{i}" for i in range(len(by_index))]
    if not by_index or set(order) != set(by_index):
        return None
    return [by_index[name] for name in order]


@RENDERERS.register("pnnx.Input", "pnnx.Output", "pnnx.SliceIndexes")
def render_nothing(ctx, op: Operator) -> list[str]:
    return []


def is_module_type(op_type: str) -> bool:
    """`nn.X` and `torchvision.ops.X` classes are members built in `__init__`."""
    prefix = "torchvision.ops."
    return op_type.startswith("nn.") or (op_type.startswith(prefix) and op_type[len(prefix):][:1].isupper())


@RENDERERS.register_prefix("torchvision.ops.")
def render_torchvision(ctx, op: Operator) -> list[str]:
    """torchvision.ops.X: a module member when X is a class, else a function call."""
    return render_module(ctx, op) if is_module_type(op.type) else render_function(ctx, op)


def render_forward_op(ctx, op: Operator) -> list[str]:
    if op.subgraph is not None:
        return render_body_module(ctx, op)
    rule = RENDERERS.lookup(op.type)
    if rule is None:
        # a module operator (moduleop=) read from pnnx.param (its body is not there), a type from
        # another frontend or a hostile name: no code is generated; export() records it as
        # unsupported and still writes the other artefacts
        raise UnsupportedOperator(op.type, op.name, "no PyTorch Python API to generate code for "
                                  "(allowed: nn., F., torch., Tensor., torchvision.ops., pnnx.*)")
    return rule.fn(ctx, op)
