"""torchvision's deformable convolution: the module and the call, with and without mask, bias
on and off, weight and offset groups, stride/padding/dilation. The offsets (and the mask) are
inputs of the case, scaled so samples land between pixels and past the borders."""
from __future__ import annotations

from ..builders import call_case, module_case, rand, vid
from ..registry import family

N, C, H, W = 1, 4, 8, 8


def _out(size: int, k: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1


def _offset_inputs(k, stride, padding, dilation, offset_groups, mask):
    h, w = _out(H, k, stride, padding, dilation), _out(W, k, stride, padding, dilation)
    inputs = [rand(N, C, H, W), rand(N, 2 * offset_groups * k * k, h, w, low=-2.0, high=2.0)]
    return inputs + ([rand(N, offset_groups * k * k, h, w, low=0.0, high=1.0)] if mask else [])


GEOMETRIES = [  # (kernel, stride, padding, dilation, weight groups, offset groups, bias, mask)
    (3, 1, 1, 1, 1, 1, True, False),
    (3, 1, 1, 1, 1, 1, True, True),
    (3, 2, 2, 2, 1, 2, False, True),
    (3, 1, 1, 1, 2, 2, True, True),
    (2, 1, 0, 1, 4, 1, False, False),
]


@family("torchvision.ops.DeformConv2d")
def deform_conv2d_module():
    op = "torchvision.ops.DeformConv2d"
    for i, (k, s, p, d, g, og, bias, mask) in enumerate(GEOMETRIES):
        yield module_case(op, vid(k=k, s=s, p=p, d=d, g=g, og=og, nobias=not bias, mask=mask),
                          f"torchvision.ops.DeformConv2d({C}, 8, {k}, stride={s}, padding={p}, dilation={d}, "
                          f"groups={g}, bias={bias})",
                          _offset_inputs(k, s, p, d, og, mask), smoke=i == 1)


@family("torchvision.ops.deform_conv2d")
def deform_conv2d_call():
    op = "torchvision.ops.deform_conv2d"
    for i, (k, s, p, d, g, og, bias, mask) in enumerate(GEOMETRIES):
        args = f"x0, x1, self.weight, {'self.bias' if bias else 'None'}, ({s}, {s}), ({p}, {p}), ({d}, {d})"
        params = {"weight": (8, C // g, k, k)} | ({"bias": (8,)} if bias else {})
        yield call_case(op, vid(k=k, s=s, p=p, d=d, g=g, og=og, nobias=not bias, mask=mask),
                        f"torchvision.ops.deform_conv2d({args}{', mask=x2' if mask else ''})",
                        _offset_inputs(k, s, p, d, og, mask), params=params, smoke=i == 1)
