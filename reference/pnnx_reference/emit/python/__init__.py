"""The `NAME_pnnx.py` generator: `pnnx_py.py` writes the file, `forward.py` holds the per-operator
renderers (the RENDERERS registry), `init.py` the module constructors and weight loading."""
