"""Imports every operator-family module so that each registers its lowerings."""
from . import (activation, attention, binary, composite, concat_slice, conv, diag, einsum, fold, linalg,  # noqa: F401
               linear, logic, norm, pad, pool, reduce, resize, rnn, sdpa, shape, spectrogram, tile_flip)
