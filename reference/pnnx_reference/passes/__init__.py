"""Passes over the IR, one module per idea, run in upstream's order by `run_passes`.

optlevel 0: none; 1: expression fusion and dead-code elimination ("optimization for
inference"); 2 (the default): also constant folding, conv/linear+batchnorm fusion, no-op
removal, adjacent reshape/permute merging and operand renaming to 0..N. Attention fusion
(fuse_attention) is not among them: the ncnn emitter runs it on its own copy (emit/ncnn/prepass)."""
from __future__ import annotations

from ..ir import Graph
from . import (canonicalize, dead_code, eliminate_noop, fold_constants, fuse_adjacent,
               fuse_batchnorm, fuse_expression, fuse_static)
from .context import PassContext

PIPELINES = {
    0: (),
    1: (fuse_expression, dead_code),
    # constants fold first, so that an expression mixing constants and inputs is not fused
    # around a value that could have been a single attribute
    2: (fold_constants, dead_code, fuse_expression, eliminate_noop, fuse_static, fuse_batchnorm, fuse_adjacent,
        eliminate_noop, fuse_expression, dead_code, canonicalize),
}


# passes that create, merge or rename weights: a moduleop body, whose weights must stay the
# module operator's own attributes (pnnx.bin `<op>.<path>` entries), gets only the part of
# each that leaves weights alone (None: nothing)
WEIGHT_CHANGING = {fold_constants: fold_constants.fold_shapes, fuse_static: None, fuse_batchnorm: None}


def run_passes(graph: Graph, optlevel: int = 2, context: PassContext | None = None, *,
               keep_weights: bool = False) -> Graph:
    """Optimise `graph` in place for `optlevel` (0, 1 or 2) and return it; `keep_weights`
    runs only the weight-preserving part of the WEIGHT_CHANGING passes."""
    if optlevel not in (0, 1, 2):
        raise ValueError(f"optlevel must be 0, 1 or 2, not {optlevel!r}")
    context = context or PassContext()
    for module in PIPELINES[optlevel]:
        if not (keep_weights and module in WEIGHT_CHANGING):
            module.run(graph, context)
        elif WEIGHT_CHANGING[module] is not None:
            WEIGHT_CHANGING[module](graph, context)
    return graph


__all__ = ["PassContext", "run_passes"]
