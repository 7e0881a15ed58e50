"""F.*: the `conv` family (emit/*/families/conv.py): conv1d, conv2d, conv3d, conv_transpose1d,
conv_transpose2d, conv_transpose3d, linear."""
from __future__ import annotations

from ..registry import family
from .F_Tensor_torch_kit import case, f, table


def _conv_rows(fn: str, rank: int) -> list[tuple]:
    sp = {1: (16,), 2: (9, 10), 3: (5, 6, 7)}[rank]
    k = (3,) * rank

    def shape(n, c):
        return (n, c) + sp

    def row(name, cin, cout, groups, kwargs, n=1, bias=True, kern=k, spatial_in=None):
        params = {"w": (cout, cin // groups) + kern}
        args = "x0, self.w"
        if bias:
            params["b"] = (cout,)
            args += ", self.b"
        call = f"{fn}({args}{', ' + kwargs if kwargs else ''})"
        return (name, call, [f(*(spatial_in or shape(n, cin)))], {"params": params})

    return [
        row("c3_k3", 3, 16, 1, ""),
        row("c4_k3_s2_p1", 4, 8, 1, "stride=2, padding=1", n=2),
        row("c13_k3_d2_nobias", 13, 12, 1, "dilation=2", bias=False),
        row("c16_g4", 16, 16, 4, "padding=1, groups=4"),
        row("c8_dw", 8, 8, 8, "padding=1, groups=8"),
        row("c12_same", 12, 4, 1, "padding='same'", n=2),
        row("c3_valid_k1", 3, 13, 1, "padding='valid'", kern=(1,) * rank),
        row("c1_s2_p2_d2", 1, 3, 1, "stride=2, padding=2, dilation=2"),
        ("noncontig_channel_stride", f"x = x0[:, ::2]\n{fn}(x, self.w, self.b, padding=1)",
         [f(*shape(1, 8))], {"params": {"w": (6, 4) + k, "b": (6,)}}),
    ]


@family("F.conv1d")
def _conv1d():
    rows = _conv_rows("F.conv1d", 1) + [
        ("unbatched", "F.conv1d(x0, self.w, padding=1)", [f(3, 11)], {"params": {"w": (4, 3, 3)}, "tags": {"unbatched"}}),
    ]
    return table("F.conv1d", rows)


@family("F.conv2d")
def _conv2d():
    rows = _conv_rows("F.conv2d", 2) + [
        ("k3x1_s2x1_p1x0", "F.conv2d(x0, self.w, self.b, stride=(2, 1), padding=(1, 0))", [f(1, 4, 10, 9)],
         {"params": {"w": (8, 4, 3, 1), "b": (8,)}}),
        ("weight_input", "F.conv2d(x0, x1, padding=1)", [f(1, 3, 8, 8), f(4, 3, 3, 3)]),
    ]
    return table("F.conv2d", rows)


@family("F.conv3d")
def _conv3d():
    return table("F.conv3d", _conv_rows("F.conv3d", 3))


def _deconv_rows(fn: str, rank: int) -> list[tuple]:
    sp = {1: (9,), 2: (6, 7), 3: (4, 5, 3)}[rank]
    k = (3,) * rank

    def row(name, cin, cout, groups, kwargs, n=1, bias=True, kern=k):
        params = {"w": (cin, cout // groups) + kern}
        args = "x0, self.w"
        if bias:
            params["b"] = (cout,)
            args += ", self.b"
        return (name, f"{fn}({args}{', ' + kwargs if kwargs else ''})", [f(n, cin, *sp)], {"params": params})

    return [
        row("c3_k3", 3, 16, 1, ""),
        row("c4_s2_p1_op1", 4, 8, 1, "stride=2, padding=1, output_padding=1", n=2),
        row("c13_d2_nobias", 13, 12, 1, "dilation=2", bias=False),
        row("c16_g4_s2", 16, 16, 4, "stride=2, groups=4"),
        row("c8_dw", 8, 8, 8, "padding=1, groups=8"),
        row("c12_k2_s2", 12, 4, 1, "stride=2", kern=(2,) * rank),
        row("c1_s3_p2", 1, 3, 1, "stride=3, padding=2"),
    ]


@family("F.conv_transpose1d", "F.conv_transpose2d", "F.conv_transpose3d")
def conv_transposes():
    for rank in (1, 2, 3):
        op = f"F.conv_transpose{rank}d"
        yield from table(op, _deconv_rows(op, rank))


@family("F.conv2d", "F.linear")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("F.conv2d", "c8_k3_s2_p1_b1", "F.conv2d(x0, self.w, self.b, stride=2, padding=1)", [f(1, 8, 12, 12)],
               params={"w": (4, 8, 3, 3), "b": (4,)})
    yield case("F.linear", "r2_b1", "F.linear(x0, self.w, self.b)", [f(1, 10)], params={"w": (5, 10), "b": (5,)})
