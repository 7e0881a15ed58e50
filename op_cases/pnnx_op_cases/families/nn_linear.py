"""nn.*: the `linear` family (emit/*/families/linear.py): Bilinear, LazyLinear, Linear."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


CHANNELS = [(1, 4), (3, 8), (4, 4), (8, 12), (12, 13), (13, 16), (16, 3)]


@family("nn.Linear")
def linear():
    op = "nn.Linear"
    yield module_case(op, "r2", "nn.Linear(12, 16)", [rand(2, 12)], smoke=True)
    yield module_case(op, "r3", "nn.Linear(12, 16)", [rand(2, 5, 12)], smoke=True)
    yield module_case(op, "r1", "nn.Linear(12, 16)", [rand(12)], tags={"unbatched"})
    yield module_case(op, "r4", "nn.Linear(8, 4)", [rand(1, 3, 5, 8)])
    yield module_case(op, "nobias", "nn.Linear(12, 16, bias=False)", [rand(2, 12)])
    yield module_case(op, "out1", "nn.Linear(12, 1)", [rand(3, 12)])
    yield module_case(op, "b1", "nn.Linear(12, 16)", [rand(1, 12)])
    for ci, co in CHANNELS:
        yield module_case(op, f"c{ci}_{co}", f"nn.Linear({ci}, {co})", [rand(2, ci)])
    yield module_case(op, "noncontiguous", "nn.Linear(6, 8)", [rand(2, 6, 5)],
                      pre="x0 = x0.transpose(1, 2)")
    # parametrized (and the legacy hooks): converted as the Linear they compute
    for variant, wrap in (("weight_norm", "nn.utils.parametrizations.weight_norm"),
                          ("spectral_norm", "nn.utils.parametrizations.spectral_norm"),
                          ("legacy_weight_norm", "nn.utils.weight_norm"),
                          ("legacy_spectral_norm", "nn.utils.spectral_norm")):
        yield module_case(op, variant, f"{wrap}(nn.Linear(12, 16))", [rand(2, 12)])


@family("nn.LazyLinear")
def lazy_linear():
    op = "nn.LazyLinear"
    for variant, args, shape in (("r2", "16", (2, 12)), ("r3", "16", (2, 5, 12)),
                                 ("nobias", "16, bias=False", (2, 12)), ("r1", "8", (12,)),
                                 ("c13_3", "3", (4, 13))):
        yield module_case(op, variant, f"nn.LazyLinear({args})", [rand(*shape)],
                          init=f"self.m(torch.zeros{shape})", smoke=variant == "r2")
    yield module_case(op, "uninitialized", "nn.LazyLinear(16)", [rand(2, 12)],
                      reasons={"no-trace": "torch.jit.trace refuses uninitialized lazy "
                               "parameters; the first forward materializes them"})


@family("nn.Bilinear")
def bilinear():
    op = "nn.Bilinear"
    yield module_case(op, "r2", "nn.Bilinear(6, 5, 8)", [rand(3, 6), rand(3, 5)], smoke=True)
    yield module_case(op, "r3", "nn.Bilinear(6, 5, 8)", [rand(2, 4, 6), rand(2, 4, 5)])
    yield module_case(op, "nobias", "nn.Bilinear(6, 5, 8, bias=False)", [rand(3, 6), rand(3, 5)])
    yield module_case(op, "same_in", "nn.Bilinear(4, 4, 13)", [rand(2, 4), rand(2, 4)])
    yield module_case(op, "out1", "nn.Bilinear(3, 12, 1)", [rand(5, 3), rand(5, 12)])
    yield module_case(op, "unbatched", "nn.Bilinear(6, 5, 8)", [rand(6), rand(5)],
                      tags={"unbatched"})
    yield module_case(op, "shared_input", "nn.Bilinear(8, 8, 4)", [rand(3, 8)],
                      call="self.m(x0, x0)")
