"""Pieces of the `_pnnx.py` generator (see `emit.python_code`)."""
