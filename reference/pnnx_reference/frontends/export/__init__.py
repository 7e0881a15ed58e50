"""The torch.export frontend (`.pt2` files and `ExportedProgram`s): `rebuild(program, inputs)`
makes the program an `nn.Module` whose forward replays its FX graph through the Python API,
so the Python-API tracer, the passes and the emitters are shared with the other doors.
`export_program(model, inputs)` runs torch.export itself, its refusals as one line."""
from __future__ import annotations

from .loader import check_sizes, example_inputs, is_program, load, rebuild, second_inputs
from .refusal import export_program

__all__ = ["check_sizes", "example_inputs", "export_program", "is_program", "load", "rebuild", "second_inputs"]
