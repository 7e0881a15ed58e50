"""Rebuild a TorchScript module tree as Python modules: standard `torch.nn` submodules become
the real `nn.X` (so the tracer keeps them whole); every other module becomes a `Replay`
that runs its TorchScript graph op by op through the Python API."""
from __future__ import annotations

import functools

import torch
import torch.nn as nn

from ...errors import PnnxError
from . import argorder, prims, stdmodules
from .interpreter import run_graph


class Replay(nn.Module):
    """A user module: same children, parameters and buffers (the script's own tensors, shared),
    forward replayed from the graph."""

    def __init__(self, script: torch.jit.ScriptModule):
        super().__init__()
        object.__setattr__(self, "_script", script)  # not registered: it is not a child
        for name, child in script.named_children():
            self.add_module(name, build_module(child))
        for name, param in script.named_parameters(recurse=False):  # the script's tensors: no copy
            self.register_parameter(name, nn.Parameter(param.detach(), requires_grad=False))
        for name, buffer in script.named_buffers(recurse=False):
            self.register_buffer(name, buffer.detach())

    def attribute(self, name: str):
        """`prim::GetAttr`: a child, parameter or buffer of ours, else the script's constant."""
        if name in self._modules or name in self._parameters or name in self._buffers:
            return getattr(self, name)
        return getattr(self._script, name)

    def call_method(self, name: str, args: tuple):
        graph = self._script._c._get_method(name).graph
        return run_graph(graph, (self, *args))

    def forward(self, *args):
        return self.call_method("forward", self._grouped(args))

    def _grouped(self, args: tuple) -> tuple:
        groups = getattr(self, "input_groups", None)
        return args if groups is None else _regroup(args, groups)

    def checked_capture(self, capture, inputs: list, outputs):
        """`capture()` (a trace of this module) with the recovered modules' unambiguous calls
        unprobed (argorder.unprobed), then the traced outputs (`outputs(captured)`, a list
        with None for those not to compare) checked against the script's on `inputs` (copies
        of the traced ones, as they were before the trace); on a difference the capture runs
        again, probing every call (a misread constructor argument then replays its module).
        A capture that fails runs again probing too: the probes run the original first, whose
        error names what the file's model expects of its inputs."""
        with argorder.unprobed() as skipped:
            try:
                captured = capture()
            except PnnxError:
                if not skipped:
                    raise
                captured = None
        if captured is not None and (not skipped or self._reproduces(inputs, outputs(captured))):
            return captured
        return capture()

    def _reproduces(self, inputs: list, traced: list) -> bool:
        # one run: the graph executor's optimisation (profiling runs) would cost more than it saves
        with torch._C.DisableTorchFunction(), torch.no_grad(), torch.jit.optimized_execution(False):
            try:
                expected = argorder.flat(self._script.forward(*self._grouped(tuple(t.clone() for t in inputs))))
            except Exception:  # let the probing capture say what is wrong
                return False
        tensors = [t for t in expected if isinstance(t, torch.Tensor)]
        return len(tensors) == len(traced) and all(
            t is None or (isinstance(t, torch.Tensor) and got.dtype == t.dtype and (argorder.equal(got, t) if got.is_floating_point()
                                                      else torch.equal(got, t)))
            for got, t in zip(tensors, traced))


def _regroup(flat: tuple, groups) -> tuple:
    """Flattened inputs back into the tuples and lists forward takes."""
    args, at = [], 0
    for kind, size in groups:
        part = flat[at:at + size]
        args.append(part[0] if kind == "tensor" else tuple(part) if kind == "tuple" else list(part))
        at += size
    return tuple(args)


prims.bind_replay(Replay)  # an unrecovered standard module is replayed from its own graph


def build_module(script: torch.jit.ScriptModule) -> nn.Module:
    module = stdmodules.recover(script)
    return module if module is not None else _replay_class(script)(script)


@functools.lru_cache(maxsize=None)
def _named_replay(module_name: str, class_name: str) -> type:
    return type(class_name, (Replay,), {"__module__": module_name, "__qualname__": class_name})


def _replay_class(script) -> type:
    """A Replay subclass named like the original class (`__torch__.models.common.Focus` ->
    models.common.Focus), so that moduleop=models.common.Focus keeps it as one operator."""
    qualified = stdmodules.qualified_name(script)
    module_name, _, class_name = qualified.removeprefix("__torch__.").rpartition(".")
    if not class_name.isidentifier() or module_name.startswith("torch."):
        return Replay  # torch's containers are not operators: the tracer inlines a plain Replay
    return _named_replay(module_name or "__torch__", class_name)
