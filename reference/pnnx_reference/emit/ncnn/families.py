"""Imports every operator-family module so that each registers its lowerings."""
from . import activation, binary, concat_slice, conv, linear, norm, pad, pool, reduce, resize, shape, tile_flip  # noqa: F401
