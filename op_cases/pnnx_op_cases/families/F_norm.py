"""F.* normalisations."""
from __future__ import annotations

from ..builders import Param
from ..registry import family
from .F_Tensor_torch_kit import f, table


def _stats(c: int) -> dict:
    return {"rm": Param((c,), -0.5, 0.5, buffer=True), "rv": Param((c,), 0.5, 1.5, buffer=True)}


def _affine(c: int) -> dict:
    return {"w": Param((c,), 0.5, 1.5), "b": (c,)}


@family("F.batch_norm")
def _batch_norm():
    def bn(name, shape, extra="", affine=True):
        c = shape[1]
        params = {**_stats(c), **(_affine(c) if affine else {})}
        args = "self.rm, self.rv" + (", self.w, self.b" if affine else "")
        return (name, f"F.batch_norm(x0, {args}{extra})", [f(*shape)], {"params": params})
    return table("F.batch_norm", [
        bn("r4_c3", (1, 3, 8, 8)),
        bn("r2_c16_b4", (4, 16)),
        bn("r3_c13_b2", (2, 13, 9)),
        bn("r5_c4", (1, 4, 3, 5, 6)),
        bn("c12_noaffine", (1, 12, 5, 5), affine=False),
        bn("c8_eps1e-3", (2, 8, 4, 4), ", eps=1e-3"),
        bn("c1", (3, 1, 7, 7)),
    ])


@family("F.group_norm")
def _group_norm():
    def gn(name, shape, g, affine=True, extra=""):
        c = shape[1]
        args = ", self.w, self.b" if affine else ""
        return (name, f"F.group_norm(x0, {g}{args}{extra})", [f(*shape)], {"params": _affine(c) if affine else {}})
    return table("F.group_norm", [
        gn("g2_c8_r4", (1, 8, 6, 6), 2),
        gn("g1_c3", (2, 3, 5, 7), 1),
        gn("g4_c16_r3", (2, 16, 9), 4),
        gn("g13_c13_noaffine", (1, 13, 4, 4), 13, affine=False),
        gn("g3_c12_r5", (1, 12, 2, 3, 4), 3),
        gn("g4_c12_r2_eps", (4, 12), 4, extra=", eps=1e-3"),
    ], tol=(1e-5, 1e-4, "variance over few elements amplifies fp32 rounding"))


@family("F.instance_norm")
def _instance_norm():
    def inorm(name, shape, affine=False, stats=False, extra=""):
        c = shape[1]
        params, args = {}, ""
        if stats:
            params.update(_stats(c))
            args += ", running_mean=self.rm, running_var=self.rv, use_input_stats=False"
        if affine:
            params.update(_affine(c))
            args += ", weight=self.w, bias=self.b"
        return (name, f"F.instance_norm(x0{args}{extra})", [f(*shape)], {"params": params})
    return table("F.instance_norm", [
        inorm("r4_c3", (1, 3, 8, 8)),
        inorm("r3_c16_affine_b2", (2, 16, 10), affine=True),
        inorm("r5_c4", (1, 4, 3, 4, 5)),
        inorm("c13_running_stats", (1, 13, 6, 6), affine=True, stats=True),
        inorm("c8_eps1e-3", (2, 8, 5, 5), extra=", eps=1e-3"),
    ], tol=(1e-5, 1e-4, "per-instance variance over few elements"))


@family("F.layer_norm")
def _layer_norm():
    def ln(name, shape, nshape, affine=True, bias=True, extra=""):
        params = {"w": Param(nshape, 0.5, 1.5)} if affine else {}
        args = ", self.w" if affine else ""
        if affine and bias:
            params["b"] = nshape
            args += ", self.b"
        return (name, f"F.layer_norm(x0, {list(nshape)}{args}{extra})", [f(*shape)], {"params": params})
    return table("F.layer_norm", [
        ln("last_c16", (2, 5, 16), (16,)),
        ln("last2", (1, 3, 4, 12), (4, 12)),
        ln("r2_c13_noaffine", (4, 13), (13,), affine=False),
        ln("all3", (2, 3, 5, 7), (3, 5, 7)),
        ln("nobias_eps", (1, 8, 8), (8,), bias=False, extra=", eps=1e-3"),
        ln("r1", (12,), (12,)),
        ("noncontig", "x = x0.transpose(1, 2)\nF.layer_norm(x, [4], self.w, self.b)", [f(2, 4, 9)],
         {"params": {"w": (4,), "b": (4,)}}),
    ], tol=(1e-5, 1e-4, "mean/variance reduction order differs between runtimes"))


@family("F.rms_norm")
def _rms_norm():
    rows = [
        ("last_c16", "F.rms_norm(x0, [16], self.w)", [f(2, 5, 16)], {"params": {"w": (16,)}}),
        ("last2_noweight", "F.rms_norm(x0, [4, 12])", [f(1, 3, 4, 12)]),
        ("r2_c13_eps", "F.rms_norm(x0, (13,), self.w, eps=1e-3)", [f(4, 13)], {"params": {"w": (13,)}}),
        ("all3", "F.rms_norm(x0, [3, 5, 7], self.w)", [f(2, 3, 5, 7)], {"params": {"w": (3, 5, 7)}}),
        ("r1", "F.rms_norm(x0, [8])", [f(8)]),
    ]
    return table("F.rms_norm", rows)


@family("F.local_response_norm")
def _lrn():
    return table("F.local_response_norm", [
        ("size3_r4", "F.local_response_norm(x0, 3)", [f(1, 8, 6, 6)]),
        ("size5_params", "F.local_response_norm(x0, 5, alpha=1e-3, beta=0.5, k=2.0)", [f(2, 13, 5, 5)]),
        ("size2_r3", "F.local_response_norm(x0, 2)", [f(1, 16, 10)]),
        ("size4_r5", "F.local_response_norm(x0, 4)", [f(1, 4, 3, 4, 5)]),
        ("size1_c3", "F.local_response_norm(x0, 1, alpha=0.5)", [f(1, 3, 7, 7)]),
    ])


@family("F.normalize")
def _normalize():
    return table("F.normalize", [
        ("default_dim1", "F.normalize(x0)", [f(1, 3, 8, 8)]),
        ("p1_dneg1", "F.normalize(x0, p=1.0, dim=-1)", [f(2, 5, 16)]),
        ("p2_d0_r1", "F.normalize(x0, dim=0)", [f(13)]),
        ("p3_d2", "F.normalize(x0, p=3.0, dim=2)", [f(1, 4, 6, 5)]),
        ("eps_big", "F.normalize(x0, dim=1, eps=0.5)", [f(4, 12, low=-0.1, high=0.1)]),
        ("noncontig", "x = x0.transpose(1, 2)\nF.normalize(x, dim=1)", [f(2, 6, 8)]),
    ])
