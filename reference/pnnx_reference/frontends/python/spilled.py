"""The value every operand had while tracing, out of memory: each tensor's bytes are written
once, when it is recorded, to an unnamed temporary file and read back one at a time when asked
for. The passes ask for a few small ones (constant folding), the self-check for the outputs,
and only the first-difference search after a mismatch for the rest; so the activations of the
traced forward are freed as the model drops them, as in a plain forward, instead of all
staying in memory to the end of the conversion. The tensors a pnnx.Attribute holds (the
model's weights, constants) stay in memory: the graph holds them anyway.

A tensor is written as it is when recorded: a later in-place write into it (or into the tensor
it views) does not change its recorded value, which is what the converted, out-of-place
forward computes there."""
from __future__ import annotations

import tempfile
from collections.abc import MutableMapping

import torch

SMALL = 4096  # bytes: a tensor smaller than this stays in memory


class SpilledValues(MutableMapping):
    def __init__(self, file=None):
        self._kept: dict = {}
        self._where: dict = {}  # key -> (offset, nbytes, dtype, shape, device)
        self._file = file

    def keep(self, key, value) -> None:
        """`value` stays in memory (a tensor that something else holds anyway)."""
        self._where.pop(key, None)
        self._kept[key] = value

    def __setitem__(self, key, value) -> None:
        if not _spillable(value):
            self.keep(key, value)
            return
        with torch._C.DisableTorchFunction():  # under the tracer: these calls are not the model's
            raw = value.detach().resolve_conj().resolve_neg().cpu().contiguous().reshape(-1).view(torch.uint8)
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="pnnxref_values_")
        offset = self._file.seek(0, 2)
        self._file.write(memoryview(raw.numpy()))
        self._kept.pop(key, None)
        self._where[key] = (offset, raw.numel(), value.dtype, tuple(value.shape), value.device)

    def __getitem__(self, key):
        if key in self._kept:
            return self._kept[key]
        offset, nbytes, dtype, shape, device = self._where[key]
        with torch._C.DisableTorchFunction():
            raw = torch.empty(nbytes, dtype=torch.uint8)
            self._file.seek(offset)
            if self._file.readinto(memoryview(raw.numpy())) != nbytes:
                raise OSError(f"{self._file.name}: the traced values' file was cut short")
            return raw.view(dtype).reshape(shape).to(device)

    def __delitem__(self, key) -> None:
        if key in self._kept:
            del self._kept[key]
        else:
            del self._where[key]

    def __contains__(self, key) -> bool:
        return key in self._kept or key in self._where

    def __iter__(self):
        yield from self._kept
        yield from self._where

    def __len__(self) -> int:
        return len(self._kept) + len(self._where)

    def rekeyed(self, pairs) -> "SpilledValues":
        """The values of keys `b` under keys `a`, for each (a, b) in `pairs`: the same file."""
        other = SpilledValues(self._file)
        for a, b in pairs:
            if b in self._kept:
                other._kept[a] = self._kept[b]
            elif b in self._where:
                other._where[a] = self._where[b]
        return other


def _spillable(value) -> bool:
    """A plain dense tensor of a few KB at least (subclasses, sparse and quantized ones stay)."""
    return (type(value) is torch.Tensor and value.layout == torch.strided and not value.is_quantized
            and value.device.type != "meta" and value.nbytes >= SMALL)
