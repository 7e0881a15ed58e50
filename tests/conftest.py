"""Loaded before every test module: selects the Hypothesis profile (see tests/common/profiles.py)."""
import profiles  # noqa: F401  (registers and loads the profile)
