"""The model's inputs: their dtypes and shapes from the graph, `inputshape` where given, and
the second shape that tells dynamic dimensions (`dim_param`) from fixed ones."""
from __future__ import annotations

from dataclasses import dataclass

import onnx
import torch

from ...errors import ConversionError, Unsupported
from .values import torch_dtype


@dataclass(frozen=True)
class InputSpec:
    name: str
    dtype: torch.dtype
    dims: tuple            # ints, or a str (dim_param) / None (unknown) per dimension
    divisor: bool = False  # an integer Div or Mod divides by it: its example values must not be 0

    @property
    def symbolic(self) -> list[int]:
        return [i for i, d in enumerate(self.dims) if not isinstance(d, int)]


DIVIDING = ("Div", "Mod")


def graph_inputs(proto: onnx.ModelProto, what: str) -> list[InputSpec]:
    initializers = {t.name for t in proto.graph.initializer}
    divisors = {n.input[1] for n in proto.graph.node if n.op_type in DIVIDING and len(n.input) > 1}
    specs = []
    for value in proto.graph.input:
        if value.name in initializers:  # IR < 4 lists initializers as inputs too
            continue
        kind = value.type.WhichOneof("value")
        if kind != "tensor_type":
            raise ConversionError(f"{what}: input {value.name!r} is a {kind or 'untyped value'}, not a tensor")
        tensor = value.type.tensor_type
        try:
            dtype = torch_dtype(tensor.elem_type, f"input {value.name!r}")
        except Unsupported as err:
            raise ConversionError(f"{what}: {err}") from None
        if not tensor.HasField("shape"):
            raise ConversionError(f"{what}: input {value.name!r} has no shape; give inputshape=...")
        dims = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim)
        specs.append(InputSpec(value.name, dtype, dims, value.name in divisors))
    return specs


def check_types(specs: list[InputSpec], types, what: str) -> None:
    """inputshape=[..]i64 suffixes, where given, must be the graph's own element types."""
    from ...ir import dtype_suffix_of

    for spec, suffix in zip(specs, types or []):
        if suffix and suffix != dtype_suffix_of(spec.dtype):
            raise ConversionError(f"{what}: inputshape gives input {spec.name!r} type {suffix}, the model says "
                                  f"{dtype_suffix_of(spec.dtype)}")


def resolve_shapes(specs: list[InputSpec], shapes, what: str, key: str = "inputshape") -> list[list[int]]:
    """The shapes to trace with: `shapes` where given (checked against the fixed dims), else
    the graph's own dims, which must then all be fixed."""
    if shapes is None:
        unknown = [f"{s.name}{list(d if isinstance(d, int) else (d or '?') for d in s.dims)}"
                   for s in specs if s.symbolic]
        if unknown:
            raise ConversionError(f"{what}: inputs with symbolic or unknown dimensions need "
                                  f"inputshape=... ({', '.join(unknown)})")
        return [list(s.dims) for s in specs]
    if len(shapes) != len(specs):
        raise ConversionError(f"{what}: {key} gives {len(shapes)} shapes, the model has "
                              f"{len(specs)} inputs ({', '.join(s.name for s in specs)})")
    for spec, shape in zip(specs, shapes):
        if len(shape) != len(spec.dims):
            raise ConversionError(f"{what}: {key} {list(shape)} for input {spec.name!r} has rank "
                                  f"{len(shape)}, the model says {len(spec.dims)}")
        for i, (want, got) in enumerate(zip(spec.dims, shape)):
            if isinstance(want, int) and want > 0 and want != got:
                raise ConversionError(f"{what}: {key} {list(shape)} for input {spec.name!r}: dimension {i} "
                                      f"is fixed to {want} in the model")
    return [list(s) for s in shapes]


def second_shapes(specs: list[InputSpec], shapes: list[list[int]]) -> list[list[int]] | None:
    """Shapes for the second trace when the model declares dynamic dimensions and no
    inputshape2 was given: each symbolic dimension doubled (doubling keeps divisibility by
    strides and patch sizes, where +1 would not); None when every dimension is fixed."""
    if not any(s.symbolic for s in specs):
        return None
    return [[d * 2 if i in spec.symbolic else d for i, d in enumerate(shape)]
            for spec, shape in zip(specs, shapes)]


def example_inputs(specs: list[InputSpec], shapes: list[list[int]], seed: int = 0) -> tuple:
    """Seeded example tensors: rand in [0, 1) for floats, random bools, and zeros for integers:
    an integer input of an ONNX graph is most often an index (token ids, positions), and zero
    is a valid index into any non-empty axis (the converted graph does not depend on the values);
    ones for an integer input that a Div or Mod divides by, where torch refuses a zero."""
    generator = torch.Generator().manual_seed(seed)
    out = []
    for spec, shape in zip(specs, shapes):
        if spec.dtype == torch.bool:
            out.append(torch.randint(0, 2, tuple(shape), generator=generator).bool())
        elif spec.dtype.is_floating_point or spec.dtype.is_complex:
            out.append(torch.rand(tuple(shape), generator=generator).to(spec.dtype))
        else:
            fill = torch.ones if spec.divisor else torch.zeros
            out.append(fill(tuple(shape), dtype=spec.dtype))
    return tuple(out)
