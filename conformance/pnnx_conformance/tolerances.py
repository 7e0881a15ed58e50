"""The tolerance table lives with the converter (`pnnx_reference.tolerances`), whose
self-check compares a regenerated `_pnnx.py` with the original model under the same table;
the harness reads it from there. One table, imported under both names."""
from pnnx_reference.tolerances import *  # noqa: F401,F403
from pnnx_reference.tolerances import (ACCUMULATING, BF16_U, FP16_U, FP32_U, NETWORK_FP16_REL_L2,  # noqa: F401
                                       OP_OVERRIDES, TABLE, Tolerance, accumulation, tolerance_for)
