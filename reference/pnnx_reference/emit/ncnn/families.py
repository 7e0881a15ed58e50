"""Imports every operator-family module so that each registers its lowerings."""
from . import activation, binary, concat_slice, conv, linear, norm, pad, pool, reduce, resize, shape  # noqa: F401
