"""One module per operator family, named for what its operators are (the same file name as in
emit/ncnn/families/ for the same operators). Importing this package registers every lowering."""
from . import (activation, attention, cast, complex, concat, conv, creation, cumulative, distance,
               deform_conv, elementwise, embedding, expression, fft, flip, fold, identity, indexing, io, linalg,
               linear, logic, matmul, norm, pad, pool, quantize, reduce, repeat, resize, rnn, shape,
               shuffle, slice, sort, special, stft, transformer)  # noqa: F401
