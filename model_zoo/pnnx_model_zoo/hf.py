"""The transformers tier: models of the Hugging Face `transformers` library built from small
configurations (random weights from the case's seed, nothing downloaded), each wrapped as
`model(..., return_dict=False)[0]`, and a LLaMA-style decode step with a key/value cache.

Full tier only, beside the sweep (`python -m pnnx_model_zoo.run --models transformers`): the
default run's time budget is tight. The cases need `transformers` installed (requirements:
the test dependencies); without it their conversion fails with the import error."""
from __future__ import annotations

from pnnx_op_cases.case import InputSpec

HEADER = '''import torch
import torch.nn as nn
import transformers

transformers.logging.set_verbosity_error()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.m = {ctor}
        self.m.eval()

    def forward(self, {args}):
        return self.m({call}, return_dict=False)[0]
'''

# token-id models: vocabulary 100, width 64, 2 layers, 4 heads (LLaMA: 2 key/value heads)
MODELS = {
    "bert": "transformers.BertModel(transformers.BertConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, "
            "num_attention_heads=4, intermediate_size=128, max_position_embeddings=64))",
    "gpt2": "transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=100, n_embd=64, n_layer=2, n_head=4, "
            "n_positions=64, bos_token_id=0, eos_token_id=0))",
    "llama": "transformers.LlamaForCausalLM(transformers.LlamaConfig(vocab_size=100, hidden_size=64, "
             "intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, "
             "max_position_embeddings=64))",
    "t5_encoder": "transformers.T5EncoderModel(transformers.T5Config(vocab_size=100, d_model=64, d_kv=16, d_ff=128, "
                  "num_layers=2, num_heads=4))",
}
T5 = ("transformers.T5ForConditionalGeneration(transformers.T5Config(vocab_size=100, d_model=64, d_kv=16, "
      "d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4, decoder_start_token_id=0))")
VIT = ("transformers.ViTModel(transformers.ViTConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, "
       "num_attention_heads=4, intermediate_size=128))")
WHISPER = ("transformers.WhisperModel(transformers.WhisperConfig(vocab_size=100, num_mel_bins=16, d_model=64, "
           "encoder_layers=2, encoder_attention_heads=4, decoder_layers=1, decoder_attention_heads=4, "
           "encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=32, max_target_positions=32, "
           "pad_token_id=0, bos_token_id=0, eos_token_id=0, decoder_start_token_id=0)).encoder")

# the cases whose traced graph concatenates new keys/values onto the cache's empty past
DECODERS = ("models.hf_gpt2", "models.hf_llama", "models.hf_t5")

TOKENS = InputSpec((1, 8), dtype="i64", low=1, high=100)

DECODE_STEP = '''import torch
import torch.nn as nn
import torch.nn.functional as F

D, H, G, V, MAXPOS = 64, 4, 2, 100, 64
E = D // H


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    return torch.cat((-x[..., E // 2:], x[..., :E // 2]), dim=-1)


class Model(nn.Module):
    """One LLaMA-style layer and its head on new tokens, given the past keys and values:
    (ids, positions, past_k, past_v) -> (logits, k, v), k and v (1, G, past + new, E) with the
    new tokens' keys/values appended (grouped heads, rotary positions looked up per token)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, D)
        self.norm1, self.norm2, self.norm = RMSNorm(D), RMSNorm(D), RMSNorm(D)
        self.q, self.o = nn.Linear(D, D, bias=False), nn.Linear(D, D, bias=False)
        self.k, self.v = nn.Linear(D, G * E, bias=False), nn.Linear(D, G * E, bias=False)
        self.gate, self.up = nn.Linear(D, 2 * D, bias=False), nn.Linear(D, 2 * D, bias=False)
        self.down, self.head = nn.Linear(2 * D, D, bias=False), nn.Linear(D, V, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, E, 2).float() / E))
        emb = torch.outer(torch.arange(MAXPOS).float(), inv).repeat(1, 2)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, ids, pos, past_k, past_v):
        x = self.embed(ids)
        b, t, _ = x.shape
        h = self.norm1(x)
        q = self.q(h).view(b, t, H, E).transpose(1, 2)
        k = self.k(h).view(b, t, G, E).transpose(1, 2)
        v = self.v(h).view(b, t, G, E).transpose(1, 2)
        cos, sin = F.embedding(pos, self.cos).unsqueeze(1), F.embedding(pos, self.sin).unsqueeze(1)
        q = q * cos + rotate_half(q) * sin
        k = torch.cat([past_k, k * cos + rotate_half(k) * sin], dim=2)
        v = torch.cat([past_v, v], dim=2)
        a = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, D))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h))
        return self.head(self.norm(x)), k, v
'''
DECODE_INPUTS = (InputSpec((1, 1), dtype="i64", low=1, high=100), InputSpec((1, 1), dtype="i64", low=3, high=4),
                 InputSpec((1, 2, 3, 16), low=-1.0, high=1.0), InputSpec((1, 2, 3, 16), low=-1.0, high=1.0))


def wrapped(ctor: str, args: str = "ids", call: str = "ids") -> str:
    return HEADER.format(ctor=ctor, args=args, call=call)


# converted for any prompt length (inputshape2): the decoders without their key/value cache, as a
# user converting a whole-sequence forward sets them
TWO_LENGTHS = {
    "bert": MODELS["bert"],
    "gpt2": MODELS["gpt2"].replace("eos_token_id=0", "eos_token_id=0, use_cache=False"),
    "llama": MODELS["llama"].replace("max_position_embeddings=64", "max_position_embeddings=64, use_cache=False"),
    "t5_encoder": MODELS["t5_encoder"],
}
TOKENS2 = InputSpec((1, 13), dtype="i64", low=1, high=100)


def two_length_cases() -> list[tuple[str, str, tuple[InputSpec, ...], tuple[InputSpec, ...]]]:
    """(case id without `models.`, model source, inputs, second inputs) per model converted at
    8 tokens and 13 (shapes that follow the input)."""
    return [(f"hf_{name}/two_lengths", wrapped(ctor), (TOKENS,), (TOKENS2,)) for name, ctor in TWO_LENGTHS.items()]


def cases() -> list[tuple[str, str, tuple[InputSpec, ...]]]:
    """(case id without `models.`, model source, inputs) per model."""
    # decoders as users call them: use_cache at its default, so the traced graph concatenates the
    # new keys/values onto an empty past (a zero-length tensor, issue 29 item 1)
    found = [(f"hf_{name}/tiny", wrapped(ctor), (TOKENS,)) for name, ctor in MODELS.items()]
    found += [
        ("hf_t5/tiny", wrapped(T5, "ids, decoder_ids", "input_ids=ids, decoder_input_ids=decoder_ids"),
         (TOKENS, InputSpec((1, 4), dtype="i64", low=1, high=100))),
        ("hf_vit/tiny", wrapped(VIT, "pixels", "pixel_values=pixels"), (InputSpec((1, 3, 32, 32)),)),
        ("hf_whisper_encoder/tiny", wrapped(WHISPER, "features", "input_features=features"),
         (InputSpec((1, 16, 64), low=-1.0, high=1.0),)),
        ("llm_decode_step/d64_gqa", DECODE_STEP, DECODE_INPUTS),
    ]
    return found
