"""Normalization modules: batch/instance/group/layer/RMS/local-response norms."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

CHANNELS = (1, 3, 4, 8, 12, 13, 16)
SPATIAL = {1: (9,), 2: (5, 6), 3: (3, 4, 5)}

# Eval mode uses the running statistics: make them (and the affine terms) non-trivial.
STATS = ["self.m.running_mean.uniform_(-0.5, 0.5)", "self.m.running_var.uniform_(0.5, 1.5)"]
AFFINE = ["self.m.weight.uniform_(0.5, 1.5)", "self.m.bias.uniform_(-0.5, 0.5)"]


def _bn_cases(op, ctor, nd, lazy=False, prefix="", smoke=True, full=True):
    """BatchNorm-like cases; nd=0 is the (N, C) input of BatchNorm1d."""
    def make(c, args=""):
        return f"{ctor}({args})" if lazy else f"{ctor}({c}{', ' + args if args else ''})"

    def x(c, batch=1):
        return rand(batch, c, *SPATIAL.get(nd, ()))

    def init(c, batch=1, stats=True, affine=True):
        lines = [f"self.m(torch.zeros{tuple(x(c, batch).shape)})"] if lazy else []
        return lines + (STATS if stats else []) + (AFFINE if affine else [])

    def case(variant, *args, **kw):
        return module_case(op, prefix + variant, *args, **kw)

    yield case("c8", make(8), [x(8)], init=init(8), smoke=smoke)
    yield case("c8_b2", make(8), [x(8, 2)], init=init(8, 2))
    yield case("c8_noaffine", make(8, "affine=False"), [x(8)], init=init(8, affine=False))
    yield case("c8_eps0.1", make(8, "eps=0.1"), [x(8)], init=init(8))
    yield case("c8_notrack", make(8, "track_running_stats=False"), [x(8, 2)],
               init=init(8, 2, stats=False))
    if lazy or not full:
        return
    for c in sorted(set(CHANNELS) - {8}):
        yield case(f"c{c}", make(c), [x(c)], init=init(c))
    if nd == 1:
        yield case("c8_r2", make(8), [rand(3, 8)], init=init(8))
    yield case("c8_noncontiguous", make(8), [rand(1, *SPATIAL[nd], 8)], init=init(8),
               pre="x0 = x0.movedim(-1, 1)", tags={"noncontiguous"})


@family("nn.BatchNorm1d", "nn.BatchNorm2d", "nn.BatchNorm3d",
        "nn.LazyBatchNorm1d", "nn.LazyBatchNorm2d", "nn.LazyBatchNorm3d")
def batch_norms():
    for nd in (1, 2, 3):
        for lazy in (False, True):
            name = f"nn.{'Lazy' if lazy else ''}BatchNorm{nd}d"
            yield from _bn_cases(name, name, nd, lazy)


@family("nn.SyncBatchNorm")
def sync_batch_norm():
    # outside distributed training SyncBatchNorm behaves like BatchNorm{N}d for any rank
    op = "nn.SyncBatchNorm"
    for nd in (0, 1, 2, 3):
        yield from _bn_cases(op, op, nd, prefix=f"r{nd + 2}_", smoke=nd == 2, full=False)


def _instance_cases(op, nd):
    x = rand(2, 8, *SPATIAL[nd])
    yield module_case(op, "c8", f"{op}(8)", [x], smoke=True)
    yield module_case(op, "c8_affine", f"{op}(8, affine=True)", [x], init=AFFINE, smoke=nd == 2)
    yield module_case(op, "c8_track", f"{op}(8, track_running_stats=True)", [x], init=STATS)
    yield module_case(op, "c8_affine_track", f"{op}(8, affine=True, track_running_stats=True)",
                      [x], init=STATS + AFFINE)
    yield module_case(op, "c8_eps0.01", f"{op}(8, eps=0.01)", [x])
    yield module_case(op, "c8_unbatched", f"{op}(8)", [rand(8, *SPATIAL[nd])], tags={"unbatched"})
    for c in sorted(set(CHANNELS) - {8}):
        yield module_case(op, f"c{c}_affine", f"{op}({c}, affine=True)", [rand(1, c, *SPATIAL[nd])],
                          init=AFFINE)
    yield module_case(op, "c8_noncontiguous", f"{op}(8)", [rand(1, *SPATIAL[nd], 8)],
                      pre="x0 = x0.movedim(-1, 1)", tags={"noncontiguous"})


@family("nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d")
def instance_norms():
    for nd in (1, 2, 3):
        yield from _instance_cases(f"nn.InstanceNorm{nd}d", nd)


@family("nn.GroupNorm")
def group_norm():
    op = "nn.GroupNorm"
    yield module_case(op, "g2_c8", "nn.GroupNorm(2, 8)", [rand(1, 8, 5, 6)], init=AFFINE, smoke=True)
    yield module_case(op, "g1_c8", "nn.GroupNorm(1, 8)", [rand(1, 8, 5, 6)], init=AFFINE)
    yield module_case(op, "g8_c8", "nn.GroupNorm(8, 8)", [rand(1, 8, 5, 6)], init=AFFINE)
    yield module_case(op, "g4_c16_noaffine", "nn.GroupNorm(4, 16, affine=False)", [rand(2, 16, 3, 3)])
    yield module_case(op, "g2_c4_eps0.01", "nn.GroupNorm(2, 4, eps=0.01)", [rand(1, 4, 7)])
    yield module_case(op, "g3_c12_r2", "nn.GroupNorm(3, 12)", [rand(3, 12)], init=AFFINE)
    yield module_case(op, "g13_c13_r3", "nn.GroupNorm(13, 13)", [rand(2, 13, 5)], init=AFFINE)
    yield module_case(op, "g2_c4_r5", "nn.GroupNorm(2, 4)", [rand(1, 4, 3, 4, 5)], init=AFFINE)
    yield module_case(op, "g4_c12_b2", "nn.GroupNorm(4, 12)", [rand(2, 12, 4, 4)], init=AFFINE)


@family("nn.LayerNorm")
def layer_norm():
    op = "nn.LayerNorm"
    yield module_case(op, "last", "nn.LayerNorm(16)", [rand(2, 5, 16)], init=AFFINE, smoke=True)
    yield module_case(op, "last2", "nn.LayerNorm((5, 6))", [rand(1, 4, 5, 6)], init=AFFINE)
    yield module_case(op, "last3", "nn.LayerNorm([3, 4, 5])", [rand(2, 3, 4, 5)], init=AFFINE)
    yield module_case(op, "noaffine", "nn.LayerNorm(13, elementwise_affine=False)", [rand(3, 13)])
    yield module_case(op, "nobias", "nn.LayerNorm(12, bias=False)", [rand(2, 4, 12)],
                      init="self.m.weight.uniform_(0.5, 1.5)")
    yield module_case(op, "eps0.1", "nn.LayerNorm(8, eps=0.1)", [rand(4, 8)], init=AFFINE)
    yield module_case(op, "r1", "nn.LayerNorm(17)", [rand(17)], init=AFFINE)
    for c in (1, 3, 4, 13):
        yield module_case(op, f"c{c}", f"nn.LayerNorm({c})", [rand(2, 6, c)], init=AFFINE)
    yield module_case(op, "noncontiguous", "nn.LayerNorm(8)", [rand(1, 8, 6)], init=AFFINE,
                      pre="x0 = x0.transpose(1, 2)")


@family("nn.RMSNorm")
def rms_norm():
    op = "nn.RMSNorm"
    w = "self.m.weight.uniform_(0.5, 1.5)"
    yield module_case(op, "last", "nn.RMSNorm(16)", [rand(2, 5, 16)], init=w, smoke=True)
    yield module_case(op, "last2", "nn.RMSNorm([5, 6])", [rand(1, 4, 5, 6)], init=w)
    yield module_case(op, "eps1e-3", "nn.RMSNorm(8, eps=1e-3)", [rand(4, 8)], init=w)
    yield module_case(op, "noaffine", "nn.RMSNorm(13, elementwise_affine=False)", [rand(3, 13)])
    yield module_case(op, "r1", "nn.RMSNorm(12)", [rand(12)], init=w)
    yield module_case(op, "c3", "nn.RMSNorm(3)", [rand(2, 7, 3)], init=w)
    yield module_case(op, "noncontiguous", "nn.RMSNorm(8)", [rand(1, 8, 6)], init=w,
                      pre="x0 = x0.transpose(1, 2)")


@family("nn.LocalResponseNorm")
def local_response_norm():
    op = "nn.LocalResponseNorm"
    yield module_case(op, "s3", "nn.LocalResponseNorm(3)", [rand(1, 8, 5, 6)], smoke=True)
    yield module_case(op, "s5_a0.01_b0.5_k2", "nn.LocalResponseNorm(5, alpha=0.01, beta=0.5, k=2.0)",
                      [rand(1, 13, 4, 4)])
    yield module_case(op, "s2_even", "nn.LocalResponseNorm(2)", [rand(1, 4, 3, 5)])
    yield module_case(op, "s3_r3", "nn.LocalResponseNorm(3)", [rand(2, 8, 7)])
    yield module_case(op, "s3_r5", "nn.LocalResponseNorm(3)", [rand(1, 4, 3, 4, 5)])
    yield module_case(op, "s4_b2_c16", "nn.LocalResponseNorm(4, alpha=0.1)", [rand(2, 16, 3, 3)])


@family("nn.BatchNorm1d", "nn.LayerNorm", "nn.InstanceNorm2d")
def ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield module_case("nn.BatchNorm1d", "c8_r2_b1", "nn.BatchNorm1d(8)", [rand(1, 8)], init=STATS + AFFINE)
    yield module_case("nn.LayerNorm", "noaffine_b1", "nn.LayerNorm(12, elementwise_affine=False)", [rand(1, 5, 12)])
    yield module_case("nn.InstanceNorm2d", "c8_b1", "nn.InstanceNorm2d(8)", [rand(1, 8, 12, 12)])
