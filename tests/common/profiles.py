"""Hypothesis profiles. The unit suite runs every property test derandomized (the same
examples on every run, no example database), so a clean checkout passes or fails the same way
twice; `tox -e fuzz` selects the `fuzz` profile: fresh random seeds and many more examples.

    PNNX_HYPOTHESIS_PROFILE=fuzz PNNX_FUZZ_EXAMPLES=100000 pytest tests/fuzz

A property test states its unit-suite budget with `examples(n)`, which the fuzz profile
replaces by its own."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("PNNX_HYPOTHESIS_PROFILE", "unit")
FUZZ_EXAMPLES = int(os.environ.get("PNNX_FUZZ_EXAMPLES", "100000"))

settings.register_profile("unit", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("fuzz", derandomize=False, database=None, deadline=None, print_blob=True,
                          max_examples=FUZZ_EXAMPLES,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
if PROFILE not in ("unit", "fuzz"):
    raise RuntimeError(f"PNNX_HYPOTHESIS_PROFILE must be unit or fuzz, not {PROFILE!r}")
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """`n` examples in the unit suite; the fuzz profile's budget under `tox -e fuzz`."""
    return FUZZ_EXAMPLES if PROFILE == "fuzz" else n
