"""Tensors whose values follow from the input's shape alone, folded where that holds for every
length. transformers' traced causal mask (masking_utils) takes position ids = arange(L), finds
packed sequences as cumsum(diff(p, prepend=p[:, :1] - 1) != 1), reads them and the positions
back at the query and key indices (Tensor.index) and ands a scalar new_ones(()) with
`packed[q] == packed[k]` and `p[k] <= p[q]`. Over arange(L) the diff is all ones for every L,
so the packed index is all zeros, their comparison all true and the mask the plain causal
`k <= q`; p[i] of arange is i. Nothing here reads an example's values: a value is a
`Ramp` (its index along one dim plus an integer) or a `Fill` (one value everywhere), derived
operator by operator, and only these rewrites are made on the ncnn emitter's working copy:
- `Tensor.index` of a ramp of offset 0 at a ramp/fill index -> that index (torch raises for an
  index out of range, so every index it accepts reads back itself);
- an and/or `pnnx.Expression` with a fill operand -> the expression without it, when what is
  left has the result's shape;
- where() of a condition true (false) everywhere -> its input (other);
- torch.full over a size list that is x's shape -> full_like(x);
- a bool attn_mask true everywhere (BERT's and T5's over torch.export: arange(L) >= 0,
  expanded) -> no mask, as zero_masks leaves out a float mask of zeros."""
from __future__ import annotations

from dataclasses import dataclass

from ... import expression as ex
from ...ir import Graph, Operand, Operator
from ...passes.rewire import bypass, set_inputs
from .crops import INT_MAX
from .truth import INTEGRAL
from .zero_masks import attention_masks, drop_mask, drop_unread


@dataclass(frozen=True)
class Ramp:
    dim: int       # torch dim (non-negative) the value counts along
    offset: int    # value = index along dim + offset


@dataclass(frozen=True)
class Fill:
    value: object  # int or bool, the same at every position


COMPARISONS = {"torch.eq": "eq", "torch.ne": "ne", "torch.lt": "lt", "torch.le": "le",
               "torch.gt": "gt", "torch.ge": "ge"}
_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
            "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


def _rank(operand: Operand) -> int | None:
    return None if operand.shape is None else len(operand.shape)


def _arange(op: Operator, values: dict):
    names = op.inputnames or []
    plain = names == ["end"] and op.params.get("dtype") in (None, "torch.long", "torch.int64")
    return Ramp(0, 0) if plain and op.outputs[0].dtype == "i64" else None


def _shifted(value, by: int):
    if isinstance(value, Ramp):
        return Ramp(value.dim, value.offset + by)
    if isinstance(value, Fill) and not isinstance(value.value, bool):
        return Fill(value.value + by)
    return None


def _expression(op: Operator, values: dict):
    """add(@0,k) / sub(@0,k) of a known value."""
    try:
        node = ex.parse(str(op.params.get("expr", "")))
    except Exception:  # noqa: BLE001 - a spelling this fold does not read is left alone
        return None
    if not (isinstance(node, ex.Call) and node.func in ("add", "sub") and len(node.args) == 2):
        return None
    x, k = node.args
    if not (isinstance(x, ex.Input) and isinstance(k, ex.Literal) and type(k.value) is int):
        return None
    value = values.get(op.inputs[x.index]) if x.index < len(op.inputs) else None
    return _shifted(value, k.value if node.func == "add" else -k.value)


def _unsqueeze(op: Operator, values: dict):
    value, rank = values.get(op.inputs[0]), _rank(op.outputs[0])
    if isinstance(value, Fill):
        return value
    if not isinstance(value, Ramp) or rank is None or "dim" not in op.params:
        return None
    dim = int(op.params["dim"]) % rank
    return Ramp(value.dim + (dim <= value.dim), value.offset)


def _expand_sizes(op: Operator):
    if "sizes" in op.params:
        return list(op.params["sizes"])
    sizes = op.input("sizes")
    producer = None if sizes is None else sizes.producer
    if producer is None or producer.type != "pnnx.Expression" or producer.inputs:
        return None
    node = ex.parse(str(producer.params.get("expr", "")))
    if not isinstance(node, ex.ListExpr) or not all(isinstance(i, ex.Literal) for i in node.items):
        return None
    return [i.value for i in node.items]


def _expand(op: Operator, values: dict):
    """A fill stays a fill; a ramp whose dim is kept (-1) and whose rank is kept stays a ramp."""
    value = values.get(op.inputs[0])
    if isinstance(value, Fill):
        return value
    sizes = _expand_sizes(op) if isinstance(value, Ramp) else None
    if sizes is None or len(sizes) != _rank(op.inputs[0]) or sizes[value.dim] != -1:
        return None
    return value


def _slice(op: Operator, values: dict):
    """x[..., s:e] along a ramp's dim, step 1: the ramp from s; one element: a fill."""
    value, p = values.get(op.inputs[0]), op.params
    if isinstance(value, Fill):
        return value
    if not isinstance(value, Ramp) or len(op.inputs) != 1 or list(p.get("dims", [])) != [value.dim]:
        return None
    if list(p.get("steps", [])) != [1] or list(p.get("selects", [])) != [INT_MAX]:
        return None
    start = int(p["starts"][0])
    if start < 0:
        return None
    out = op.outputs[0].shape
    if out is not None and out[value.dim] == 1:
        return Fill(value.offset + start)
    return Ramp(value.dim, value.offset + start)


def _diff(op: Operator, values: dict):
    """diff(arange + c, prepend=c - 1) along its dim: all ones (without prepend as well)."""
    value, rank, p = values.get(op.inputs[0]), _rank(op.inputs[0]), op.params
    if not isinstance(value, Ramp) or rank is None or p.get("n", 1) != 1 or p.get("append") is not None:
        return None
    if int(p.get("dim", -1)) % rank != value.dim:
        return None
    prepend = op.input("prepend")
    if prepend is not None and values.get(prepend) != Fill(value.offset - 1):
        return None
    if prepend is not None and (prepend.shape is None or prepend.shape[value.dim] != 1):
        return None
    return Fill(1)


def _ramp_against(how: str, ramp: Ramp, c) -> Fill | None:
    """A ramp offset, offset + 1, ... compared with c, where every index gives one answer."""
    low = ramp.offset
    decided = {"ge": low >= c, "gt": low > c, "lt": low >= c, "le": low > c}
    if how not in decided or not decided[how]:
        return None
    return Fill(how in ("ge", "gt"))


def _compare(op: Operator, values: dict):
    a = values.get(op.inputs[0])
    if len(op.inputs) == 2:
        b = values.get(op.inputs[1])
    else:
        other = op.params.get("other")
        b = Fill(other) if type(other) in (int, bool) else None
    how = COMPARISONS[op.type]
    if isinstance(a, Ramp) and isinstance(b, Fill) and type(b.value) is int:
        return _ramp_against(how, a, b.value)
    if not (isinstance(a, Fill) and isinstance(b, Fill)):
        return None
    return Fill(bool(_COMPARE[how](a.value, b.value)))


def _cumsum(op: Operator, values: dict):
    value = values.get(op.inputs[0])
    return Fill(0) if isinstance(value, Fill) and value.value in (0, False) else None


def _to(op: Operator, values: dict):
    value, dtype = values.get(op.inputs[0]), op.outputs[0].dtype
    if dtype not in INTEGRAL or op.inputs[0].dtype not in INTEGRAL:
        return None
    if isinstance(value, Fill):
        return Fill(bool(value.value)) if dtype == "bool" else Fill(int(value.value))
    return value if isinstance(value, Ramp) and dtype == op.inputs[0].dtype else None


def _new_ones(op: Operator, values: dict):
    dtype = op.params.get("dtype")
    return Fill(True) if dtype == "torch.bool" else Fill(1) if dtype in ("torch.long", "torch.int64") else None


def _index_at(op: Operator, values: dict) -> tuple[Operand, object, object] | None:
    """(index operand along the input ramp's dim, its value, the input's value) of a
    Tensor.index that indexes every dim of a ramp or fill, else None."""
    value, rank = values.get(op.inputs[0]), _rank(op.inputs[0])
    indices = op.inputs[1:]
    if not isinstance(value, (Ramp, Fill)) or rank is None or len(indices) != rank:
        return None
    if str(op.params.get("expr", "")) != "[" + ",".join(f"@{i + 1}" for i in range(rank)) + "]":
        return None
    if isinstance(value, Fill):
        return indices[0], None, value
    at = indices[value.dim]
    return at, values.get(at), value


def _index(op: Operator, values: dict):
    found = _index_at(op, values)
    if found is None:
        return None
    at, at_value, value = found
    if isinstance(value, Fill):
        return value
    if isinstance(at_value, Ramp) and at_value.offset >= 0 or isinstance(at_value, Fill) and at_value.value >= 0:
        return _shifted(at_value, value.offset)
    return None


RULES = {"torch.arange": _arange, "pnnx.Expression": _expression, "torch.unsqueeze": _unsqueeze,
         "Tensor.unsqueeze": _unsqueeze, "Tensor.expand": _expand, "Tensor.slice": _slice,
         "torch.diff": _diff, "torch.cumsum": _cumsum, "Tensor.cumsum": _cumsum, "Tensor.to": _to,
         "Tensor.new_ones": _new_ones, "Tensor.index": _index,
         **{name: _compare for name in COMPARISONS}}


def shape_values(graph: Graph) -> dict:
    """Operand -> Ramp or Fill, for the operands whose values follow from shapes alone."""
    values: dict = {}
    for op in graph.ops:
        rule = RULES.get(op.type)
        value = rule(op, values) if rule is not None and len(op.outputs) == 1 and op.inputs[:1] != [None] else None
        if value is not None:
            values[op.outputs[0]] = value
    return values


def _index_by_itself(graph: Graph, op: Operator, values: dict) -> bool:
    found = _index_at(op, values) if op.type == "Tensor.index" else None
    if found is None or not isinstance(found[2], Ramp) or found[2].offset != 0:
        return False
    at, out = found[0], op.outputs[0]
    if values.get(out) is None or at.shape != out.shape or at.dtype != out.dtype:
        return False
    bypass(graph, op, at)
    return True


def _simplified(node, truth: dict):
    """node with each @i of a known truth value replaced and and/or of a constant folded (a
    bool for a constant result); None where a known value sits under another function."""
    if isinstance(node, ex.Input):
        return truth.get(node.index, node)
    if not (isinstance(node, ex.Call) and node.func in ("and", "or") and len(node.args) == 2):
        return None if set(ex.input_indices(node)) & set(truth) else node
    a, b = (_simplified(x, truth) for x in node.args)
    if a is None or b is None:
        return None
    absorbing = node.func == "or"  # or(True, x) = True, and(False, x) = False
    for x, y in ((a, b), (b, a)):
        if isinstance(x, bool):
            return absorbing if x == absorbing else y
    return ex.Call(node.func, (a, b))


def _shape(operand: Operand):
    """The operand's shape; a new_ones' size where the file gives none (a scalar's ())."""
    producer = operand.producer
    if operand.shape is None and producer is not None and producer.type == "Tensor.new_ones":
        size = producer.params.get("size")
        return None if size is None else list(size)
    return operand.shape


def _broadcasts_into(shape, into) -> bool:
    if shape is None or into is None or len(shape) > len(into):
        return False
    return all(d == 1 or d == e for d, e in zip(reversed(shape), reversed(into)))


def _drop_fill_operands(graph: Graph, op: Operator, values: dict) -> bool:
    if op.type != "pnnx.Expression" or op.outputs[0].dtype != "bool":
        return False
    truth = {i: bool(v.value) for i, x in enumerate(op.inputs) if isinstance(v := values.get(x), Fill)}
    if not truth:
        return False
    node = _simplified(ex.parse(str(op.params.get("expr", ""))), truth)
    if node is None or isinstance(node, bool):
        return False
    kept, out = ex.input_indices(node), op.outputs[0]
    dropped = [op.inputs[i] for i in range(len(op.inputs)) if i not in kept]
    shapes = [op.inputs[i].shape for i in kept]
    if not any(s == out.shape for s in shapes) or not all(_broadcasts_into(_shape(x), out.shape) for x in dropped):
        return False
    if isinstance(node, ex.Input):
        bypass(graph, op, op.inputs[node.index])
        return True
    op.params["expr"] = ex.to_string(ex.remap_inputs(node, {i: n for n, i in enumerate(kept)}))
    set_inputs(graph, op, [op.inputs[i] for i in kept])
    return True


def _where_by_fill(graph: Graph, op: Operator, values: dict) -> bool:
    """where(c, input, other) with c one truth value everywhere: the side it picks, when that
    side alone has the result's shape and dtype."""
    cond = op.input("condition", 0) if op.type in ("torch.where", "Tensor.where") else None
    value, out = values.get(cond), op.outputs[0]
    if not isinstance(value, Fill) or not _broadcasts_into(cond.shape, out.shape):
        return False
    side = op.input("input") if value.value else op.input("other")
    if side is None or side.shape != out.shape or side.dtype != out.dtype:
        return False
    bypass(graph, op, side)
    return True


def _full_as_full_like(graph: Graph, op: Operator, values: dict) -> bool:
    """torch.full(size=[size(x,0), ..., size(x,r-1)], v) of a rank-r x is full_like(x, v) (the
    ONNX door spells T5's full_like so, through a list expression no ncnn layer takes)."""
    size = op.input("size") if op.type == "torch.full" else None
    producer = None if size is None else size.producer
    if producer is None or producer.type != "pnnx.Expression" or len(producer.inputs) != 1:
        return False
    x = producer.inputs[0]
    if x.shape is None or op.outputs[0].shape is None or len(x.shape) != len(op.outputs[0].shape):
        return False
    spelled = "[" + ",".join(f"size(@0,{d})" for d in range(len(x.shape))) + "]"
    if ex.to_string(ex.parse(str(producer.params.get("expr", "")))) != spelled:
        return False
    op.type = "torch.full_like"
    op.params = {"fill_value": op.params.get("fill_value"), "dtype": op.params.get("dtype")}
    set_inputs(graph, op, [x], ["input"])
    return True


def _drop_true_masks(graph: Graph, values: dict) -> None:
    """A bool attn_mask true everywhere masks nothing: SDPA reads none."""
    for op, mask in attention_masks(graph):
        if mask.dtype == "bool" and values.get(mask) == Fill(True):
            drop_mask(graph, op, mask)


REWRITES = (_index_by_itself, _drop_fill_operands, _where_by_fill, _full_as_full_like)


def fold_shape_values(graph: Graph) -> None:
    values = shape_values(graph)
    _drop_true_masks(graph, values)
    for op in list(graph.ops):
        if len(op.outputs) != 1:  # several results, or taken out with a rewritten one's producers
            continue
        inputs = list(op.inputs)
        if any(rewrite(graph, op, values) for rewrite in REWRITES):
            for x in inputs:
                drop_unread(graph, x.producer)
