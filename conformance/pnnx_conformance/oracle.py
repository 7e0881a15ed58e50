"""The torch eager oracle, with fp16/bf16 pre-rounding of weights and inputs."""
from __future__ import annotations

import numpy as np


def _round_dtype(rounding):
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16}[rounding]


def round_model(model, rounding: str | None):
    """The model with every floating parameter and buffer pushed through `rounding`."""
    if rounding is None:
        return model
    import torch

    dt = _round_dtype(rounding)
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.dtype == torch.float32:
                t.copy_(t.to(dt).float())
    return model


def round_inputs(inputs: list, rounding: str | None) -> list:
    if rounding is None:
        return list(inputs)
    import torch

    dt = _round_dtype(rounding)
    return [x.to(dt).float() if x.dtype == torch.float32 else x for x in inputs]


def build_model(case, rounding: str | None = None, *, keep_lazy: bool = False):
    """The case's model with its lazy modules materialised (see `materialise_lazy`).
    `keep_lazy` leaves them uninitialized, for a converter, unless the weights are to be
    pre-rounded (which needs real ones)."""
    model = case.make_model()
    if not (keep_lazy and rounding is None):
        materialise_lazy(model, case)
    return round_model(model, rounding)


def has_lazy_weights(model) -> bool:
    from torch.nn.modules.lazy import LazyModuleMixin

    return any(isinstance(m, LazyModuleMixin) and m.has_uninitialized_params() for m in model.modules())


def seed_lazy_weights(case) -> None:
    """Lazy modules (nn.LazyConv2d, ...) draw their weights at the first forward from the
    global RNG. Every consumer seeds it the same way right before that forward (the oracle,
    the rebuilt oracle, and the harness before a converter's trace), so they all draw the
    same weights while the converter still receives the module uninitialized."""
    import torch

    torch.manual_seed(case.weight_seed + 1)


def materialise_lazy(model, case) -> None:
    """Run the first forward (on the case's inputs) of a model whose lazy modules are not
    materialised yet, from the seeded RNG state."""
    import torch

    if not has_lazy_weights(model):
        return
    inputs = case.make_inputs(0)
    seed_lazy_weights(case)
    with torch.no_grad():
        model(*inputs)


def to_torch(x):
    import torch

    return torch.from_numpy(np.array(x, copy=True))


def to_numpy(out) -> list[np.ndarray]:
    """Model output (tensor, tuple, list, nested) -> a flat list of numpy arrays."""
    import torch

    if isinstance(out, torch.Tensor):
        return [out.detach().cpu().resolve_conj().resolve_neg().numpy().copy()]
    if isinstance(out, (tuple, list)):
        return [a for o in out for a in to_numpy(o)]
    return [np.asarray(out)]


class Subject:
    """One case under one rounding: its model, inputs and expected outputs (computed once)."""

    def __init__(self, case, rounding: str | None = None) -> None:
        import torch

        self.case, self.rounding = case, rounding
        self.model = build_model(case, rounding)
        self.inputs = round_inputs(case.make_inputs(0), rounding)
        with torch.no_grad():
            self.expected = to_numpy(self.model(*[x.clone() for x in self.inputs]))
        # the case's second shape (inputshape2), where it has one: parity is checked there too
        second = getattr(case, "make_inputs2", lambda _seed: None)(0)
        self.inputs2 = round_inputs(second, rounding) if second else None
        if self.inputs2 is not None:
            with torch.no_grad():
                self.expected2 = to_numpy(self.model(*[x.clone() for x in self.inputs2]))

    @property
    def numpy_inputs(self) -> list[np.ndarray]:
        return [x.numpy().copy() for x in self.inputs]

    def magnitude(self) -> list[np.ndarray]:
        """sum |a_i * b_i| per output element, for linear accumulating operators: the same
        model with |weights| run on |inputs| (TOSA's bound tensor)."""
        import copy

        import torch

        model = copy.deepcopy(self.model)
        with torch.no_grad():
            for t in list(model.parameters()) + list(model.buffers()):
                if t.is_floating_point():
                    t.abs_()
            ins = [x.abs() if x.is_floating_point() else x for x in self.inputs]
            return to_numpy(model(*ins))
