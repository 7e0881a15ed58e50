"""Element-wise activations and softmax-like modules."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

# row -> list of (variant, constructor arguments); every row also gets the rank cases below.
ACTIVATIONS = {
    "nn.ReLU": [("default", ""), ("inplace", "inplace=True")],
    "nn.ReLU6": [("default", "")],
    "nn.ELU": [("default", ""), ("alpha0.5", "alpha=0.5")],
    "nn.CELU": [("default", ""), ("alpha2", "alpha=2.0")],
    "nn.SELU": [("default", "")],
    "nn.GELU": [("default", ""), ("tanh", "approximate='tanh'")],
    "nn.Hardshrink": [("default", ""), ("lambd0.2", "lambd=0.2")],
    "nn.Softshrink": [("default", ""), ("lambd0.2", "lambd=0.2")],
    "nn.Hardsigmoid": [("default", "")],
    "nn.Hardswish": [("default", "")],
    "nn.Hardtanh": [("default", ""), ("m0.2_0.5", "-0.2, 0.5")],
    "nn.LeakyReLU": [("default", ""), ("slope0.2", "0.2"), ("slope_neg", "-0.3")],
    "nn.LogSigmoid": [("default", "")],
    "nn.Mish": [("default", "")],
    "nn.Sigmoid": [("default", "")],
    "nn.SiLU": [("default", "")],
    "nn.Tanh": [("default", "")],
    "nn.Tanhshrink": [("default", "")],
    "nn.Softsign": [("default", "")],
    "nn.Softplus": [("default", ""), ("beta2_threshold1", "beta=2.0, threshold=1.0")],
    "nn.Threshold": [("t0.1_v20", "0.1, 20.0"), ("tm0.5_vm1", "-0.5, -1.0")],
    "nn.RReLU": [("default", ""), ("l0.1_u0.3", "0.1, 0.3")],
    "nn.Identity": [("default", "")],
}

# Ranks 1..5 with awkward sizes; rank 4 uses a SIMD-remainder channel count.
RANKS = [("r1", (13,)), ("r2", (3, 17)), ("r3", (2, 5, 7)), ("r4_c13", (1, 13, 4, 5)),
         ("r5", (1, 3, 2, 3, 4))]


@family("nn.ReLU", "nn.ReLU6", "nn.ELU", "nn.CELU", "nn.SELU", "nn.GELU", "nn.Hardshrink", "nn.Softshrink",
        "nn.Hardsigmoid", "nn.Hardswish", "nn.Hardtanh", "nn.LeakyReLU", "nn.LogSigmoid", "nn.Mish",
        "nn.Sigmoid", "nn.SiLU", "nn.Tanh", "nn.Tanhshrink", "nn.Softsign", "nn.Softplus", "nn.Threshold",
        "nn.RReLU", "nn.Identity")
def activations():
    for op, settings in ACTIVATIONS.items():
        base = f"{op}({settings[0][1]})"
        for i, (variant, args) in enumerate(settings):
            tags = {"inplace"} if "inplace" in args else set()
            yield module_case(op, variant, f"{op}({args})", [rand(1, 12, 6, 7, low=-3, high=3)],
                              smoke=i == 0, tags=tags)
        for variant, shape in RANKS:
            yield module_case(op, variant, base, [rand(*shape, low=-3, high=3)])
        yield module_case(op, "noncontiguous", base, [rand(1, 5, 6, 4, low=-3, high=3)],
                          pre="x0 = x0.transpose(1, 3)")


@family("nn.PReLU")
def prelu():
    op = "nn.PReLU"
    init = "self.m.weight.uniform_(-0.5, 0.5)"
    yield module_case(op, "shared", "nn.PReLU()", [rand(1, 12, 6, 7)], init=init, smoke=True)
    for c in (1, 3, 4, 8, 12, 13, 16):
        yield module_case(op, f"c{c}", f"nn.PReLU({c})", [rand(1, c, 5, 6)], init=init,
                          smoke=c == 13)
    yield module_case(op, "c8_r2", "nn.PReLU(8)", [rand(3, 8)], init=init)
    yield module_case(op, "c8_r3", "nn.PReLU(8)", [rand(2, 8, 9)], init=init)
    yield module_case(op, "c8_r5", "nn.PReLU(8)", [rand(1, 8, 2, 3, 4)], init=init)
    yield module_case(op, "shared_r1", "nn.PReLU(init=0.1)", [rand(17)])
    yield module_case(op, "init0.1_b2", "nn.PReLU(4, init=0.1)", [rand(2, 4, 3, 3)])


@family("nn.Softmax", "nn.LogSoftmax", "nn.Softmin")
def softmaxes():
    for op in ("nn.Softmax", "nn.LogSoftmax", "nn.Softmin"):
        yield module_case(op, "dim1", f"{op}(dim=1)", [rand(2, 13, 5, low=-4, high=4)], smoke=True)
        yield module_case(op, "dim_m1", f"{op}(dim=-1)", [rand(1, 3, 4, 17, low=-4, high=4)],
                          smoke=True)
        yield module_case(op, "dim0_r1", f"{op}(dim=0)", [rand(16, low=-4, high=4)])
        yield module_case(op, "dim2_r4", f"{op}(dim=2)", [rand(1, 3, 12, 5, low=-4, high=4)])
        yield module_case(op, "dim_m2_r3", f"{op}(dim=-2)", [rand(2, 8, 3, low=-4, high=4)])
        yield module_case(op, "dim1_large", f"{op}(dim=1)", [rand(2, 16, low=-30, high=30)])
        yield module_case(op, "dim_m1_noncontiguous", f"{op}(dim=-1)",
                          [rand(1, 9, 4, low=-4, high=4)], pre="x0 = x0.transpose(1, 2)")


@family("nn.Softmax2d")
def softmax2d():
    op = "nn.Softmax2d"
    yield module_case(op, "r4", "nn.Softmax2d()", [rand(1, 13, 4, 5, low=-4, high=4)], smoke=True)
    yield module_case(op, "r4_b2", "nn.Softmax2d()", [rand(2, 4, 3, 3, low=-4, high=4)])
    yield module_case(op, "r3", "nn.Softmax2d()", [rand(8, 4, 5, low=-4, high=4)],
                      tags={"unbatched"})


@family("nn.GLU")
def glu():
    op = "nn.GLU"
    yield module_case(op, "dim_m1", "nn.GLU()", [rand(2, 3, 16)], smoke=True)
    yield module_case(op, "dim1", "nn.GLU(dim=1)", [rand(1, 16, 5, 6)], smoke=True)
    yield module_case(op, "dim0_r1", "nn.GLU(0)", [rand(24)])
    yield module_case(op, "dim_m2", "nn.GLU(-2)", [rand(2, 26, 3)])
    yield module_case(op, "dim2_r4", "nn.GLU(2)", [rand(1, 3, 8, 5)])


@family("nn.Softmax")
def ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield module_case("nn.Softmax", "dim1_r4_b1", "nn.Softmax(dim=1)", [rand(1, 6, 7, 9, low=-4, high=4)])
