"""Imports every operator-family module so that each registers its lowerings."""
from . import (activation, attention, binary, concat_slice, conv, diag, einsum, fold, linear, norm,  # noqa: F401
               pad, pool, reduce, resize, rnn, sdpa, shape, tile_flip)
