"""F.* convolutions, transposed convolutions, linear / bilinear, fold / unfold."""
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


@family("F.linear")
def _linear():
    rows = [
        ("r2_16to8", "F.linear(x0, self.w, self.b)", [f(4, 16)], {"params": {"w": (8, 16), "b": (8,)}}),
        ("r1_nobias", "F.linear(x0, self.w)", [f(13)], {"params": {"w": (12, 13)}}),
        ("r3_b2", "F.linear(x0, self.w, self.b)", [f(2, 7, 12)], {"params": {"w": (3, 12), "b": (3,)}}),
        ("r4", "F.linear(x0, self.w, self.b)", [f(1, 3, 5, 8)], {"params": {"w": (16, 8), "b": (16,)}}),
        ("out1", "F.linear(x0, self.w, self.b)", [f(6, 4)], {"params": {"w": (1, 4), "b": (1,)}}),
        ("weight_input", "F.linear(x0, x1)", [f(2, 5, 9), f(4, 9)]),
        ("noncontig", "x = x0.transpose(1, 2)\nF.linear(x, self.w, self.b)", [f(2, 8, 5)],
         {"params": {"w": (6, 8), "b": (6,)}}),
    ]
    return table("F.linear", rows)


@family("F.bilinear")
def _bilinear():
    rows = [
        ("r2", "F.bilinear(x0, x1, self.w, self.b)", [f(4, 5), f(4, 6)], {"params": {"w": (3, 5, 6), "b": (3,)}}),
        ("r2_nobias", "F.bilinear(x0, x1, self.w)", [f(2, 8), f(2, 8)], {"params": {"w": (4, 8, 8)}}),
        ("r3", "F.bilinear(x0, x1, self.w, self.b)", [f(2, 3, 4), f(2, 3, 7)], {"params": {"w": (13, 4, 7), "b": (13,)}}),
        ("out1", "F.bilinear(x0, x1, self.w, self.b)", [f(5, 3), f(5, 2)], {"params": {"w": (1, 3, 2), "b": (1,)}}),
        ("r1", "F.bilinear(x0, x1, self.w, self.b)", [f(6), f(5)], {"params": {"w": (2, 6, 5), "b": (2,)}}),
    ]
    return table("F.bilinear", rows)


@family("F.unfold")
def _unfold():
    rows = [
        ("k3", "F.unfold(x0, 3)", [f(1, 3, 8, 8)]),
        ("k2_s2", "F.unfold(x0, kernel_size=2, stride=2)", [f(2, 4, 8, 6)]),
        ("k3_p1_d2", "F.unfold(x0, kernel_size=3, padding=1, dilation=2)", [f(1, 13, 7, 9)]),
        ("k2x3_s1x2", "F.unfold(x0, kernel_size=(2, 3), stride=(1, 2))", [f(1, 8, 6, 9)]),
        ("c1_k1", "F.unfold(x0, 1)", [f(1, 1, 5, 5)]),
        ("unbatched", "F.unfold(x0, 2)", [f(3, 6, 6)], {"tags": {"unbatched"}}),
    ]
    return table("F.unfold", rows)


@family("F.fold")
def _fold():
    rows = [
        ("o8_k3", "F.fold(x0, output_size=8, kernel_size=3)", [f(1, 27, 36)]),
        ("o8x6_k2_s2", "F.fold(x0, output_size=(8, 6), kernel_size=2, stride=2)", [f(2, 16, 12)]),
        ("o7x9_k3_p1_d2", "F.fold(x0, (7, 9), 3, padding=1, dilation=2)", [f(1, 9, 35)]),
        ("c13_k1", "F.fold(x0, 5, 1)", [f(1, 13, 25)]),
        ("k2x3_s1x2", "F.fold(x0, (6, 9), (2, 3), stride=(1, 2))", [f(1, 48, 20)]),
        ("unbatched", "F.fold(x0, 4, 2, stride=2)", [f(12, 4)], {"tags": {"unbatched"}}),
    ]
    return table("F.fold", rows)


@family("F.conv2d", "F.linear")
def _ncnn_batch1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    yield case("F.conv2d", "c8_k3_s2_p1_b1", "F.conv2d(x0, self.w, self.b, stride=2, padding=1)", [f(1, 8, 12, 12)],
               params={"w": (4, 8, 3, 3), "b": (4,)})
    yield case("F.linear", "r2_b1", "F.linear(x0, self.w, self.b)", [f(1, 10)], params={"w": (5, 10), "b": (5,)})
