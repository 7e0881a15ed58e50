"""Imports every operator-family module so that each registers its lowerings."""
from . import (activation, attention, binary, concat_slice, conv, diag, fold, linear, norm,  # noqa: F401
               pad, pool, reduce, resize, rnn, shape, tile_flip)
