"""Hand-built graphs and a runner for generated `_pnnx.py` modules (tests/emit/python only)."""
from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import torch

from pnnx_reference.emit import write_python
from pnnx_reference.formats import pnnx_param
from pnnx_reference.ir import Attribute, Graph, Operand, dtype_suffix_of

_modules = itertools.count()


class Builder:
    """Build a Graph the way a converter would, one call per operator."""

    def __init__(self) -> None:
        self.graph = Graph()
        self._operands = itertools.count()
        self._inputs = itertools.count()

    def _operand(self, like=None, name=None) -> Operand:
        shape = list(like.shape) if like is not None else None
        dtype = dtype_suffix_of(like.dtype) if like is not None else None
        return self.graph.new_operand(name or str(next(self._operands)), shape, dtype)

    def input(self, example: torch.Tensor, name=None) -> Operand:
        op = self.graph.new_operator("pnnx.Input", f"pnnx_input_{next(self._inputs)}")
        out = self._operand(example, name)
        self.graph.connect(op, outputs=[out])
        return out

    def op(self, type_, name, inputs=(), params=None, attrs=None, inputnames=None, outputs=1,
           examples=None, output_names=None):
        op = self.graph.new_operator(type_, name)
        op.params = dict(params or {})
        op.attrs = {k: Attribute.from_torch(v) for k, v in (attrs or {}).items()}
        op.inputnames = list(inputnames or [])
        examples = examples or [None] * outputs
        names = output_names or [None] * outputs
        outs = [self._operand(e, n) for e, n in zip(examples, names)]
        self.graph.connect(op, inputs=list(inputs), outputs=outs)
        return outs[0] if outputs == 1 else outs

    def output(self, *operands) -> Graph:
        for i, operand in enumerate(operands):
            op = self.graph.new_operator("pnnx.Output", f"pnnx_output_{i}")
            self.graph.connect(op, inputs=[operand])
        return self.graph


def generate(graph: Graph, folder: Path, name: str = "model", save_param: bool = True) -> Path:
    """Write NAME.pnnx.bin (and .param) and NAME_pnnx.py into `folder`; returns the .py path."""
    folder.mkdir(parents=True, exist_ok=True)
    param, bin_ = folder / f"{name}.pnnx.param", folder / f"{name}.pnnx.bin"
    if save_param:
        pnnx_param.save(graph, param, bin_)
    py = folder / f"{name}_pnnx.py"
    write_python(graph, py, bin_)
    return py


def import_file(py: Path):
    spec = importlib.util.spec_from_file_location(f"pycodegen_generated_{next(_modules)}", py)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_generated(py: Path, *inputs):
    """Outputs of the generated Model on `inputs`, always as a tuple."""
    module = import_file(py)
    net = module.Model()
    net.float()
    net.eval()
    with torch.no_grad():
        out = net(*inputs)
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def assert_bitwise(actual, expected) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if isinstance(e, (tuple, list)):
            assert isinstance(a, (tuple, list))
            assert_bitwise(a, e)
            continue
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
        assert torch.equal(a, e)
