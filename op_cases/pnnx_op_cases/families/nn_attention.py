"""nn.*: the `attention` family (emit/*/families/attention.py): MultiheadAttention (small:
embed_dim 8, 2 heads)."""
from __future__ import annotations

from dataclasses import replace

from ..builders import bools, module_case, rand
from ..registry import family


E, HEADS, FF = 8, 2, 16


S, T, N = 5, 4, 2            # source length, target length, batch


SRC, TGT = rand(S, N, E), rand(T, N, E)


SRC_BF, TGT_BF = rand(N, S, E), rand(N, T, E)


# a float causal mask built in forward (so it is part of the traced graph as a constant)
CAUSAL = "m0 = torch.triu(torch.full(({n}, {n}), float('-inf')), diagonal=1)"


@family("nn.MultiheadAttention")
def multihead_attention():
    op = "nn.MultiheadAttention"
    mha = f"nn.MultiheadAttention({E}, {HEADS}"
    both = ("y[0]", "y[1]")

    def case(variant, args, inputs, **kw):
        kw.setdefault("ret", both)
        return module_case(op, variant, f"{mha}{args})", inputs, **kw)

    yield case("self", "", [SRC], call="self.m(x0, x0, x0)", smoke=True)
    yield case("self_bf", ", batch_first=True", [SRC_BF], call="self.m(x0, x0, x0)", smoke=True)
    yield case("cross", "", [TGT, SRC], call="self.m(x0, x1, x1)")
    yield case("qkv_distinct", "", [TGT, SRC, rand(S, N, E)], call="self.m(x0, x1, x2)")
    yield case("kdim_vdim", ", kdim=6, vdim=5", [TGT, rand(S, N, 6), rand(S, N, 5)],
               call="self.m(x0, x1, x2)")
    yield case("nobias", ", bias=False", [SRC], call="self.m(x0, x0, x0)")
    yield case("add_bias_kv", ", add_bias_kv=True", [SRC], call="self.m(x0, x0, x0)")
    yield case("add_zero_attn", ", add_zero_attn=True", [SRC], call="self.m(x0, x0, x0)")
    yield case("bias_kv_zero_attn_kdim_vdim", ", add_bias_kv=True, add_zero_attn=True, kdim=6, vdim=5",
               [TGT, rand(S, N, 6), rand(S, N, 5)], call="self.m(x0, x1, x2)", ret="y[0]")
    yield case("bias_kv_zero_attn_causal", ", add_bias_kv=True, add_zero_attn=True", [SRC], pre=CAUSAL.format(n=S),
               call="self.m(x0, x0, x0, attn_mask=m0)", ret="y[0]")
    yield case("bias_kv_key_padding_mask", ", add_bias_kv=True, batch_first=True", [SRC_BF],
               pre=f"m0 = torch.arange({S}).unsqueeze(0) >= torch.tensor([[{S}], [{S - 2}]])",
               call="self.m(x0, x0, x0, key_padding_mask=m0)", ret="y[0]")
    yield from _two_lengths(case)
    yield case("no_weights", "", [SRC], call="self.m(x0, x0, x0, need_weights=False)", ret="y[0]")
    yield case("per_head_weights", "", [SRC],
               call="self.m(x0, x0, x0, average_attn_weights=False)")
    yield case("attn_mask_causal", "", [SRC], pre=CAUSAL.format(n=S),
               call="self.m(x0, x0, x0, attn_mask=m0)")
    yield case("attn_mask_bool", "", [SRC, bools(S, S)],
               pre="x1 = x1 & ~torch.eye(5, dtype=torch.bool)",
               call="self.m(x0, x0, x0, attn_mask=x1)")
    yield case("key_padding_mask", ", batch_first=True", [SRC_BF],
               pre=f"m0 = torch.arange({S}).unsqueeze(0) >= torch.tensor([[{S}], [{S - 2}]])",
               call="self.m(x0, x0, x0, key_padding_mask=m0)")
    yield module_case(op, "heads1", f"nn.MultiheadAttention({E}, 1)", [SRC],
                      call="self.m(x0, x0, x0)", ret=both)
    yield module_case(op, "e12_h4", "nn.MultiheadAttention(12, 4)", [rand(S, N, 12)],
                      call="self.m(x0, x0, x0)", ret=both)
    yield case("unbatched", "", [rand(S, E)], call="self.m(x0, x0, x0)", tags={"unbatched"})


def _two_lengths(case):
    """add_bias_kv / add_zero_attn with sequences whose lengths change (`inputshape2`): the
    appended key rows follow the source length."""
    for variant, args in (("bias_kv_zero_attn", ", add_bias_kv=True, add_zero_attn=True"),
                          ("bias_kv_kdim_vdim_bf", ", add_bias_kv=True, kdim=6, vdim=5, batch_first=True")):
        cross = "kdim" in args
        inputs = [rand(N, T, E), rand(N, S, 6), rand(N, S, 5)] if cross else [SRC]
        inputs2 = [rand(N, T + 2, E), rand(N, S + 3, 6), rand(N, S + 3, 5)] if cross else [rand(S + 3, N, E)]
        c = case(f"dyn_{variant}", args, inputs, call="self.m(x0, x1, x2)" if cross else "self.m(x0, x0, x0)",
                 ret="y[0]")
        yield replace(c, inputs2=tuple(inputs2), tags=c.tags | {"dynamic"})


@family("nn.MultiheadAttention")
def attention_b1():
    """Batch-1 forms the ncnn lowering treats on their own (it drops the batch axis; inputs
    whose dim 0 is not 1 go the batchless way), moved from the hand-written ncnn export tests."""
    op = "nn.MultiheadAttention"
    yield module_case(op, "self_bf_b1_e16_h4", "nn.MultiheadAttention(16, 4, batch_first=True)", [rand(1, 5, 16)],
                      call="self.m(x0, x0, x0)", ret="y[0]")
    yield module_case(op, "cross_kdim_vdim_bf_b1", "nn.MultiheadAttention(16, 2, batch_first=True, kdim=12, vdim=8)",
                      [rand(1, 5, 16), rand(1, 7, 12), rand(1, 7, 8)], ret="y[0]")
