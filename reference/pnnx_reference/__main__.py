"""`python -m pnnx_reference ...` is `pnnxref ...`."""
import sys

from .cli import main

sys.exit(main())
