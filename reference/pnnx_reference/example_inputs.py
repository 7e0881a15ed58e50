"""The example inputs a command line asks for, as upstream reads them: `input=a.npy,b.npy`
(arrays: shapes, dtypes and values), else `inputshape=[1,3,224,224]f32,...`, else, for a
traced `.pt`, the shapes and dtypes torch.jit.trace recorded in the file. `input2` /
`inputshape2` give the second set, whose differing dims become dynamic."""
from __future__ import annotations

from pathlib import Path

from .errors import UsageError


def resolve(spec: str, options: dict, traced=None) -> tuple[tuple, tuple | None]:
    """(first inputs, second inputs or None) for MODEL `spec`; `traced` is the
    frontends.torchscript TracedFile of a `.pt` (None for Python models). A `.pt2` holds its
    own example inputs: None unless the options give others."""
    if spec.endswith(".pt2") and "input" not in options and "inputshape" not in options:
        return None, _second_set(options, ())
    first = _first_set(spec, options, traced)
    _check_count(spec, traced, first, "input" if "input" in options else "inputshape")
    second = _second_set(options, first)
    if second is not None:
        key = "input2" if "input2" in options else "inputshape2"
        if len(second) != len(first):
            raise UsageError(f"{key} gives {len(second)} inputs but the first set has {len(first)}")
    return first, second


def _first_set(spec: str, options: dict, traced) -> tuple:
    from .api import make_inputs

    if "input" in options:
        arrays = read_arrays(options["input"])
        if "inputshape" in options and options["inputshape"][0] != [list(a.shape) for a in arrays]:
            raise UsageError("inputshape and input disagree (the .npy arrays give "
                             f"{_shapes_text([list(a.shape) for a in arrays])})")
        return arrays
    if "inputshape" in options:
        return make_inputs(*options["inputshape"])
    if traced is not None and traced.input_shapes is not None:
        return make_inputs(traced.input_shapes, traced.input_types)
    if traced is not None:
        raise UsageError(f"{spec}: the file records no input shapes (it was scripted, or traced by an "
                         "older torch): give inputshape=[1,3,224,224],... or input=a.npy,...")
    raise UsageError("inputshape=[1,3,224,224],... or input=a.npy,... is required for Python models")


def _second_set(options: dict, first: tuple) -> tuple | None:
    from .api import make_inputs

    if "input2" in options:
        return read_arrays(options["input2"])
    if "inputshape2" in options:
        shapes, types = options["inputshape2"]
        types = [t or _suffix(first[i]) if i < len(first) else t for i, t in enumerate(types)]
        return make_inputs(shapes, types)
    return None


def _suffix(tensor) -> str:
    from .ir import dtype_suffix_of

    return dtype_suffix_of(tensor.dtype)


def _check_count(spec: str, traced, inputs: tuple, key: str) -> None:
    """A `.pt`'s forward takes a fixed number of tensors: upstream refuses any other count."""
    expected = traced.input_count if traced is not None else None
    if expected is not None and len(inputs) != expected:
        raise UsageError(f"{spec}: the model takes {expected} input tensor{'s' * (expected != 1)}, "
                         f"{key} gives {len(inputs)}")


def read_arrays(paths: list[str]) -> tuple:
    """`.npy` files as tensors (no pickled objects: a hostile file cannot run code)."""
    import numpy as np
    import torch

    tensors = []
    for name in paths:
        path = Path(name)
        if not path.is_file():
            raise UsageError(f"{name}: no such file")
        try:
            array = np.load(path, allow_pickle=False)
            if not isinstance(array, np.ndarray):
                raise ValueError("an .npz archive, not one array")
            tensors.append(torch.from_numpy(np.array(array, copy=True)))
        except (ValueError, TypeError, OSError, EOFError) as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0]
            raise UsageError(f"{name}: not a readable .npy array: {first}") from None
    if not tensors:
        raise UsageError("input: no .npy file given")
    return tuple(tensors)


def _shapes_text(shapes) -> str:
    return ",".join(f"[{','.join(map(str, s))}]" for s in shapes)
