"""Graph -> list of ncnn layers: inputs, one lowering per operator, then the ncnn-level
rewrites, Split insertion and output naming."""
from __future__ import annotations

from ...errors import PnnxError, Unsupported, UnsupportedOperator
from ...ir import Graph, Operand
from . import families  # noqa: F401  (registers every lowering)
from .complex_blobs import COMPLEX, reads_complex
from .context import MAX_BLOB_RANK, Context, is_batchless
from .layers import Layer
from .optimize import fold_padding, fuse_activations, remove_dead
from .prepass import PREPASSES
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


def lower_graph(graph: Graph) -> tuple[list[Layer], Context, list[Operand]]:
    for prepass in PREPASSES:
        prepass(graph)
    shapes = [op.outputs[0].shape for op in graph.inputs()]
    ctx = Context(graph, batchless=is_batchless(shapes))
    outputs = graph_outputs(graph)
    failures: list[tuple[str, str, str]] = []
    for i, op in enumerate(graph.inputs()):
        operand = op.outputs[0]
        ctx.blob_names[operand.name] = f"in{i}"
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
        if not rule.traits.get("batchless"):
            reason = _layout_reason(ctx, op, shapes)
            if reason:
                failures.append((op.type, op.name, reason))
                continue
        try:
            _check_operands(ctx, op)
            _check_dtypes(ctx, op, rule.traits.get("bool_operands", False))
            rule.fn(ctx, op)
        except PnnxError as err:
            failures.append((op.type, op.name, str(err)))
    out_blobs = []
    for operand in outputs:
        try:
            out_blobs.append(ctx.blob(operand))
        except Unsupported as err:
            failures.append(("pnnx.Output", operand.name, str(err)))
    if failures:
        raise _unsupported(failures)
    return _finish(ctx.layers, out_blobs), ctx, outputs


def _layout_reason(ctx: Context, op, shapes) -> str | None:
    """Why an operator that needs an (N=1, C, ...) layout cannot be lowered here, or None."""
    if ctx.batchless:
        i, shape = next((i, s) for i, s in enumerate(shapes) if s and s[0] not in (1, -1))
        return (f"needs a batch axis, but input in{i} {tuple(shape)} has {shape[0]} along dim 0: ncnn "
                "blobs have no batch axis, export with dim 0 of size 1")
    folded = ctx.batch_folded(op)
    if folded:
        return (f"needs a batch axis, but operand {folded[0].name} {tuple(folded[0].shape)} has "
                f"{folded[0].shape[0]} along dim 0 (a reshape folded the batch): ncnn blobs have no batch axis")
    return None


def _check_operands(ctx: Context, op) -> None:
    """Every known-shape activation must have batch 1 (ncnn blobs have no batch axis) and fit in
    an ncnn blob; an unused output (e.g. LSTM's final states) is never materialised, so it is
    not checked."""
    for operand in (*op.inputs, *(o for o in op.outputs if o.consumers)):
        _check_blob(ctx, operand)


def _check_blob(ctx: Context, operand: Operand) -> None:
    if operand.shape is not None and (operand.shape or ctx.has_batch(operand)):
        rank = len(ctx.shape(operand))
        if rank > MAX_BLOB_RANK and ctx.constant(operand) is None:
            raise Unsupported(f"operand {operand.name} {tuple(operand.shape)} is a rank-{rank} blob: "
                              f"ncnn blobs have at most {MAX_BLOB_RANK} dims")


# operators whose integer inputs ncnn reads as integers (Embed reads int32 indices)
INTEGER_INPUTS = {"nn.Embedding", "F.embedding", "nn.EmbeddingBag", "F.embedding_bag"}


def _check_dtypes(ctx: Context, op, bool_operands: bool) -> None:
    """ncnn blobs hold floats: an integer or bool activation cannot be computed on (an input fed
    as int32 would be read as float bits), except as the indices of Embed. A bool is fed and
    produced as float 0/1, which the lowerings registered with bool_operands=True read as such;
    a complex tensor is a (..., 2) blob that only the stft/complex lowerings read (reads_complex)."""
    if op.type in INTEGER_INPUTS:
        return
    for operand in op.inputs:
        if operand.dtype in COMPLEX and not reads_complex(op):
            raise Unsupported(f"operand {operand.name} is {operand.dtype}: ncnn has no complex arithmetic "
                              "(a complex blob is its (..., 2) real view)")
        if operand.dtype == "bool" and bool_operands:
            continue
        if ctx.constant(operand) is None and operand.dtype is not None and _is_integer(operand.dtype):
            raise Unsupported(f"operand {operand.name} is {operand.dtype}: ncnn blobs hold floats only")


def _is_integer(dtype: str) -> bool:
    return dtype == "bool" or dtype[0] in "iu"


def _finish(layers: list[Layer], out_blobs: list[str]) -> list[Layer]:
    protected = set(out_blobs)
    layers = remove_dead(layers, protected)
    layers = fold_padding(layers, protected)
    layers = fuse_activations(layers, protected)
    layers, out_blobs = insert_split(layers, out_blobs)
    return rename_outputs(layers, out_blobs)


def _unsupported(failures: list[tuple[str, str, str]]) -> UnsupportedOperator:
    op_type, op_name, reason = failures[0]
    if len(failures) > 1:
        reason += "; also " + "; ".join(f"{t} ({n}): {r}" for t, n, r in failures[1:])
    err = UnsupportedOperator(op_type, op_name, reason)
    err.failures = failures
    return err
