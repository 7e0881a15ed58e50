"""Dynamic dimensions (`torch.export.Dim`): the program's inputs carry symbolic sizes whose
ranges are in `range_constraints`. Tracing once more at other sizes inside those ranges
and merging (`frontends/python/dynamic.py`) writes those dimensions as unknown (-1), as
`inputshape2` does."""
from __future__ import annotations

import weakref

import sympy
import torch

from ...errors import ConversionError


def symbolic_shapes(program) -> list:
    """The shape of each user input as the program sees it: ints and sympy expressions."""
    user = {spec.arg.name for spec in program.graph_signature.input_specs
            if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT}
    shapes = []
    for node in program.graph_module.graph.nodes:
        if node.op == "placeholder" and node.name in user:
            value = node.meta.get("val")
            shapes.append([_expr(d) for d in value.shape] if isinstance(value, torch.Tensor) else None)
    return shapes


def _expr(dim):
    """A size as an int, or the sympy expression of a dynamic one (a SymInt torch.export pinned,
    as Dim.AUTO does where the model's code needs one size, is an int: a saved program has it so)."""
    expr = dim.node.expr if isinstance(dim, torch.SymInt) else dim
    return int(expr) if getattr(expr, "is_Integer", True) else expr


def size_source(node) -> tuple | None:
    """(placeholder, axis) that `sym_size.int(x, d)` reads, as the model would: where the size is
    one dynamic dimension that several inputs share (a key and a value of one length), the
    first input and axis that has it. torch.export reads it from any one of them (the symbol it
    keeps when it finds them equal: a re-export of the same model may keep another's), so that
    the converted model's `size(@1,1)` does not turn into `size(@2,1)`. None: read `x` itself."""
    tensor, axis = node.args[0], node.args[1]
    return _first_holders(node.graph).get((tensor, axis))


_HOLDERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _first_holders(graph) -> dict:
    """(placeholder, axis) -> (placeholder, axis) of the first bare occurrence, among the graph's
    inputs in order, of the dynamic dimension there (either axis spelling: 1 and -2 of a 3-d input).
    Read from the program's metadata with torch functions off (the tracer records what it sees)."""
    found = _HOLDERS.get(graph)
    if found is None:
        found, first = {}, {}
        with torch._C.DisableTorchFunction():
            for node in graph.nodes:
                value = node.meta.get("val") if node.op == "placeholder" else None
                shape = list(value.shape) if isinstance(value, torch.Tensor) else []
                for axis, dim in enumerate(shape):
                    if isinstance(dim, torch.SymInt) and isinstance(dim.node.expr, sympy.Symbol):
                        holder = first.setdefault(dim.node.expr, (node, axis))
                        found[node, axis] = found[node, axis - len(shape)] = holder
        _HOLDERS[graph] = found
    return found


def check_sizes(program, inputs: tuple, what: str) -> None:
    """Raises a ConversionError when `inputs` (the `what` inputs: "example", "inputshape2")
    do not fit the program: a fixed size other than the program's, a dynamic dimension
    outside its range (`torch.export.Dim(min=, max=)`), or one dynamic dimension at two sizes."""
    seen: dict = {}
    for i, (shape, tensor) in enumerate(zip(symbolic_shapes(program), inputs)):
        if shape is None or not isinstance(tensor, torch.Tensor):
            continue
        if len(shape) != tensor.dim():
            raise ConversionError(f"{what} input {i} has {tensor.dim()} dimensions, the exported program's "
                                  f"input has {len(shape)}")
        for axis, (dim, size) in enumerate(zip(shape, tensor.shape)):
            where = f"{what} input {i} dimension {axis} is {int(size)}"
            if isinstance(dim, int):
                if dim != size:
                    raise ConversionError(f"{where}: the exported program fixes it at {dim}")
            elif isinstance(dim, sympy.Symbol):
                _check_range(where, int(size), program.range_constraints.get(dim))
                first = seen.setdefault(dim, (where, int(size)))
                if first[1] != size:
                    raise ConversionError(f"{where} where {first[0]}: the exported program makes them one "
                                          "dynamic dimension")


def _finite(bound) -> int | None:
    """A range bound as an int, None when unbounded: sympy's oo, or torch's int_oo (an
    unbounded Dim, Dim.AUTO), which says it `is_finite` but is no Integer."""
    return int(bound) if bound.is_Integer else None


def _check_range(where: str, size: int, bounds) -> None:
    if bounds is None:
        return
    low, high = _finite(bounds.lower), _finite(bounds.upper)
    if (low is not None and size < low) or (high is not None and size > high):
        allowed = f"{low if low is not None else 0}..{high if high is not None else 'any'}"
        raise ConversionError(f"{where}: the exported program's dynamic dimension there allows {allowed} "
                              "(its torch.export.Dim range)")


def second_inputs(program, inputs: tuple) -> tuple | None:
    """Inputs like `inputs` with every dynamic dimension at another allowed size (None when
    the program has no dynamic dimension)."""
    shapes = symbolic_shapes(program)
    symbols = sorted({s for shape in shapes if shape for d in shape if not isinstance(d, int)
                      for s in d.free_symbols}, key=str)
    if not symbols:
        return None
    example = _example_values(shapes, inputs)
    chosen = {s: _other_value(s, example.get(s), program.range_constraints.get(s)) for s in symbols}
    out = []
    for shape, tensor in zip(shapes, inputs):
        if shape is None or not isinstance(tensor, torch.Tensor):
            out.append(tensor)
            continue
        sizes = [d if isinstance(d, int) else int(d.subs(chosen)) for d in shape]
        out.append(_resized(tensor, sizes))
    return tuple(out)


def _example_values(shapes, inputs) -> dict:
    """symbol -> its value in the example inputs (from dims that are the bare symbol)."""
    values = {}
    for shape, tensor in zip(shapes, inputs):
        if shape is None or not isinstance(tensor, torch.Tensor):
            continue
        for d, size in zip(shape, tensor.shape):
            if isinstance(d, sympy.Symbol):
                values.setdefault(d, int(size))
    return values


def _other_value(symbol, example, bounds) -> int:
    low = (_finite(bounds.lower) if bounds is not None else None) or 0
    high = _finite(bounds.upper) if bounds is not None else None
    example = example if example is not None else low
    for candidate in (example + 1, example - 1, example * 2, example + 2):
        if candidate >= max(low, 1) and (high is None or candidate <= high) and candidate != example:
            return candidate
    raise ConversionError(f"a dynamic dimension of the exported program (range {low}..{high}) allows no size but "
                          f"{example}: no second size to trace it at")


def _resized(tensor: torch.Tensor, sizes: list[int]) -> torch.Tensor:
    """A tensor of `sizes` with values drawn like the example's (seeded)."""
    generator = torch.Generator().manual_seed(1)
    if tensor.dtype.is_floating_point:
        return torch.rand(sizes, generator=generator).to(tensor.dtype)
    if tensor.dtype == torch.bool:
        return torch.rand(sizes, generator=generator) > 0.5
    high = int(tensor.max()) + 1 if tensor.numel() else 10
    low = int(tensor.min()) if tensor.numel() else 0
    return torch.randint(low, max(high, low + 1), sizes, generator=generator).to(tensor.dtype)
