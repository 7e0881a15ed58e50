"""Standard `nn` modules (and `moduleop` classes) are leaves: hooks mark "inside a leaf" so the
calls their forward makes are not recorded, and one `nn.X` op is written instead. A moduleop
call also keeps a copy of its arguments (`Leaves.calls`), so that its body can be traced on
its own afterwards (trace.py)."""
from __future__ import annotations

import inspect

import torch
import torch.nn as nn

from ...ir import Operator
from . import modules
from .recorder import Recorder, disarmed, iter_values, tensors_in


class Leaves:
    def __init__(self, rec: Recorder, model: nn.Module, moduleop: tuple, body: bool):
        """`body`: `model` is a moduleop traced on its own, so its calls are recorded even
        though its class is in `moduleop`."""
        self.rec = rec
        self.moduleop = moduleop
        self.calls: list[tuple[Operator, nn.Module, tuple, dict]] = []
        self._pending: list[tuple] = []
        self._module_paths = {id(m): p for p, m in model.named_modules(remove_duplicate=False)}
        self._hooks = []
        for module in model.modules():
            if self._kept_whole(module) and not (body and module is model):
                self._hooks.append(module.register_forward_pre_hook(self.enter, with_kwargs=True))
                self._hooks.append(module.register_forward_hook(self.leave, with_kwargs=True,
                                                                always_call=True))

    def _kept_whole(self, module) -> bool:
        return self.is_moduleop(module) or modules.is_leaf(module)

    def is_moduleop(self, module) -> bool:
        return any(names_class(m, type(module)) for m in self.moduleop)

    @disarmed
    def enter(self, module, args, kwargs):
        if self.rec.muted == 0:
            call = self._copy_call(args, kwargs) if self.is_moduleop(module) else None
            self._pending.append((*self._inputs(module, args, kwargs), call, self._weights_before(module)))
        self.rec.muted += 1

    def _weights_before(self, module) -> dict | None:
        """The weights of a module whose forward renormalises them in place (nn.Embedding with
        max_norm), taken before it runs: the converted model starts from them, as this one
        did. None for any other module, whose weights are taken (as views) after its call."""
        if getattr(module, "max_norm", None) is None or not isinstance(module, (nn.Embedding, nn.EmbeddingBag)):
            return None
        with self.rec.quiet():
            attrs = modules.module_attrs(module)
        for attr in attrs.values():
            attr.own()
        return attrs

    def _copy_call(self, args, kwargs) -> tuple[tuple, dict]:
        """The call's arguments with every tensor cloned before the forward runs (it may
        change its inputs in place)."""
        with self.rec.quiet():
            return clone_tensors(args), {k: clone_tensors(v) for k, v in kwargs.items()}

    def _inputs(self, module, args, kwargs) -> tuple[list, list]:
        """The tensor forward arguments; named only when one is passed by keyword
        (`attention(q, k, v, attn_mask=m)`), since positions then no longer say which is which."""
        positional = [t for t in iter_values(args) if isinstance(t, torch.Tensor)]
        keyword = [(k, v) for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
        operands = [self.rec.operand_of(t) for t in positional] + [self.rec.operand_of(v) for _, v in keyword]
        if not keyword:
            return operands, []
        bound = inspect.signature(module.forward).bind(*args, **kwargs).arguments
        names = [k for k, v in bound.items() if isinstance(v, torch.Tensor)]
        return operands, names if len(names) == len(operands) else []

    @disarmed
    def leave(self, module, args, kwargs, output):
        self.rec.muted -= 1
        if self.rec.muted:
            return
        inputs, inputnames, call, before = self._pending.pop()
        path = self._module_paths.get(id(module)) or type(module).__name__.lower()
        if self.is_moduleop(module):
            op_type, params = modules.module_type(module, custom=True), {}
        else:
            op_type, params = modules.module_type(module), modules.constructor_params(module)
            params.update(modules.call_params(module, args, kwargs))
        if before is None:
            with self.rec.quiet():
                before = modules.module_attrs(module)
        op = self.rec.emit(op_type, path, inputs, inputnames, params, tensors_in(output), before)
        if call is not None:
            self.calls.append((op, module, *call))

    def close(self) -> None:
        for hook in self._hooks:
            hook.remove()


def names_class(entry, cls) -> bool:
    """Whether a moduleop entry (a class, `module.Class`, `Class`) names `cls`."""
    return entry is cls or entry in (f"{cls.__module__}.{cls.__qualname__}", cls.__qualname__, cls.__name__)


def clone_tensors(value):
    """`value` with each tensor in it (through tuples, lists and dicts) cloned."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*(clone_tensors(v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(clone_tensors(v) for v in value)
    if isinstance(value, dict):
        return {k: clone_tensors(v) for k, v in value.items()}
    return value
