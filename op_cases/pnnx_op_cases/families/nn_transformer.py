"""Transformer modules (small: d_model 8, 2 heads, feed-forward 16): the `transformer` family
(emit/*/families/transformer.py)."""
from __future__ import annotations

from ..builders import module_case, rand
from ..registry import family


E, HEADS, FF = 8, 2, 16


S, T, N = 5, 4, 2            # source length, target length, batch


SRC, TGT = rand(S, N, E), rand(T, N, E)


SRC_BF, TGT_BF = rand(N, S, E), rand(N, T, E)


# a float causal mask built in forward (so it is part of the traced graph as a constant)
CAUSAL = "m0 = torch.triu(torch.full(({n}, {n}), float('-inf')), diagonal=1)"


def _layer_args(extra=""):
    return f"{E}, {HEADS}, dim_feedforward={FF}, dropout=0.0{extra}"


@family("nn.TransformerEncoderLayer")
def encoder_layer():
    op = "nn.TransformerEncoderLayer"

    def case(variant, extra, inputs, **kw):
        return module_case(op, variant, f"nn.TransformerEncoderLayer({_layer_args(extra)})",
                           inputs, **kw)

    yield case("default", "", [SRC], smoke=True)
    yield case("batch_first", ", batch_first=True", [SRC_BF], smoke=True)
    yield case("norm_first", ", norm_first=True", [SRC])
    yield case("gelu", ", activation='gelu'", [SRC])
    yield case("nobias", ", bias=False", [SRC])
    yield case("eps1e-3", ", layer_norm_eps=1e-3", [SRC])
    yield case("src_mask", "", [SRC], pre=CAUSAL.format(n=S), call="self.m(x0, src_mask=m0)")
    yield case("is_causal", "", [SRC], pre=CAUSAL.format(n=S),
               call="self.m(x0, src_mask=m0, is_causal=True)")
    yield case("key_padding_mask", ", batch_first=True", [SRC_BF],
               pre=f"m0 = torch.arange({S}).unsqueeze(0) >= torch.tensor([[{S}], [{S - 2}]])",
               call="self.m(x0, src_key_padding_mask=m0)")
    yield case("unbatched", "", [rand(S, E)], tags={"unbatched"})


@family("nn.TransformerDecoderLayer")
def decoder_layer():
    op = "nn.TransformerDecoderLayer"

    def case(variant, extra, inputs, **kw):
        kw.setdefault("call", "self.m(x0, x1)")
        return module_case(op, variant, f"nn.TransformerDecoderLayer({_layer_args(extra)})",
                           inputs, **kw)

    yield case("default", "", [TGT, SRC], smoke=True)
    yield case("batch_first", ", batch_first=True", [TGT_BF, SRC_BF], smoke=True)
    yield case("norm_first", ", norm_first=True", [TGT, SRC])
    yield case("gelu", ", activation='gelu'", [TGT, SRC])
    yield case("nobias", ", bias=False", [TGT, SRC])
    yield case("tgt_mask", "", [TGT, SRC], pre=CAUSAL.format(n=T),
               call="self.m(x0, x1, tgt_mask=m0)")
    yield case("memory_mask", "", [TGT, SRC],
               pre=f"m0 = torch.zeros({T}, {S})\nm0[:, -1] = float('-inf')",
               call="self.m(x0, x1, memory_mask=m0)")
    yield case("unbatched", "", [rand(T, E), rand(S, E)], tags={"unbatched"})


@family("nn.TransformerEncoder")
def encoder():
    op = "nn.TransformerEncoder"
    layer = f"nn.TransformerEncoderLayer({_layer_args()})"
    layer_bf = f"nn.TransformerEncoderLayer({_layer_args(', batch_first=True')})"
    yield module_case(op, "layers2", f"nn.TransformerEncoder({layer}, 2, enable_nested_tensor=False)",
                      [SRC], smoke=True)
    yield module_case(op, "layers1_norm",
                      f"nn.TransformerEncoder({layer}, 1, norm=nn.LayerNorm({E}), "
                      "enable_nested_tensor=False)", [SRC])
    yield module_case(op, "layers2_bf", f"nn.TransformerEncoder({layer_bf}, 2)", [SRC_BF])
    yield module_case(op, "layers2_mask", f"nn.TransformerEncoder({layer}, 2, enable_nested_tensor=False)",
                      [SRC], pre=CAUSAL.format(n=S), call="self.m(x0, mask=m0)")
    yield module_case(op, "layers3_norm_first",
                      f"nn.TransformerEncoder(nn.TransformerEncoderLayer({_layer_args(', norm_first=True')}), "
                      "3, enable_nested_tensor=False)", [SRC])


@family("nn.TransformerDecoder")
def decoder():
    op = "nn.TransformerDecoder"
    layer = f"nn.TransformerDecoderLayer({_layer_args()})"
    yield module_case(op, "layers2", f"nn.TransformerDecoder({layer}, 2)", [TGT, SRC], smoke=True)
    yield module_case(op, "layers1_norm", f"nn.TransformerDecoder({layer}, 1, norm=nn.LayerNorm({E}))",
                      [TGT, SRC])
    yield module_case(op, "layers2_bf",
                      f"nn.TransformerDecoder(nn.TransformerDecoderLayer({_layer_args(', batch_first=True')}), 2)",
                      [TGT_BF, SRC_BF])
    yield module_case(op, "layers2_tgt_mask", f"nn.TransformerDecoder({layer}, 2)", [TGT, SRC],
                      pre=CAUSAL.format(n=T), call="self.m(x0, x1, tgt_mask=m0)")
    yield module_case(op, "layers2_norm_first",
                      f"nn.TransformerDecoder(nn.TransformerDecoderLayer({_layer_args(', norm_first=True')}), 2)",
                      [TGT, SRC])


@family("nn.Transformer")
def transformer():
    op = "nn.Transformer"
    base = (f"nn.Transformer({E}, {HEADS}, num_encoder_layers=1, num_decoder_layers=1, "
            f"dim_feedforward={FF}, dropout=0.0")
    yield module_case(op, "l1", f"{base})", [SRC, TGT], smoke=True)
    yield module_case(op, "l1_bf", f"{base}, batch_first=True)", [SRC_BF, TGT_BF])
    yield module_case(op, "l2_gelu",
                      base.replace("layers=1", "layers=2") + ", activation='gelu')", [SRC, TGT])
    yield module_case(op, "l1_norm_first", f"{base}, norm_first=True)", [SRC, TGT])
    yield module_case(op, "l1_tgt_mask", f"{base})", [SRC, TGT], pre=CAUSAL.format(n=T),
                      call="self.m(x0, x1, tgt_mask=m0)")
    yield module_case(op, "l1_unbatched", f"{base})", [rand(S, E), rand(T, E)],
                      tags={"unbatched"})
