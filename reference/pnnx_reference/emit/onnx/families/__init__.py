"""Operator families; importing this package registers every lowering."""
from . import (activation, attention, conv, elementwise, expression, io, linear,  # noqa: F401
               norm, pool, reduce, rnn, shape)
