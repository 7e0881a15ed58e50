"""One module per operator family, named as in the emitters (emit/ncnn/families/). Importing
this package registers every counting rule."""
from . import (activation, attention, cast, concat, conv, creation, cumulative, distance, embedding,  # noqa: F401
               expression, flip, fold, identity, indexing, linear, logic, matmul, norm, pad, pool, reduce, repeat,
               resize, rnn, shape, shuffle, slice, transformer)
