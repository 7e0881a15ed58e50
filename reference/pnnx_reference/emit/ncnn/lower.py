"""Graph -> list of ncnn layers: inputs, one lowering per operator (each operand carried with
the batch axis batch.py decides), then the ncnn-level rewrites, Split insertion and output
naming."""
from __future__ import annotations

from ...errors import AlongBatch, PnnxError, Unsupported, UnsupportedOperator
from ...ir import Graph, Operand, Operator
from ...passes.empty_operands import is_empty
from . import batch
from . import families  # noqa: F401  (registers every lowering)
from .complex_blobs import COMPLEX, reads_complex
from .context import MAX_BLOB_RANK, Context
from .layers import Layer
from .optimize import fold_padding, fuse_activations, remove_dead
from .prepass import FUSIONS, PREPASSES
from .registry import LOWERINGS
from .split import insert_split, rename_outputs

SKIPPED = {"pnnx.Input", "pnnx.Output", "pnnx.Attribute", "prim::TupleConstruct", "prim::ListConstruct"}


def graph_outputs(graph: Graph) -> list[Operand]:
    """Output operands in order; a tuple/list built for the return is flattened."""
    found: list[Operand] = []
    for op in graph.outputs():
        for operand in op.inputs:
            found.extend(_flatten(operand))
    return found


def _flatten(operand: Operand) -> list[Operand]:
    producer = operand.producer
    if producer is not None and producer.type in ("prim::TupleConstruct", "prim::ListConstruct"):
        return [leaf for item in producer.inputs for leaf in _flatten(item)]
    return [operand]


def _skippable(op) -> bool:
    if op.type in ("pnnx.Input", "pnnx.Output", "pnnx.Attribute"):
        return True
    # a tuple that only packs the return values
    return op.type in SKIPPED and all(c.type == "pnnx.Output" or c.type in SKIPPED
                                      for out in op.outputs for c in out.consumers)


class Lowered:
    """What the writer needs: the layers and the batch axis (None: none) of each graph input
    and output blob, which `_ncnn.py` feeds and reads them with."""

    def __init__(self, layers: list[Layer], ctx: Context, outputs: list[Operand],
                 input_axes: list[int | None], output_axes: list[int | None]) -> None:
        self.layers, self.ctx, self.outputs = layers, ctx, outputs
        self.input_axes, self.output_axes = input_axes, output_axes

    def fed_as_bits(self, operand: Operand) -> bool:
        """Whether graph input `operand` is an integer fed as int32 bits (Embed's indices);
        every other integer or bool input is fed as float values."""
        return operand.name in self.ctx.int_bits


def lower_graph(graph: Graph, fuse: bool = True) -> Lowered:
    for prepass in PREPASSES:
        if fuse or prepass not in FUSIONS:
            prepass(graph)
    ctx = Context(graph)
    axes, preferred = batch.input_axes(graph, LOWERINGS.lookup)
    ctx.lower_operator = lambda op: _lower(ctx, op, _rule(op), preferred)
    outputs = graph_outputs(graph)
    failures: list[tuple[str, str, str]] = []
    input_axes = []
    for i, op in enumerate(graph.inputs()):
        operand = op.outputs[0]
        axis = axes.get(operand.name) if len(operand.shape or []) > 1 else None
        ctx.blob_names[operand.name] = f"in{i}"
        ctx.axes[operand.name] = axis
        if _read_as_indices(operand):
            ctx.int_bits.add(operand.name)
        input_axes.append(axis)
        ctx.layers.append(Layer("Input", f"in{i}", [], [f"in{i}"]))
        try:  # an input no operator reads (an identity model) is still fed
            _check_blob(ctx, operand)
        except Unsupported as err:
            failures.append((op.type, op.name, str(err)))
    for op in graph.ops:
        if _skippable(op):
            continue
        rule = LOWERINGS.lookup(op.type)
        if rule is None:
            failures.append((op.type, op.name, "no ncnn lowering for this operator"))
            continue
        try:
            _lower(ctx, op, rule, preferred)
        except PnnxError as err:
            failures.append((op.type, op.name, str(err)))
    out_blobs, output_axes = [], []
    for operand in outputs:
        try:
            blob, axis = _output(ctx, operand)
        except Unsupported as err:
            failures.append(("pnnx.Output", operand.name, str(err)))
            continue
        out_blobs.append(blob)
        output_axes.append(axis)
    if failures:
        raise UnsupportedOperator.gathered(failures)
    int_bits = {ctx.blob_names[name] for name in ctx.int_bits}
    return Lowered(_finish(ctx.layers, out_blobs, int_bits), ctx, outputs, input_axes, output_axes)


def _rule(op: Operator):
    rule = LOWERINGS.lookup(op.type)
    if rule is None:
        raise Unsupported(f"{op.type}: no ncnn lowering for this operator")
    return rule


def _lower(ctx: Context, op: Operator, rule, preferred) -> None:
    """Lower `op` with its operands carried as batch.plan says; a lowering that would work
    along a batch axis is lowered again with every operand holding all its dims."""
    outer = ctx.views  # a composite lowering its parts keeps its own inputs' views
    plan = batch.plan(ctx, op, rule.traits, preferred)
    state = ctx.checkpoint()
    try:
        _lower_with(ctx, op, rule, plan)
    except AlongBatch:
        if not plan.batched:
            raise
        ctx.restore(state)
        _lower_with(ctx, op, rule, batch.physical(op))
    finally:
        ctx.views = outer


def _lower_with(ctx: Context, op: Operator, rule, plan: batch.Plan) -> None:
    _check_dtypes(ctx, op, rule.traits)
    ctx.views = {}
    for x, axis in zip(op.inputs, plan.inputs):
        ctx.views[x.name] = _view(ctx, x, axis)
    for out, axis in zip(op.outputs, plan.outputs):
        ctx.axes[out.name] = axis
    _check_operands(ctx, op)
    rule.fn(ctx, op)


def _view(ctx: Context, x: Operand, axis: int | None) -> tuple[str | None, int | None]:
    """(blob, batch axis) the current operator reads operand `x` with, converted if needed."""
    if x.shape is None:
        return None, ctx.batch_axis(x)
    if ctx.constant(x) is not None:
        if axis is None or x.shape[axis] == 1:
            return None, axis  # materialized in that form on first use (a batch of 1 dropped)
        # materialized whole, then given its batch; a constant of rank 5 or more does not fit a
        # blob whole, so it drops one of its dims of 1 as a batch of 1 first (swin v2's shift mask)
        src = None if len(x.shape) <= MAX_BLOB_RANK else next((d for d, n in enumerate(x.shape) if n == 1), None)
        ctx.views[x.name] = (None, src)
        return batch.convert(ctx, x, ctx.blob(x), src, axis), axis
    current = ctx.axes.get(x.name)
    if current == axis:
        return None, axis
    ctx.views.pop(x.name, None)
    return batch.convert(ctx, x, ctx.blob(x), current, axis), axis


def _output(ctx: Context, operand: Operand) -> tuple[str, int | None]:
    """A graph output's blob and batch axis; a batch axis on a 1-d (or 0-d) output is moved
    into the blob, since ncnn.Mat feeds and reads a batch only with 2 dims or more."""
    if operand.dtype in COMPLEX and operand.shape is not None and len(operand.shape) == 0:
        raise Unsupported("a 0-d complex output: ncnn would carry it as a (real, imaginary) pair of "
                          "shape (2,), and pnnx.param annotates no 0-d operand, so nothing tells a "
                          "reader that pair from a real vector")
    blob = ctx.blob(operand)
    axis = ctx.axes.get(operand.name) if ctx.constant(operand) is None else ctx.batch_axis(operand)
    if axis is not None and len(operand.shape or []) < 2:
        blob = batch.convert(ctx, operand, blob, axis, None)
        axis = None
    return blob, axis


def _check_operands(ctx: Context, op) -> None:
    """Every known-shape operand must fit in an ncnn blob (4 dims besides the batch); an unused
    output (e.g. LSTM's final states) is never materialised, so it is not checked."""
    for operand in (*op.inputs, *(o for o in op.outputs if o.consumers)):
        _check_blob(ctx, operand)


def _check_blob(ctx: Context, operand: Operand) -> None:
    if is_empty(operand):
        raise Unsupported(f"operand {operand.name} {tuple(operand.shape)} has no elements: ncnn has no "
                          f"empty blob (a zero-size one corrupts its memory at run time)")
    if operand.shape:
        rank = len(ctx.shape(operand))
        if rank > MAX_BLOB_RANK and ctx.constant(operand) is None:
            raise Unsupported(f"operand {operand.name} {tuple(operand.shape)} is a rank-{rank} blob: "
                              f"ncnn blobs have at most {MAX_BLOB_RANK} dims besides the batch")


# operators whose integer inputs ncnn reads as integers (Embed reads int32 indices)
INTEGER_INPUTS = {"nn.Embedding", "F.embedding", "nn.EmbeddingBag", "F.embedding_bag"}
VALUE_LOOKUPS = {"nn.Embedding", "F.embedding"}  # ... or, as float values, by a one-hot product


def _read_as_indices(operand: Operand) -> bool:
    """An integer graph input that only Embed reads: it is fed as int32 bits, not as float
    values (an input that other layers read too is fed as values, which Embed looks up so)."""
    dtype = operand.dtype
    return (dtype is not None and dtype != "bool" and _is_integer(dtype) and bool(operand.consumers)
            and all(c.type in INTEGER_INPUTS for c in operand.consumers))


def _check_dtypes(ctx: Context, op, traits) -> None:
    """ncnn blobs hold floats. A bool is fed and produced as float 0/1, which the lowerings
    registered with bool_operands=True read as such; an integer activation is fed and produced
    as its float value (exact below 2^24, 2048 in fp16 storage), which the lowerings registered
    with int_operands=True compute on. Embed alone reads int32 bits: the integer graph inputs it
    reads are fed so, and nothing else may read them. A complex tensor is a (..., 2) blob that
    only the stft/complex lowerings read (reads_complex)."""
    if op.type in INTEGER_INPUTS:
        _check_indices(ctx, op)
        return
    for operand in op.inputs:
        if operand.dtype in COMPLEX and not reads_complex(op):
            raise Unsupported(f"operand {operand.name} is {operand.dtype}: ncnn has no complex arithmetic "
                              "(a complex blob is its (..., 2) real view)")
        if ctx.constant(operand) is not None or operand.dtype is None or not _is_integer(operand.dtype):
            continue
        if operand.name in ctx.int_bits:
            raise Unsupported(f"operand {operand.name} is fed as int32 bits for Embed, which this "
                              "operator would read as a float value")
        if not traits.get("bool_operands" if operand.dtype == "bool" else "int_operands", False):
            raise Unsupported(f"operand {operand.name} is {operand.dtype}: ncnn blobs hold floats only")


def _check_indices(ctx: Context, op) -> None:
    """Embed reads int32 bits: its indices must be a graph input fed so (or a constant), not
    an integer computed by ncnn layers, which carry it as a float value (an nn.Embedding then
    looks its rows up by value, embedding.py)."""
    if op.type in VALUE_LOOKUPS:
        return
    for operand in op.inputs:
        if (operand.dtype is not None and _is_integer(operand.dtype) and ctx.constant(operand) is None
                and operand.name not in ctx.int_bits):
            raise Unsupported(f"operand {operand.name} is an integer computed by ncnn layers, which carry it "
                              "as a float value; Embed reads int32 indices (feed them as a graph input)")


def _is_integer(dtype: str) -> bool:
    return dtype == "bool" or dtype[0] in "iu"


def _finish(layers: list[Layer], out_blobs: list[str], int_bits: set[str]) -> list[Layer]:
    protected = set(out_blobs)
    layers = remove_dead(layers, protected)
    layers = fold_padding(layers, protected)
    layers = fuse_activations(layers, protected)
    layers, out_blobs = insert_split(layers, out_blobs, int_bits)
    return rename_outputs(layers, out_blobs)
