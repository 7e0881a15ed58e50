"""Tiny `transformers` models as users build them (small configs, random weights seeded,
nothing downloaded), wrapped as `model(ids, return_dict=False)[0]`. Import after
`pytest.importorskip("transformers")`."""
from __future__ import annotations

import torch
import torch.nn as nn
import transformers

transformers.logging.set_verbosity_error()  # the tiny configs' token ids are outside the vocabulary


class FirstOutput(nn.Module):
    def __init__(self, model: nn.Module, **kwargs) -> None:
        super().__init__()
        self.model, self.kwargs = model, kwargs

    def forward(self, ids):
        return self.model(ids, return_dict=False, **self.kwargs)[0]


def token_ids(length: int = 8, low: int = 2, vocab: int = 128) -> torch.Tensor:
    return torch.randint(low, vocab, (1, length), generator=torch.Generator().manual_seed(0))


def bert() -> nn.Module:
    """Its token types are a buffer gathered at the position ids, then expanded to
    (batch, length): an expand to sizes that follow the input at two lengths."""
    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                     num_attention_heads=4, vocab_size=128, max_position_embeddings=64)
    return FirstOutput(transformers.BertModel(config).eval())


def gpt2(**kwargs) -> nn.Module:
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_embd=64, n_layer=1, n_head=4, vocab_size=128, n_positions=64)
    return FirstOutput(transformers.GPT2Model(config).eval(), **kwargs)


def gpt2_lm_head(**kwargs) -> nn.Module:
    """Its LM head shares the token embedding's weight (tied)."""
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_embd=64, n_layer=1, n_head=4, vocab_size=128, n_positions=64)
    return FirstOutput(transformers.GPT2LMHeadModel(config).eval(), **kwargs)


def llama(**kwargs) -> nn.Module:
    torch.manual_seed(0)
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                      num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
                                      max_position_embeddings=64)
    return FirstOutput(transformers.LlamaModel(config).eval(), **kwargs)


def t5_encoder() -> nn.Module:
    """Its relative position bias over the length: log-spaced buckets (log(0) = -inf cast to an
    index on the diagonal), full_like, where, and an embedding of an (L, L) index permuted to
    the attention mask."""
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4)
    return FirstOutput(transformers.T5EncoderModel(config).eval())


class Seq2SeqOutput(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids, decoder_ids):
        return self.model(input_ids=ids, decoder_input_ids=decoder_ids, return_dict=False, use_cache=False)[0]


def t5() -> nn.Module:
    """Encoder and decoder: the decoder's causal mask filled with finfo(float32).min, and its
    cross-attention bias torch.zeros(1, heads, L, S) over both lengths."""
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=1, num_heads=4,
                                   decoder_start_token_id=0)
    return Seq2SeqOutput(transformers.T5ForConditionalGeneration(config).eval())


class SpeechOutput(nn.Module):
    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, audio):
        return self.model(audio, return_dict=False)[0]


def hubert() -> nn.Module:
    """Its positional convolution carries parametrizations.weight_norm (dim=2)."""
    torch.manual_seed(0)
    config = transformers.HubertConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, conv_dim=(16, 16), conv_stride=(5, 2),
                                       conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                       num_conv_pos_embedding_groups=2)
    return SpeechOutput(transformers.HubertModel(config).eval())


def roformer() -> nn.Module:
    """Calls warn_if_padding_and_no_attention_mask: `if pad_token_id in input_ids[:, [-1, 0]]`."""
    torch.manual_seed(0)
    config = transformers.RoFormerConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                         num_attention_heads=4, vocab_size=128, max_position_embeddings=64,
                                         embedding_size=64, pad_token_id=0)
    return FirstOutput(transformers.RoFormerModel(config).eval())


def roberta() -> nn.Module:
    """Position ids from the token ids: input_ids.ne(padding_idx), cumsum, and token types
    gathered from a buffer at them."""
    torch.manual_seed(0)
    config = transformers.RobertaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                        num_attention_heads=4, vocab_size=128, max_position_embeddings=64,
                                        pad_token_id=1)
    return FirstOutput(transformers.RobertaModel(config).eval())
