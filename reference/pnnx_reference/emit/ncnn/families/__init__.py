"""One module per operator family, named for what its operators are (the same file name as in
emit/onnx/families/ for the same operators). Importing this package registers every lowering."""
from . import (activation, attention, cast, complex, concat, conv, creation, cumulative, distance,
               deform_conv, elementwise, embedding, expression, flip, fold, identity, indexing, linalg, linear,
               logic, matmul, norm, pad, pool, reduce, repeat, resize, rnn, shape, shuffle, slice,
               stft, transformer)  # noqa: F401
