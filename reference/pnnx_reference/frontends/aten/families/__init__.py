"""One module per operator family, named as in emit/ncnn/families/ and emit/onnx/families/.
Importing this package registers every aten rule."""
from . import (activation, cast, conv, elementwise, embedding, fold, identity, matmul, norm, pool,  # noqa: F401
               indexing, resize, shape, slice, stft)
