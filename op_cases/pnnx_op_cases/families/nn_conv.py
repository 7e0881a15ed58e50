"""nn.Conv*d, nn.ConvTranspose*d and their lazy forms."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family

# Spatial extent per rank, small enough that the 3d cases stay a few thousand elements.
SPATIAL = {1: (17,), 2: (9, 10), 3: (5, 6, 7)}
# (in, out) channel pairs that hit the elempack 1/4/8 remainders.
CHANNELS = [(1, 4), (3, 8), (4, 4), (8, 12), (12, 13), (13, 16), (16, 3)]


def _x(cin, nd, batch=1, spatial=None):
    return rand(batch, cin, *(spatial or SPATIAL[nd]))


def _conv_variants(nd):
    """(variant, ctor args after the channels, input spec kwargs, extra) for nn.Conv{nd}d."""
    ones = (1,) * nd
    yield "k3", "3", {}, {"smoke": True}
    yield "k3_s2_p1", "3, stride=2, padding=1", {}, {"smoke": nd == 2}
    yield "k1", "1", {}, {}
    yield "k3_d2", "3, dilation=2", {}, {}
    yield "k3_nobias", "3, bias=False", {}, {}
    yield "k3_same_d2", "3, padding='same', dilation=2", {}, {}
    yield "k2_same", "2, padding='same'", {}, {}
    yield "k3_valid", "3, padding='valid'", {}, {}
    for mode in ("zeros", "reflect", "replicate", "circular"):
        yield f"k3_p2_{mode}", f"3, padding=2, padding_mode={mode!r}", {}, {}
    yield "k3_b2", "3", {"batch": 2}, {}
    yield "k3_size1", "1" if nd == 1 else f"{(1,) + (3,) * (nd - 1)}", {"spatial": ones[:1] + SPATIAL[nd][1:]}, {}
    if nd >= 2:
        k = (3,) + (1,) * (nd - 1)
        s = (2,) + (1,) * (nd - 1)
        p = (1,) + (0,) * (nd - 1)
        yield "k31_s21_p10", f"{k}, stride={s}, padding={p}", {}, {}


def _conv_cases(op, nd, lazy=False):
    name = f"nn.LazyConv{nd}d" if lazy else f"nn.Conv{nd}d"
    cin, cout = 4, 8

    def ctor(ci, co, args):
        return f"{name}({co}, {args})" if lazy else f"{name}({ci}, {co}, {args})"

    def init(ci, batch=1, spatial=None):
        shape = (batch, ci) + tuple(spatial or SPATIAL[nd])
        return f"self.m(torch.zeros{shape})" if lazy else None

    for variant, args, xkw, extra in _conv_variants(nd):
        yield module_case(op, variant, ctor(cin, cout, args), [_x(cin, nd, **xkw)],
                          init=init(cin, **xkw), **extra)
    if lazy:
        yield module_case(op, "k3_uninitialized", f"{name}({cout}, 3)", [_x(cin, nd)],
                          reasons={"no-trace": "torch.jit.trace refuses uninitialized lazy "
                                   "parameters; the first forward materializes them"})
        return
    for ci, co in CHANNELS:
        yield module_case(op, f"k3_c{ci}_{co}", ctor(ci, co, "3, padding=1"), [_x(ci, nd)])
    yield module_case(op, "k3_g2", ctor(4, 8, "3, groups=2"), [_x(4, nd)], smoke=nd == 2)
    yield module_case(op, "k3_g4_s2", ctor(8, 12, "3, stride=2, groups=4"), [_x(8, nd)])
    yield module_case(op, "k3_dw", ctor(8, 8, "3, padding=1, groups=8"), [_x(8, nd)])
    yield module_case(op, "k3_dw_mult2", ctor(4, 8, "3, groups=4"), [_x(4, nd)])
    yield module_case(op, "k3_unbatched", ctor(cin, cout, "3"), [rand(cin, *SPATIAL[nd])],
                      tags={"unbatched"})
    perm = ", ".join(["0", "1"] + [str(i + 2) for i in reversed(range(nd))])
    yield module_case(op, "k3_noncontiguous", ctor(cin, cout, "3"),
                      [rand(1, cin, *reversed(SPATIAL[nd]))], pre=f"x0 = x0.permute({perm})")
    # a parametrized convolution is converted as the convolution it computes (HuBERT's and
    # Wav2Vec2's positional convolution: weight_norm over dim 2)
    yield module_case(op, "k3_weight_norm", f"nn.utils.parametrizations.weight_norm({ctor(cin, cout, '3')}, dim=2)",
                      [_x(cin, nd)])
    yield module_case(op, "k3_spectral_norm", f"nn.utils.parametrizations.spectral_norm({ctor(cin, cout, '3')})",
                      [_x(cin, nd)])


def _deconv_variants(nd):
    yield "k3", "3", {}, {"smoke": True}
    yield "k3_s2", "3, stride=2", {}, {"smoke": nd == 2}
    yield "k3_s2_p1_op1", "3, stride=2, padding=1, output_padding=1", {}, {}
    yield "k4_s2_p1", "4, stride=2, padding=1", {}, {}
    yield "k2_s2", "2, stride=2", {}, {}
    yield "k3_d2", "3, dilation=2", {}, {}
    yield "k3_nobias", "3, bias=False", {}, {}
    yield "k3_b2", "3", {"batch": 2}, {}
    yield "k1", "1", {}, {}
    if nd >= 2:
        k = (3,) + (1,) * (nd - 1)
        s = (2,) + (1,) * (nd - 1)
        yield "k31_s21", f"{k}, stride={s}", {}, {}
        # the width's output_padding alone (ncnn reads an absent height/depth one as the width's)
        yield "k3_s2_op_w", f"3, stride=2, output_padding={(0,) * (nd - 1) + (1,)}", {}, {}


def _deconv_cases(op, nd, lazy=False):
    name = f"nn.LazyConvTranspose{nd}d" if lazy else f"nn.ConvTranspose{nd}d"
    cin, cout = 4, 8

    def ctor(ci, co, args):
        return f"{name}({co}, {args})" if lazy else f"{name}({ci}, {co}, {args})"

    def init(ci, batch=1):
        shape = (batch, ci) + SPATIAL[nd]
        return f"self.m(torch.zeros{shape})" if lazy else None

    for variant, args, xkw, extra in _deconv_variants(nd):
        yield module_case(op, variant, ctor(cin, cout, args), [_x(cin, nd, **xkw)],
                          init=init(cin, **xkw), **extra)
    if lazy:
        yield module_case(op, "k3_uninitialized", f"{name}({cout}, 3)", [_x(cin, nd)],
                          reasons={"no-trace": "torch.jit.trace refuses uninitialized lazy "
                                   "parameters; the first forward materializes them"})
        return
    for ci, co in CHANNELS:
        yield module_case(op, f"k3_s2_c{ci}_{co}", ctor(ci, co, "3, stride=2"), [_x(ci, nd)])
    yield module_case(op, "k3_g2", ctor(4, 8, "3, groups=2"), [_x(4, nd)], smoke=nd == 2)
    yield module_case(op, "k3_s2_dw", ctor(8, 8, "3, stride=2, groups=8"), [_x(8, nd)])
    yield module_case(op, "k3_unbatched", ctor(cin, cout, "3, stride=2"),
                      [rand(cin, *SPATIAL[nd])], tags={"unbatched"})
    out = tuple(2 * s for s in SPATIAL[nd])      # stride 2, k3, p1: 2s-1, or 2s with output_padding
    yield module_case(op, "k3_s2_output_size", ctor(cin, cout, "3, stride=2, padding=1"),
                      [_x(cin, nd)], call=f"self.m(x0, output_size={list(out)})")


@family("nn.Conv1d", "nn.Conv2d", "nn.Conv3d")
def convs():
    for nd in (1, 2, 3):
        yield from _conv_cases(f"nn.Conv{nd}d", nd)


@family("nn.LazyConv1d", "nn.LazyConv2d", "nn.LazyConv3d")
def lazy_convs():
    for nd in (1, 2, 3):
        yield from _conv_cases(f"nn.LazyConv{nd}d", nd, lazy=True)


@family("nn.ConvTranspose1d", "nn.ConvTranspose2d", "nn.ConvTranspose3d")
def deconvs():
    for nd in (1, 2, 3):
        yield from _deconv_cases(f"nn.ConvTranspose{nd}d", nd)


@family("nn.LazyConvTranspose1d", "nn.LazyConvTranspose2d", "nn.LazyConvTranspose3d")
def lazy_deconvs():
    for nd in (1, 2, 3):
        yield from _deconv_cases(f"nn.LazyConvTranspose{nd}d", nd, lazy=True)


@family("nn.Conv1d", "nn.Conv2d")
def conv_fusions():
    """A batch-1 convolution with what the ncnn lowering folds into it (an activation, a zero
    pad), and a non-square dilated kernel; moved from the hand-written ncnn export tests."""
    x = rand(1, 8, 12, 12)
    yield module_case("nn.Conv2d", "k3_dw_relu", "nn.Conv2d(8, 8, 3, groups=8)", [x], call="F.relu(self.m(x0))")
    yield module_case("nn.Conv2d", "k1_sigmoid", "nn.Conv2d(8, 4, 1)", [x], call="torch.sigmoid(self.m(x0))")
    yield module_case("nn.Conv2d", "k1_relu6", "nn.Conv2d(8, 4, 1)", [x], call="F.relu6(self.m(x0))")
    yield module_case("nn.Conv2d", "k3_after_zero_pad", "nn.Conv2d(8, 6, 3)", [x], pre="x0 = F.pad(x0, (1, 2, 0, 1))")
    yield module_case("nn.Conv2d", "k35_s21_d2_nobias",
                      "nn.Conv2d(8, 4, (3, 5), stride=(2, 1), dilation=2, bias=False)", [x])
    yield module_case("nn.Conv1d", "k3_p1_leaky_relu", "nn.Conv1d(6, 8, 3, padding=1)", [rand(1, 6, 20)],
                      call="F.leaky_relu(self.m(x0), 0.1)")
