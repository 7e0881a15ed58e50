"""Whether an example input of a given shape can exist on this machine: a dimension past
int64, or more bytes than the machine's memory, is the user's input being too large (said
so, before torch fails deep inside with an allocator or overflow message)."""
from __future__ import annotations

import math
import os

from .errors import ConversionError

INT64_MAX = (1 << 63) - 1


def machine_memory() -> int | None:
    """Bytes of physical memory, or None where the platform does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(shape, itemsize: int, what: str) -> None:
    """Raises a ConversionError naming `what` (e.g. "inputshape [1,3,100000,100000]f32")."""
    if any(d > INT64_MAX for d in shape):
        raise ConversionError(f"{what}: a dimension is larger than 2^63-1")
    size = math.prod(shape) * itemsize
    memory = machine_memory()
    if size > INT64_MAX or (memory is not None and size > memory):
        limit = f"this machine's {_gib(memory)} of memory" if memory is not None else "what can be allocated"
        raise ConversionError(f"{what}: the input needs {_gib(size)}, more than {limit}")


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.3g} GiB"


def out_of_memory(err: BaseException) -> ConversionError | None:
    """The user-facing error for torch's CPU allocator giving up (inputs too large for the
    model on this machine), or None for any other exception."""
    text = (str(err).strip().splitlines() or [""])[0]
    if not isinstance(err, (RuntimeError, MemoryError)) or not (isinstance(err, MemoryError)
                                                               or "can't allocate memory" in text):
        return None
    return ConversionError(f"out of memory: the model at these input sizes needs more memory than this machine "
                           f"has ({text[:200] or type(err).__name__})")
