"""One module per operator family, named as in emit/ncnn/families/ and emit/onnx/families/.
Importing this package registers every aten rule."""
from . import (activation, cast, conv, creation, elementwise, embedding, fold, identity, matmul, norm,  # noqa: F401
               pool, indexing, resize, shape, slice, stft)
