"""Operator families; importing this package registers every lowering."""
from . import (activation, attention, conv, creation, elementwise, expression, io,  # noqa: F401
               linear, norm, pool, reduce, rnn, shape)
from . import misc_extra  # noqa: F401,E402
from . import indexing_extra, pool_indices  # noqa: F401,E402
from . import decoder  # noqa: F401,E402
from . import extra_math, pool_windows  # noqa: F401,E402
from . import quantize  # noqa: F401,E402
from . import complex_ops, fft  # noqa: F401,E402
from . import stft  # noqa: F401,E402
