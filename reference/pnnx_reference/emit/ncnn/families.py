"""Imports every operator-family module so that each registers its lowerings."""
from . import (activation, attention, binary, concat_slice, conv, linear, norm, pad,  # noqa: F401
               pool, reduce, resize, rnn, shape, tile_flip)
