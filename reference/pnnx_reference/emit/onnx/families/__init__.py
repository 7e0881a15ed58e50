"""Operator families; importing this package registers every lowering."""
from . import (activation, attention, conv, creation, elementwise, expression, io,  # noqa: F401
               linear, norm, pool, reduce, rnn, shape)
