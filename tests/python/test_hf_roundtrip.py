"""The round-trip oracle of hf/: a Hugging Face model that llama.cpp's converter turned into a
GGUF must come back, through ggufs's hf/ folder, as that same model.

Per architecture (a row of ARCHS): a tiny random model of transformers' own class
(torch.manual_seed; every parameter perturbed, so that no norm keeps its ones and no bias its
zeros), with a real tokenizer built offline, is saved with save_pretrained; llama.cpp's
convert_hf_to_gguf.py converts that folder (--outtype f32, and for some rows also f16, bf16,
q8_0); ggufs mounts the GGUF (conftest's mount), and from_pretrained(<mount>/hf) must give back:

  state_dict         the same names and shapes, and bit for bit the reference values: the
                     original's, taken through the file as the converter writes it (its layout:
                     Gemma's norms stored plus one, GPT-2's Conv1D weights transposed; its type:
                     F32 as is, F16/BF16/Q8_0 by gguf-py's quantize then dequantize, the
                     converter's own rounding). For F32 the reference is the original itself but
                     where the layout rounds (Gemma's w + 1 - 1); the Mamba-style A_log, stored
                     as -exp(A_log), within A_LOG_BOUND, derived from exp's and log's documented
                     accuracy.
  logits             on a fixed prompt, torch.equal to the original model's, the original
                     carrying the reference weights. A row whose converter folds config values
                     into the weights (`fold`: Falcon-H1's multipliers) has the folded weights as
                     its reference, the original model itself as the reference model, and its
                     logits within the row's measured `logits_atol`.
  generate           20 greedy tokens, equal.
  tokenizer          the special tokens, and the ids of a multilingual text (English, German with
                     umlauts, Chinese, code with spaces and tabs, digits, emoji) with and without
                     special tokens and their decoding, equal between the original tokenizer and
                     hf/'s.
  config             every field of the original's config.json equal in hf/'s (floats as
                     float32, the precision GGUF stores them in; fields only hf/ has are reported
                     as a warning); generation_config.json likewise.

Every row is checked on a file holding no padding token too: a row whose tokenizer names one is
also converted from an original without one (UNPADDED: pad_token and pad_token_id None), whose
config and generation config hf/ must give back; and generate on a prompt holding token 0 and
the config class's default pad id, with no attention mask given (generate masks out the pad id),
must answer as the original does (test_generate_token_zero).

test_reference_is_the_file checks the reference itself against the converter's file, without
ggufs: every Hugging Face tensor is found there under gguf-py's name map (fused or per-expert MoE
tensors as the converter stacks them) and, dequantized by gguf-py, holds the reference values row
for row (up to an order of rows: the converter permutes q/k rows). The file is read by read_gguf,
a minimal header reader (GGUFReader takes ~10 s on Qwen2's 151k tokens and merges), checked against
GGUFReader by test_reader_agrees_with_gguf_py.

Expected values come from the original model and llama.cpp, never from ggufs. A check that fails
today because ggufs is wrong is marked xfail(strict=True) in XFAIL with the reason, so the suite is
green and each known gap visible; an xfail that starts passing fails the suite (remove it then).

Tokenizers, all built offline: GPT-2 and Qwen2 byte-level BPE from the vocabularies llama.cpp ships
(models/ggml-vocab-gpt-2.gguf, ggml-vocab-qwen2.gguf: tokens and merges, written as vocab.json and
merges.txt and loaded by transformers' own GPT2/Qwen2 tokenizer classes, whose pre-tokenizers are
the real ones: the converter recognizes them by its hash of their output); SentencePiece BPE
models with byte fallback trained here with sentencepiece's own trainer on a generated
multilingual text, wrapped by LlamaTokenizer(Fast) (llama, mistral, and phi3 with its added
tokens) or GemmaTokenizer(Fast), tokenizer.model shipped alongside as in real repositories.

Needs llama.cpp's source tree (convert_hf_to_gguf.py, gguf-py, models/): $GGUFS_LLAMA_CPP, else
/var/cache/ggufs-tests/llama.cpp; the tests skip with a message where it is absent, where
sentencepiece or protobuf is not installed (the SentencePiece rows; and the converter imports
sentencepiece for Qwen2 and others), and where transformers lacks a row's class. Originals and
converted files are made once per session; the converter runs in the background, one case ahead.
"""
import copy
import json
import math
import os
import pathlib
import random
import re
import importlib
import shutil
import struct
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")
safetensors = pytest.importorskip("safetensors")
from gguf import quants  # noqa: E402
from transformers import AutoConfig, AutoTokenizer, GenerationConfig  # noqa: E402

import llama_converter  # noqa: E402
from llama_converter import LLAMA_CPP  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The table: one row an architecture. cls: transformers' model class; config: its config
# class's kwargs (vocab_size and the special token ids come from the tokenizer); tokenizer: a
# key of TOKENIZERS; converter_fails: {transformers major version: why llama.cpp's converter
# cannot convert the original under it} (the row skips itself there); hub_class: the class name
# written into the original's config.json where the
# Hub repositories' (which the converter registers) is not transformers' own; hub_config:
# config.json fields written as the Hub repositories' have them where transformers saves them
# otherwise (5.x renames legacy layer types; None: a field they lack);
# convert_under_transformers4: the converter run by the transformers 4.57.6 venv's python;
# outtypes: the converter's --outtype values tried (f32 when absent); file:
# what llama.cpp's converter does to values besides moving rows (the Hugging Face names ending
# so): "plus_one" stores w + 1 (Gemma's RMSNorm weights), "transposed" stores w.T (GPT-2's
# Conv1D weights), "regrouped" stores a fused query_key_value's rows, per KV group [q..., k, v]
# in transformers, as [all q; all k; all v] (a bias's elements likewise, so that the file's
# order is the one compared); fold: {weights: f(config, name, float32 tensor) -> the tensor as
# the converter folds config values into it, config: those fields as hf/ has them}, with
# logits_atol the logits' measured bound (Falcon-H1's µP multipliers).

SMALL = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4)

# qwen3next's and Qwen3.5's file: the converter's w + 1 on the (1 + w) RMSNorms but
# linear_attn.norm, and A = -exp(A_log) (qwen.py, Qwen3NextModel.modify_tensors)
QWEN_LINEAR_FILE = dict(plus_one=("layernorm.weight", "q_norm.weight", "k_norm.weight",
                                  "model.norm.weight"),
                        neg_exp=(".A_log",))

# T5's and UMT5's: gated-gelu MLP (T5 v1.1, Flan-T5); tied lm_head (transformers 5's T5 always
# ties it and saves none, and the converter writes no output then); d_kv 8 != d_model / heads
# (16); 2 layers each (a decoder deeper than the encoder fails the converter: its name map has
# num_layers blocks)
T5_CONFIG = dict(d_model=64, d_kv=8, d_ff=96, num_layers=2, num_decoder_layers=2, num_heads=4,
                 relative_attention_num_buckets=16, relative_attention_max_distance=128,
                 layer_norm_epsilon=1e-6, feed_forward_proj="gated-gelu",
                 tie_word_embeddings=True, decoder_start_token_id=0)

# The transformers 4.57.6 venv scripts/install-deps makes, whose python runs the converter for
# the rows that name convert_under_transformers4
TRANSFORMERS4_PYTHON = pathlib.Path("/var/cache/ggufs-tests/venv/bin/python")

# DeepSeek-V2's and -V3's YaRN (their config.json: factor 40 over 4096 positions, beta_fast 32,
# beta_slow 1), at this test's scale; rope_type, where those files have the legacy "type" (the
# converter writes either as rope.scaling.type, and transformers reads either)
DEEPSEEK_YARN = dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=128,
                     beta_fast=32, beta_slow=1)


def _falcon_h1_fold(c, name, x):
    """The converter's folding of Falcon-H1's µP multipliers into the weights they scale, in
    float32 on the saved tensor, as conversion/falcon_h1.py (FalconH1Model.modify_tensors)
    computes it: the same tests on the name in the same order, the same products."""
    if "down_proj" in name:
        return x * c.mlp_multipliers[1]
    if "gate_proj" in name:
        return x * c.mlp_multipliers[0]
    if "k_proj" in name:
        return x * c.key_multiplier * c.attention_in_multiplier
    if "q_proj" in name or "v_proj" in name:
        return x * c.attention_in_multiplier
    if "o_proj" in name:
        return x * c.attention_out_multiplier
    if "out_proj" in name:
        return x * c.ssm_out_multiplier
    if "in_proj" in name:
        x = x * c.ssm_in_multiplier
        d, gn, m = c.mamba_d_ssm, c.mamba_n_groups * c.mamba_d_state, c.ssm_multipliers
        x[:d, :] *= m[0]
        x[d:2 * d, :] *= m[1]
        x[2 * d:2 * d + gn, :] *= m[2]
        x[2 * d + gn:2 * d + 2 * gn, :] *= m[3]
        x[2 * d + 2 * gn:, :] *= m[4]
        return x
    if "lm_head" in name:
        return x * c.lm_head_multiplier
    if "embed_tokens" in name:
        return x * c.embedding_multiplier
    return x


# Falcon-H1's multipliers, as Falcon-H1-0.5B's config.json has them (attention_in_multiplier
# other than its 1.0)
FALCON_H1_MULTIPLIERS = dict(
    embedding_multiplier=5.656854249492381, lm_head_multiplier=0.0390625,
    attention_in_multiplier=0.75, attention_out_multiplier=0.9375,
    key_multiplier=0.39062499999999994, ssm_in_multiplier=1.25,
    ssm_out_multiplier=0.23570226039551587, mlp_multipliers=[0.8838834764831844, 0.5859375],
    ssm_multipliers=[0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738])
# Every multiplier 1: the file's model (what hf/'s config.json says)
FALCON_H1_UNIT = dict(
    embedding_multiplier=1.0, lm_head_multiplier=1.0, attention_in_multiplier=1.0,
    attention_out_multiplier=1.0, key_multiplier=1.0, ssm_in_multiplier=1.0,
    ssm_out_multiplier=1.0, mlp_multipliers=[1.0, 1.0], ssm_multipliers=[1.0] * 5)
# head_dim 32 != hidden / heads; grouped KV; mamba_d_ssm 96 (not expand · hidden); 6 mamba
# heads of 16, 2 groups, state 16, conv kernel 3 (none the class defaults); the gated norm
# gating first (mamba_norm_before_gate false, as llama.cpp computes it and Falcon-H1's configs
# say); rope_theta as Falcon-H1's
FALCON_H1_CONFIG = dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                        rope_theta=100000000000.0, max_position_embeddings=512,
                        mamba_d_ssm=96, mamba_n_heads=6, mamba_d_head=16, mamba_n_groups=2,
                        mamba_d_state=16, mamba_d_conv=3, mamba_norm_before_gate=False)

ARCHS = {
    "llama": dict(
        cls="LlamaForCausalLM",
        tokenizer="spm-llama",
        # head_dim 32 != hidden_size / heads (16); grouped KV; untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=500000.0, max_position_embeddings=512, tie_word_embeddings=False),
        outtypes=("f32", "f16", "bf16", "q8_0"),
    ),
    "qwen2": dict(
        cls="Qwen2ForCausalLM",
        tokenizer="qwen2",
        # q/k/v biases; tied output; YaRN (as Qwen2.5's long-context configs)
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=1000000.0,
                    max_position_embeddings=512, tie_word_embeddings=True,
                    rope_scaling=dict(rope_type="yarn", factor=4.0,
                                      original_max_position_embeddings=128)),
    ),
    "mistral": dict(
        cls="MistralForCausalLM",
        # The converter writes general.architecture llama for MistralForCausalLM
        # (conversion/llama.py, LlamaModel): the file names no class, and hf/ is the llama that
        # builds the same model. Mistral's sliding_window is not in the file either (None here,
        # as in Mistral 7B v0.2 and later).
        hf_class="LlamaForCausalLM",
        not_carried=("model_type", "architectures", "sliding_window"),
        tokenizer="spm-llama",
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=1000000.0,
                    max_position_embeddings=512, sliding_window=None, tie_word_embeddings=False),
    ),
    "qwen3": dict(
        cls="Qwen3ForCausalLM",
        tokenizer="qwen2",
        # head_dim 32: neither hidden_size / heads nor the class default 128; q/k norms
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    rope_theta=1000000.0, max_position_embeddings=512, tie_word_embeddings=True),
    ),
    "qwen3moe": dict(
        cls="Qwen3MoeForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="qwen2",
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    rope_theta=1000000.0, max_position_embeddings=512, tie_word_embeddings=False,
                    num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    norm_topk_prob=True, decoder_sparse_step=1),
    ),
    "phi3": dict(
        cls="Phi3ForCausalLM",
        tokenizer="spm-phi3",
        config=dict(SMALL, num_key_value_heads=4, rms_norm_eps=1e-5, rope_theta=10000.0,
                    max_position_embeddings=512, original_max_position_embeddings=512,
                    tie_word_embeddings=False),
    ),
    "starcoder2": dict(
        cls="Starcoder2ForCausalLM",
        tokenizer="gpt2",
        config=dict(SMALL, num_key_value_heads=2, norm_epsilon=1e-5, rope_theta=100000.0,
                    max_position_embeddings=512, sliding_window=None, use_bias=True,
                    tie_word_embeddings=True),
    ),
    "stablelm": dict(
        cls="StableLmForCausalLM",
        tokenizer="gpt2",
        config=dict(SMALL, num_key_value_heads=4, layer_norm_eps=1e-5, rope_theta=10000.0,
                    partial_rotary_factor=0.25, max_position_embeddings=512,
                    tie_word_embeddings=False),
    ),
    "olmo2": dict(
        cls="Olmo2ForCausalLM",
        # Olmo2Config's pad_token_id defaults to 1, not None: a tokenizer with a pad token (as
        # OLMo 2's own, whose config names it)
        tokenizer="qwen2",
        # grouped KV: q_norm and k_norm span all heads (nh·hd and nkv·hd); untied output
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=500000.0,
                    max_position_embeddings=512, tie_word_embeddings=False),
    ),
    "smollm3": dict(
        cls="SmolLM3ForCausalLM",
        # SmolLM3Config's bos, eos and pad ids default to Llama 3's (128000, 128001, 128004), not
        # None: a byte-level BPE tokenizer (as SmolLM3's) that names all three
        tokenizer="gpt2-pad",
        # grouped KV; tied output (as SmolLM3-3B); every 4th layer without RoPE (the class
        # default no_rope_layer_interval 4, which llama.cpp hardcodes: src/models/smollm3.cpp)
        config=dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                    rope_theta=2000000.0, max_position_embeddings=512,
                    tie_word_embeddings=True),
    ),
    "seed_oss": dict(
        cls="SeedOssForCausalLM",
        # SeedOssConfig's bos, eos and pad ids default to 0, 2 and 1, not None
        tokenizer="gpt2-pad",
        # head_dim 32, neither hidden / heads nor the class default 128; grouped KV; q/k/v
        # biases (the class default attention_bias, as Seed-OSS-36B); untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    rope_theta=10000000.0, max_position_embeddings=512,
                    tie_word_embeddings=False),
    ),
    "ernie4_5": dict(
        cls="Ernie4_5ForCausalLM",
        # Ernie4_5Config's bos, eos and pad ids default to 1, 2 and 0, not None: a SentencePiece
        # tokenizer (the converter reads tokenizer.model) naming all three
        tokenizer="spm-llama-pad",
        # head_dim 32, neither hidden / heads nor the class default 128; grouped KV; tied
        # output (the class default, as ERNIE-4.5-0.3B)
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=500000.0, max_position_embeddings=512, tie_word_embeddings=True),
    ),
    "glm4": dict(
        cls="Glm4ForCausalLM",
        tokenizer="glm4",
        # head_dim 32 (the class default 128), half of it rotary (the class default
        # partial_rotary_factor, as GLM-4-0414); grouped KV; q/k/v biases (the class default);
        # untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512, tie_word_embeddings=False),
    ),
    "chatglm": dict(
        cls="GlmForCausalLM",
        tokenizer="glm4",
        # head_dim hidden / heads (the converter assumes it, as GLM-4-9B's 128 of 4096 / 32); half
        # of it rotary (the class default); rms_norm_eps 1e-5 and rope_theta 10000, the values
        # the converter writes whatever the config says (llama.cpp runs those); grouped KV;
        # q/k/v biases (the class default); untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512, tie_word_embeddings=False),
        # context_length is seq_length, which GlmConfig lacks, else hidden_size (chatglm.py)
        not_carried=("max_position_embeddings",),
    ),
    "arcee": dict(
        cls="ArceeForCausalLM",
        tokenizer="gpt2",
        # head_dim 32 != hidden_size / heads; grouped KV; untied output; the MLP without a gate
        # (relu², the class default)
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512, tie_word_embeddings=False),
    ),
    "olmo": dict(
        cls="OlmoForCausalLM",
        # OlmoConfig's pad_token_id defaults to 1, not None: a tokenizer with a pad token
        tokenizer="qwen2",
        # clip_qkv (as OLMo-1.7-7B); grouped KV; untied output; the norms have no parameters
        config=dict(SMALL, num_key_value_heads=2, clip_qkv=8.0, rope_theta=10000.0,
                    max_position_embeddings=512, tie_word_embeddings=False),
    ),
    "phi": dict(
        cls="PhiForCausalLM",
        tokenizer="gpt2",
        # intermediate_size 4 · hidden, as every Phi-1.5 and Phi-2 (the converter writes that);
        # partial_rotary_factor not the class default 0.5 (the file holds 0.375 · 64 // 4 = 6
        # rotary dimensions per head of 16, as Phi-2's 0.4 · 2560 // 32 = 32 of 80); heads
        # as KV heads (the converter writes head_count_kv as head_count); biased lm_head
        config=dict(SMALL, intermediate_size=256, layer_norm_eps=1e-5,
                    partial_rotary_factor=0.375, max_position_embeddings=512,
                    tie_word_embeddings=False),
    ),
    "cohere": dict(
        cls="CohereForCausalLM",
        # CohereConfig's bos, eos and pad ids default to 5, 255001 and 0, not None
        tokenizer="gpt2-pad",
        # per-head q/k norms (as Command R+); a logit scale other than the class default 0.0625;
        # grouped KV; tied output (the class default, as Command R)
        config=dict(SMALL, num_key_value_heads=2, use_qk_norm=True, logit_scale=0.125,
                    layer_norm_eps=1e-5, rope_theta=75000000.0, max_position_embeddings=512,
                    tie_word_embeddings=True),
    ),
    "cohere2": dict(
        cls="Cohere2ForCausalLM",
        tokenizer="gpt2-pad",
        # 4 layers, the 4th global (the class default pattern, llama.cpp's); a sliding window
        # other than the class default; rotary_pct 1.0, which Command R7B's config.json has and
        # the converter reads; grouped KV; tied output
        config=dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, sliding_window=16,
                    rotary_pct=1.0, logit_scale=0.25, layer_norm_eps=1e-5, rope_theta=50000.0,
                    max_position_embeddings=512, tie_word_embeddings=True),
    ),
    "gemma2": dict(
        cls="Gemma2ForCausalLM",
        outtypes=("f32", "f16"),
        tokenizer="spm-gemma",
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    rope_theta=10000.0, max_position_embeddings=512, sliding_window=64,
                    # soft-caps other than the class defaults (50, 30): the file carries them
                    query_pre_attn_scalar=32, attn_logit_softcapping=40.0,
                    final_logit_softcapping=25.0, tie_word_embeddings=True),
        file=dict(plus_one=("norm.weight",)),
    ),
    "gemma3": dict(
        cls="Gemma3ForCausalLM",
        tokenizer="spm-gemma",
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    max_position_embeddings=512, sliding_window=16, query_pre_attn_scalar=32,
                    # the sliding layers' rope base, not the class default 10000; the global
                    # layers' linear scaling (as Gemma 3 4B to 27B)
                    rope_local_base_freq=20000.0,
                    rope_scaling=dict(rope_type="linear", factor=8.0),
                    # The layer pattern is not in the GGUF: llama.cpp takes every 6th layer as
                    # full attention (src/models/gemma3.cpp, load_swa_pattern(ml, 6)), as
                    # Gemma 3's checkpoints and Gemma3TextConfig's default have it; a model of
                    # another pattern is not one llama.cpp runs either.
                    tie_word_embeddings=True),
        file=dict(plus_one=("norm.weight",)),
    ),
    "qwen2moe": dict(
        cls="Qwen2MoeForCausalLM",
        outtypes=("f32", "q8_0"),
        tokenizer="qwen2",
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=1000000.0,
                    max_position_embeddings=512, tie_word_embeddings=False, num_experts=4,
                    num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=96, norm_topk_prob=False,
                    decoder_sparse_step=1),
    ),
    "granite": dict(
        cls="GraniteForCausalLM",
        tokenizer="gpt2",
        # the four multipliers other than the class defaults (1.0), as Granite 3's configs have
        # them; tied output, as there
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
                    max_position_embeddings=512, attention_multiplier=0.0078125,
                    embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0,
                    tie_word_embeddings=True),
    ),
    "granite_swa": dict(
        # transformers 5's class only (4.57.6 has no models/granite_swa: the case skips itself)
        cls="GraniteSWAForCausalLM",
        mlx_under_5=True,
        tokenizer="gpt2",
        # a full then a sliding attention layer (as the class default pattern begins), per-head
        # sinks; Granite's multipliers; grouped KV; tied output
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
                    max_position_embeddings=512, sliding_window=4,
                    layer_types=["full_attention", "sliding_attention"],
                    attention_multiplier=0.0078125, embedding_multiplier=12.0,
                    residual_multiplier=0.22, logits_scaling=8.0, tie_word_embeddings=True),
    ),
    "granitemoe": dict(
        cls="GraniteMoeForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="gpt2",
        # stacked experts, gate and up fused (input_linear), which the converter splits;
        # intermediate_size is one expert's width
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, rms_norm_eps=1e-6,
                    rope_theta=10000.0, max_position_embeddings=512, num_local_experts=4,
                    num_experts_per_tok=2, attention_multiplier=0.015625,
                    embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=6.0,
                    tie_word_embeddings=False),
    ),
    "granitemoeshared": dict(
        cls="GraniteMoeSharedForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="gpt2",
        # granitemoe's file with expert_shared_feed_forward_length (granite.py, GraniteMoeModel):
        # the shared expert's input_linear (2·48, 64) is split into ffn_gate_shexp and
        # ffn_up_shexp
        config=dict(SMALL, intermediate_size=32, shared_intermediate_size=48,
                    num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=10000.0,
                    max_position_embeddings=512, num_local_experts=4, num_experts_per_tok=2,
                    attention_multiplier=0.015625, embedding_multiplier=12.0,
                    residual_multiplier=0.22, logits_scaling=6.0, tie_word_embeddings=False),
    ),
    "olmoe": dict(
        cls="OlmoeForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="gpt2-pad",
        # each expert is intermediate_size wide; q_norm over all heads, k_norm over the KV heads.
        # rms_norm_eps 1e-5: the converter writes 1e-5 whatever the config says
        # (olmo.py, OlmoeModel.set_gguf_parameters), as OLMoE's checkpoints have it.
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512, num_experts=4,
                    num_experts_per_tok=2, norm_topk_prob=False, tie_word_embeddings=False),
    ),
    "phimoe": dict(
        cls="PhimoeForCausalLM",
        # the name Phi-3.5-MoE's config.json gives, the one the converter registers
        # (conversion/phi.py, PhiMoeModel); transformers' class is PhimoeForCausalLM
        hub_class="PhiMoEForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="spm-phi3",
        # q/k/v/o and lm_head biases and the input jitter, as Phi-3.5-MoE's config.json has them
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512,
                    original_max_position_embeddings=512, num_local_experts=4,
                    num_experts_per_tok=2, attention_bias=True, lm_head_bias=True,
                    input_jitter_noise=0.01, tie_word_embeddings=False),
    ),
    "ernie4_5_moe": dict(
        cls="Ernie4_5_MoeForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="spm-llama-pad",
        # layer 0 dense (moe_layer_start_index 1), layer 1 experts, two shared experts as one
        # MLP (2·32 wide) and the router's correction bias; tied output, as ERNIE-4.5-21B-A3B
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=500000.0,
                    max_position_embeddings=512, moe_num_experts=4, moe_k=2,
                    moe_intermediate_size=32, moe_num_shared_experts=2,
                    moe_layer_start_index=1, moe_layer_interval=1, use_bias=False,
                    tie_word_embeddings=True),
    ),
    "dots1": dict(
        cls="Dots1ForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="qwen2",
        # layer 0 dense (first_k_dense_replace 1), layer 1 experts, two shared experts as one MLP
        # (2·32 wide), the router's correction bias; the routing's scale and normalization
        config=dict(SMALL, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=1000000.0,
                    max_position_embeddings=512, moe_intermediate_size=32, n_routed_experts=4,
                    n_shared_experts=2, num_experts_per_tok=2, first_k_dense_replace=1,
                    norm_topk_prob=True, routed_scaling_factor=2.5, tie_word_embeddings=False),
    ),
    "mixtral": dict(
        cls="MixtralForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="spm-llama",
        # The converter writes general.architecture llama for MixtralForCausalLM
        # (conversion/llama.py, LlamaModel), with the experts stacked; each expert is
        # intermediate_size wide. head_dim 32 != hidden_size / heads; grouped KV.
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-5, rope_theta=1000000.0, max_position_embeddings=512,
                    num_local_experts=4, num_experts_per_tok=2, sliding_window=None,
                    tie_word_embeddings=False),
    ),
    "gpt2": dict(
        cls="GPT2LMHeadModel",
        outtypes=("f32", "q8_0"),
        tokenizer="gpt2",
        # n_ctx: as in GPT-2's own config.json (the converter reads it)
        config=dict(n_embd=64, n_layer=2, n_head=4, n_positions=512, n_ctx=512,
                    layer_norm_epsilon=1e-5, tie_word_embeddings=True),
        file=dict(transposed=(".c_attn.weight", ".c_proj.weight", ".c_fc.weight")),
    ),
    "starcoder": dict(
        cls="GPTBigCodeForCausalLM",
        tokenizer="gpt2",
        # multi-query attention (one key and value head), as every GPTBigCode checkpoint
        config=dict(n_embd=64, n_layer=2, n_head=4, n_positions=512, layer_norm_epsilon=1e-5,
                    multi_query=True, tie_word_embeddings=True),
        # n_inner None is 4 x n_embd (modeling_gpt_bigcode.py, GPTBigCodeBlock); mlx-lm's
        # gpt_bigcode.py needs the number
        mlx_reference=dict(n_inner=256),
    ),
    "gptneox": dict(
        cls="GPTNeoXForCausalLM",
        tokenizer="gpt2",
        # rotary_pct 0.5, not the class default 0.25 (the file holds 8 rotary dimensions of 16);
        # sequential residual, not the class default parallel one; q/k/v and dense biases (the
        # class default attention_bias); untied embed_out (the class default, as Pythia)
        config=dict(SMALL, rotary_pct=0.5, use_parallel_residual=False, layer_norm_eps=1e-5,
                    max_position_embeddings=512, tie_word_embeddings=False),
        file=dict(regrouped=(".query_key_value.weight", ".query_key_value.bias")),
        # Under transformers 5 the converter fails on every GPT-NeoX: GPTNeoXConfig.to_dict()
        # holds rotary_pct only inside rope_parameters, and gptneox.py
        # GPTNeoXModel.set_gguf_parameters reads hparams['rotary_pct'] (KeyError). So the file is
        # made as those GGUFs are, by the converter under transformers 4.57.6, from a config.json
        # holding rotary_pct as the Hub's (Pythia's) do (5.x's save_pretrained writes it in
        # rope_parameters only), and hf/ is loaded under both lines.
        hub_config=dict(rotary_pct=0.5),
        convert_under_transformers4=True,
    ),
    "falcon": dict(
        cls="FalconForCausalLM",
        tokenizer="gpt2",
        # Falcon-40B's layout: new_decoder_architecture, two norms (ln_attn, ln_mlp), 2 KV
        # groups of 2 query heads; tied output (the class default). No biases: the converter's
        # view of a query_key_value bias fails (falcon.py, FalconModel.modify_tensors).
        config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=2,
                    new_decoder_architecture=True, num_ln_in_parallel_attn=2,
                    layer_norm_epsilon=1e-5, tie_word_embeddings=True),
        file=dict(regrouped=(".query_key_value.weight",)),
    ),
    "falcon2": dict(
        cls="FalconForCausalLM",
        tokenizer="gpt2",
        # Falcon2-11B's layout: new_decoder_architecture with one norm (input_layernorm), here
        # a single KV group of 4 query heads; untied output
        config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_kv_heads=1,
                    new_decoder_architecture=True, num_ln_in_parallel_attn=1,
                    layer_norm_epsilon=1e-5, tie_word_embeddings=False),
        file=dict(regrouped=(".query_key_value.weight",)),
    ),
    "bloom": dict(
        cls="BloomForCausalLM",
        tokenizer="gpt2",
        # q/k/v per head, with biases; the embedding's LayerNorm; ALiBi; tied output (the class
        # default, as every BLOOM)
        config=dict(hidden_size=64, n_layer=2, n_head=4, layer_norm_epsilon=1e-5,
                    tie_word_embeddings=True),
        file=dict(regrouped=(".query_key_value.weight", ".query_key_value.bias")),
    ),
    "nemotron": dict(
        cls="NemotronForCausalLM",
        tokenizer="spm-nemotron",
        # head_dim 32 != hidden_size / heads (as Minitron-8B); a quarter of it rotary: the file
        # holds int(0.25 · 64) // 4 = 4 rotary dimensions of hidden / heads = 16; grouped KV;
        # untied output; LayerNorm1P weights stored plus one, biases as they are
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, partial_rotary_factor=0.25,
                    norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=512,
                    tie_word_embeddings=False),
        file=dict(plus_one=("layernorm.weight", "model.norm.weight")),
    ),
    "exaone4": dict(
        cls="Exaone4ForCausalLM",
        tokenizer="gpt2",
        # 4 layers, a sliding window, the class default pattern (three sliding, one global, as
        # EXAONE-4.0-32B's "LLLG"): the converter writes it as one flag a layer; head_dim 32 !=
        # hidden_size / heads; grouped KV; untied output
        config=dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, head_dim=32,
                    sliding_window=16, rms_norm_eps=1e-5, rope_theta=1000000.0,
                    max_position_embeddings=512, tie_word_embeddings=False),
    ),
    "exaone4_global": dict(
        cls="Exaone4ForCausalLM",
        tokenizer="gpt2",
        # no window, every layer global (as EXAONE-4.0-1.2B): the converter writes no window key
        config=dict(SMALL, num_key_value_heads=2, sliding_window=None,
                    layer_types=["full_attention"] * 2, rms_norm_eps=1e-5,
                    rope_theta=1000000.0, max_position_embeddings=512, tie_word_embeddings=True),
    ),
    "glm4moe": dict(
        cls="Glm4MoeForCausalLM",
        tokenizer="glm4moe",
        # layer 0 dense (first_k_dense_replace 1), layer 1 experts, two shared experts as one MLP
        # (2·32 wide), the router's correction bias; q/k/v biases and q/k norms (as GLM-4.5);
        # head_dim 32 != hidden / heads; one MTP layer in the config (transformers 4.57.6 keeps
        # num_nextn_predict_layers; the converter then counts it in block_count), none in the
        # weights, as transformers makes none
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=1000000.0, max_position_embeddings=512, moe_intermediate_size=32,
                    n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2,
                    first_k_dense_replace=1, norm_topk_prob=True, routed_scaling_factor=2.5,
                    attention_bias=True, use_qk_norm=True, num_nextn_predict_layers=1,
                    tie_word_embeddings=False),
    ),
    "minimax_m2": dict(
        # transformers 5 only (4.57.6 has no MiniMaxM2ForCausalLM: the rows skip themselves)
        cls="MiniMaxM2ForCausalLM",
        tokenizer="gpt2",
        # experts intermediate_size wide, the router's correction bias, q/k norms over all
        # heads; rotary_dim (the field MiniMax-M2's config.json has, which the converter reads)
        # half of head_dim 32 != hidden / heads; grouped KV; untied output
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, head_dim=32,
                    rotary_dim=16, rms_norm_eps=1e-6, max_position_embeddings=512,
                    num_local_experts=4, num_experts_per_tok=2, tie_word_embeddings=False),
    ),
    "lfm2": dict(
        cls="Lfm2ForCausalLM",
        tokenizer="gpt2-pad",
        # short-convolution, attention, short-convolution layers; a convolution cache other
        # than the class default 3; grouped KV; tied output (the class default, as LFM2). The
        # MLP width as it is (block_auto_adjust_ff_dim off): the converter writes the adjusted
        # width only, not the recipe
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, conv_L_cache=4,
                    layer_types=["conv", "full_attention", "conv"],
                    block_auto_adjust_ff_dim=False, norm_eps=1e-5, rope_theta=1000000.0,
                    max_position_embeddings=512, tie_word_embeddings=True),
    ),
    "lfm2moe": dict(
        # transformers 5's class only (4.57.6 has no models/lfm2_moe: the case skips itself)
        cls="Lfm2MoeForCausalLM",
        # its mlx/ checked under transformers 5, which saves the experts one by one as mlx-lm
        # reads them
        mlx_under_5=True,
        tokenizer="gpt2-pad",
        outtypes=("f32", "bf16"),
        # LFM2's mixers (convolution, attention, convolution); a dense first layer, then the
        # experts with the router's expert_bias; a convolution cache other than the class
        # default 3; grouped KV; tied output (the class default)
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, conv_L_cache=4,
                    layer_types=["conv", "full_attention", "conv"], num_dense_layers=1,
                    num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    norm_eps=1e-5, rope_theta=1000000.0, max_position_embeddings=512,
                    tie_word_embeddings=True),
    ),
    "exaone_moe": dict(
        # transformers 5's class only (4.57.6 has no models/exaone_moe: the case skips itself)
        cls="ExaoneMoeForCausalLM",
        mlx_under_5=True,
        tokenizer="gpt2",
        outtypes=("f32", "bf16"),
        # a dense first layer, then the experts with their correction bias and a shared expert;
        # head_dim 32 != hidden_size / heads; a window on the first of every two layers; grouped
        # KV; untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    rope_theta=1000000.0, max_position_embeddings=512, sliding_window=64,
                    sliding_window_pattern=2, layer_types=["sliding_attention", "full_attention"],
                    first_k_dense_replace=1, num_experts=4, num_experts_per_tok=2,
                    num_shared_experts=1, moe_intermediate_size=32, routed_scaling_factor=2.5,
                    norm_topk_prob=True, tie_word_embeddings=False),
    ),
    "afmoe": dict(
        # transformers 5's class only (4.57.6 has no models/afmoe: the case skips itself)
        cls="AfmoeForCausalLM",
        mlx_under_5=True,
        tokenizer="gpt2",
        outtypes=("f32", "bf16"),
        # a dense first layer, then the experts with their expert_bias and a shared expert; the
        # attention's output gate and q/k norms; 4 layers, a window on all but the 4th (the
        # class default global_attn_every_n_layers, which the converter does not write and
        # llama.cpp takes so); MuP on (llama.cpp always scales the embeddings, as Trinity's
        # configs say); head_dim 32 != hidden_size / heads; grouped KV; untied output
        config=dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=512,
                    sliding_window=4, num_dense_layers=1, num_experts=4,
                    num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=32,
                    route_scale=2.0, mup_enabled=True, tie_word_embeddings=False),
    ),
    "mellum": dict(
        # transformers 5's class only (4.57.6 has no models/mellum: the case skips itself)
        cls="MellumForCausalLM",
        mlx_under_5=True,
        tokenizer="gpt2",
        outtypes=("f32", "bf16"),
        # a sliding then a full attention layer with their own rope bases; every layer's MLP the
        # experts (the class default mlp_layer_types, which the converter does not write);
        # head_dim 32 != hidden_size / heads; grouped KV; untied output
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    max_position_embeddings=512, sliding_window=4,
                    layer_types=["sliding_attention", "full_attention"],
                    rope_parameters={"full_attention": dict(rope_type="default",
                                                            rope_theta=500000.0),
                                     "sliding_attention": dict(rope_type="default",
                                                               rope_theta=20000.0)},
                    num_local_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                    tie_word_embeddings=False),
        # mlx-lm's mellum.py reads the experts' count as num_experts (MellumConfig's
        # num_local_experts)
        mlx_reference=dict(num_experts=4),
    ),
    "hunyuan_v1_dense": dict(
        cls="HunYuanDenseV1ForCausalLM",
        # HunYuanDenseV1Config's pad id defaults to 0, not None: a tokenizer naming a pad token
        tokenizer="gpt2-pad",
        # eod_token_id the tokenizer's eos (the converter writes eod_token_id as the eos id;
        # the class default 3 would be another token; 4.57.6's config does not keep the
        # field, 5.24.0's does); per-head q/k norms; head_dim 32 !=
        # hidden / heads; grouped KV; untied output; no rope_scaling (the converter folds a
        # dynamic one into the rope base)
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, eod_token_id=50256,
                    rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=512,
                    tie_word_embeddings=False),
    ),
    "mamba": dict(
        cls="MambaForCausalLM",
        # MambaConfig's bos, eos and pad ids default to 0, not None: a tokenizer naming all three
        tokenizer="gpt2-pad",
        # vocab_size a multiple of 8 above the tokenizer's 50257 (as mamba-130m-hf's 50280 over
        # GPT-NeoX's 50277): the converter pads the token list to one (mamba.py,
        # MambaModel.set_vocab) and writes no vocab_size. State size, conv kernel and
        # time-step rank other than the class defaults; expand 2, which the converter asserts;
        # tied output, as the class default and mamba-130m-hf
        config=dict(vocab_size=50264, hidden_size=64, num_hidden_layers=2, state_size=8,
                    conv_kernel=3, time_step_rank=8, layer_norm_epsilon=1e-5,
                    tie_word_embeddings=True),
        # the converter's A = -exp(A_log) (mamba.py, MambaModel.modify_tensors)
        file=dict(neg_exp=(".A_log",)),
        # hf/'s A_log within A_LOG_BOUND (the model uses it only as -exp(A_log): the logits stay
        # torch.equal)
    ),
    "mamba2": dict(
        cls="Mamba2ForCausalLM",
        # Mamba2Config's bos, eos and pad ids default to 0, 2 and 1, not None
        tokenizer="gpt2-pad",
        # vocab_size a multiple of 16 (mamba.py, Mamba2Model.set_vocab pads the token list to
        # one); head_dim 16, 8 heads and 2 groups, none the class defaults (64, 128, 8); expand
        # 2 (the converter writes inner_size, expand · hidden); untied output (the class default,
        # as Mamba-Codestral)
        config=dict(vocab_size=50272, hidden_size=64, num_hidden_layers=2, expand=2, num_heads=8,
                    head_dim=16, n_groups=2, state_size=16, conv_kernel=4,
                    layer_norm_epsilon=1e-5, tie_word_embeddings=False),
        file=dict(neg_exp=(".A_log",)),
    ),
    "gpt-oss": dict(
        cls="GptOssForCausalLM",
        outtypes=("f32", "bf16"),
        tokenizer="gpt2",
        # head_dim 32 != hidden / heads, grouped KV, experts with biases, sinks; YaRN as
        # gpt-oss-20b's config.json has it (truncate false), sliding window on even layers.
        # The experts are plain floats here (the converter transposes and splits them,
        # conversion/gpt_oss.py, GptOssModel.modify_tensors).
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-5, rope_theta=150000.0, max_position_embeddings=512,
                    sliding_window=8, num_local_experts=4, num_experts_per_tok=2,
                    rope_scaling=dict(rope_type="yarn", factor=4.0, beta_fast=32.0,
                                      beta_slow=1.0, truncate=False,
                                      original_max_position_embeddings=128),
                    tie_word_embeddings=False),
        file=dict(gpt_oss=True),
    ),
    "gpt-oss-mxfp4": dict(
        cls="GptOssForCausalLM",
        tokenizer="gpt2",
        # gpt-oss as the Hub holds it: the experts as MXFP4 blocks and scales with its
        # quantization_config (mxfp4=True, _mxfp4_experts), which the converter keeps as MXFP4
        # (gpt_oss.py, GptOssModel.generate_extra_tensors, repack_mxfp4). The original loads
        # dequantized (transformers' Mxfp4HfQuantizer without a GPU: convert_moe_packed_tensors);
        # hf/ serves that dequantized model, without the quantization_config.
        config=dict(SMALL, intermediate_size=32, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-5, rope_theta=150000.0, max_position_embeddings=512,
                    sliding_window=8, num_local_experts=4, num_experts_per_tok=2,
                    rope_scaling=dict(rope_type="yarn", factor=4.0, beta_fast=32.0,
                                      beta_slow=1.0, truncate=False,
                                      original_max_position_embeddings=128),
                    tie_word_embeddings=False),
        mxfp4=True,
        not_carried=("quantization_config",),
        file=dict(gpt_oss=True),
    ),
    "granitemoehybrid": dict(
        cls="GraniteMoeHybridForCausalLM",
        tokenizer="gpt2",
        # mamba2, attention, mamba2 layers, each with experts and the shared MLP; vocab_size a
        # multiple of 8 (granite.py, GraniteHybridModel.set_vocab pads the token list to one);
        # 8 mamba heads of 16, 2 groups, state 16, conv kernel 3 (none the class defaults);
        # grouped KV; the four multipliers other than 1; untied output. max_position_embeddings
        # the class default: the converter writes the placeholder 2^20 over it for a model
        # without rope (GraniteHybridModel.set_gguf_parameters)
        config=dict(SMALL, vocab_size=50264, num_hidden_layers=3, intermediate_size=32,
                    shared_intermediate_size=48, num_key_value_heads=2, rms_norm_eps=1e-5,
                    num_local_experts=4, num_experts_per_tok=2,
                    layer_types=["mamba", "attention", "mamba"], mamba_n_heads=8,
                    mamba_n_groups=2, mamba_d_state=16, mamba_d_conv=3, mamba_expand=2,
                    attention_multiplier=0.015625, embedding_multiplier=12.0,
                    residual_multiplier=0.22, logits_scaling=6.0, tie_word_embeddings=False),
        # the layer types as granite-4.0-h's config.json names them, which the converter reads
        # (GraniteHybridModel.get_attn_layers); 5.x saves them as full_attention and
        # linear_attention and reads both
        hub_config=dict(layer_types=["mamba", "attention", "mamba"]),
        # the converter's A = -exp(A_log) (mamba.py, Mamba2Model.modify_tensors)
        file=dict(neg_exp=(".A_log",)),
    ),
    "granitemoehybrid-dense": dict(
        cls="GraniteMoeHybridForCausalLM",
        tokenizer="gpt2",
        # dense, as granite-4.0-h-micro: no experts, the shared MLP's input_linear split into
        # ffn_gate and ffn_up (granite.py, GraniteMoeModel.modify_tensors); attention first
        config=dict(SMALL, vocab_size=50264, num_hidden_layers=2, shared_intermediate_size=48,
                    num_key_value_heads=2, rms_norm_eps=1e-5, num_local_experts=0,
                    layer_types=["attention", "mamba"], mamba_n_heads=8, mamba_n_groups=1,
                    mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                    attention_multiplier=0.015625, embedding_multiplier=12.0,
                    residual_multiplier=0.22, logits_scaling=6.0, tie_word_embeddings=True),
        hub_config=dict(layer_types=["attention", "mamba"]),
        file=dict(neg_exp=(".A_log",), dense_shared=True),
    ),
    "nemotron_h": dict(
        # transformers 5 only (4.57.6 has no models/nemotron_h: the case skips itself)
        cls="NemotronHForCausalLM",
        # NemotronHConfig's bos, eos and pad ids default to 1, 2 and 0, not None
        tokenizer="gpt2-pad",
        # mamba2, experts, attention, mamba2, experts layers (5.x's NemotronHConfig.to_dict()
        # always holds num_experts_per_tok: the converter writes nemotron_h_moe, nemotron.py
        # NemotronHModel.__init__); vocab_size a multiple of 8 (NemotronHModel.set_vocab pads
        # the token list to one); 8 mamba heads of 16, 2 groups, state 16, conv kernel 3;
        # head_dim 32 != hidden / heads, grouped KV; 4 experts of 32, a shared expert of 48, the
        # router's correction bias, a routed scale other than 1; untied output
        config=dict(vocab_size=50264, hidden_size=64,
                    layers_block_type=["linear_attention", "moe", "full_attention",
                                       "linear_attention", "moe"],
                    num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                    mamba_num_heads=8, mamba_head_dim=16, n_groups=2, ssm_state_size=16,
                    conv_kernel=3, n_routed_experts=4, num_experts_per_tok=2,
                    moe_intermediate_size=32, moe_shared_expert_intermediate_size=48,
                    n_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                    layer_norm_epsilon=1e-5, tie_word_embeddings=False),
        # the converter's A = -exp(A_log) (nemotron.py, NemotronHModel.modify_tensors)
        file=dict(neg_exp=(".A_log",)),
    ),
    "nemotron_h-dense": dict(
        # transformers 5 only, as nemotron_h
        cls="NemotronHForCausalLM",
        tokenizer="gpt2-pad",
        # the dense form (Nemotron-H, Nemotron Nano 2): mamba2, MLP, attention, mamba2, MLP
        # layers, the MLP relu² of up and down projections (NemotronHMLP); 8 mamba heads of 16,
        # 2 groups; head_dim 32 != hidden / heads, grouped KV; untied output
        config=dict(vocab_size=50264, hidden_size=64,
                    layers_block_type=["mamba", "mlp", "attention", "mamba", "mlp"],
                    num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                    intermediate_size=96, mamba_num_heads=8, mamba_head_dim=16, n_groups=2,
                    ssm_state_size=16, conv_kernel=3, layer_norm_epsilon=1e-5,
                    tie_word_embeddings=False),
        # as those models' config.json: the pattern string, no num_experts_per_tok; converted
        # under transformers 4.57.6, as the dense GGUFs are: there AutoConfig knows no
        # nemotron_h and the converter reads config.json as it is (base.py, load_hparams),
        # where 5.x's to_dict() always adds num_experts_per_tok, and the converter then writes
        # the MoE form (nemotron.py, NemotronHModel.__init__)
        hub_config=dict(hybrid_override_pattern="M-*M-", num_hidden_layers=5,
                        layers_block_type=None, num_experts_per_tok=None),
        convert_under_transformers4=True,
        file=dict(neg_exp=(".A_log",)),
    ),
    "falcon_h1": dict(
        cls="FalconH1ForCausalLM",
        # FalconH1Config's bos, eos and pad ids default to 1, 2 and 0, not None
        tokenizer="gpt2-pad",
        # µP multipliers other than 1, the gated norm (mamba_rms_norm), untied output
        config=dict(FALCON_H1_CONFIG, mamba_rms_norm=True, tie_word_embeddings=False,
                    **FALCON_H1_MULTIPLIERS),
        file=dict(neg_exp=(".A_log",)),
        # the converter folds the multipliers into the weights and stores none
        # (falcon_h1.py, FalconH1Model.modify_tensors): the reference weights are the
        # original's folded so, hf/'s config has every multiplier 1, and the logits are the
        # original model's (its multipliers applied to the activations) up to the folded
        # products' rounding
        fold=dict(weights=_falcon_h1_fold, config=FALCON_H1_UNIT),
        # measured: the largest |hf/ - original| over the logits, 5 · 2^-28 (1.9e-8; logits up
        # to 0.046), under 4.57.6 and 5.24.0; greedy tokens equal
        logits_atol=5 * 2.0**-28,
    ),
    "falcon_h1-unit": dict(
        cls="FalconH1ForCausalLM",
        tokenizer="gpt2-pad",
        # every multiplier 1 (nothing to fold: bit-equal), no gated norm (mamba_rms_norm false,
        # as Falcon-H1-0.5B), no convolution bias, tied output
        config=dict(FALCON_H1_CONFIG, mamba_rms_norm=False, mamba_conv_bias=False,
                    tie_word_embeddings=True, **FALCON_H1_UNIT),
        file=dict(neg_exp=(".A_log",)),
    ),
    "jamba": dict(
        cls="JambaForCausalLM",
        # JambaConfig's pad id defaults to 0, not None: a SentencePiece tokenizer naming <unk>
        # the pad token (the converter takes its SentencePiece path, jamba.py
        # JambaModel.set_vocab, where tokenizer.model is present)
        tokenizer="spm-llama-pad",
        # 6 layers: attention every 3rd from layer 1 (1, 4), experts every 2nd from layer 1
        # (1, 3, 5): each of attention and mamba with experts and with the dense MLP (Jamba-v0.1's
        # pattern is 8/4 and 2/1; the converter writes neither pair, jamba.py
        # JambaModel.set_gguf_parameters); 4 experts top-2; grouped KV; state size 8, conv
        # kernel 3, dt rank 6 (none the class defaults; dt's and B's norms of other sizes); the
        # in/out_proj biases (mamba_proj_bias, the class default off); use_mamba_kernels off
        # (the CUDA kernels, which the CPU lacks); untied output (the class default)
        config=dict(SMALL, num_hidden_layers=6, num_key_value_heads=2, rms_norm_eps=1e-5,
                    max_position_embeddings=512, num_experts=4, num_experts_per_tok=2,
                    attn_layer_period=3, attn_layer_offset=1, expert_layer_period=2,
                    expert_layer_offset=1, mamba_d_state=8, mamba_d_conv=3, mamba_expand=2,
                    mamba_dt_rank=6, mamba_proj_bias=True, use_mamba_kernels=False,
                    tie_word_embeddings=False),
        # the converter's A = -exp(A_log) (jamba.py, JambaModel.modify_tensors)
        file=dict(neg_exp=(".A_log",)),
    ),
    "gemma4": dict(
        cls="Gemma4ForCausalLM",  # transformers 5 only (4.57.6 has no Gemma 4: skips itself)
        tokenizer="spm-gemma4",
        # sliding layers' head_dim 16, the full layers' global_head_dim 32; grouped KV; the
        # last two layers reuse the first two's keys and values (no k/v weights of their own)
        # with a double-wide MLP (as Gemma 4 E2B);
        # per-layer embeddings (hidden_size_per_layer_input 8, its vocabulary the model's, as in
        # Gemma 4's checkpoints); rope bases other than the defaults; a soft-cap; untied output
        config=dict(SMALL, num_hidden_layers=4, num_key_value_heads=2, head_dim=16,
                    global_head_dim=32, rms_norm_eps=1e-6, max_position_embeddings=512,
                    sliding_window=16, final_logit_softcapping=25.0, num_kv_shared_layers=2,
                    use_double_wide_mlp=True,
                    layer_types=["sliding_attention", "full_attention"] * 2,
                    rope_parameters=dict(
                        sliding_attention=dict(rope_type="default", rope_theta=20000.0),
                        full_attention=dict(rope_type="proportional", partial_rotary_factor=0.25,
                                            rope_theta=500000.0)),
                    hidden_size_per_layer_input=8, vocab_size_per_layer_input=1000,
                    tie_word_embeddings=False),
    ),
    "gemma3n": dict(
        cls="Gemma3nForCausalLM",
        tokenizer="spm-gemma",
        # sliding and full layers alternating; the last two reuse the first two's keys and
        # values (5.x builds them without k/v weights, 4.57.6 with unused ones); an
        # intermediate_size a layer, not all equal; activation sparsity (the top 5 % of the
        # gate, as Gemma 3n's first 10 layers) in two layers; LAuReL of rank 8, 4 AltUp inputs
        # (the converter's only count); per-layer inputs of width 8 whose vocabulary (1024)
        # is larger than the model's (1001), as the shape shows it; rope bases other than the
        # defaults; a soft-cap; tied output (every Gemma 3n)
        config=dict(SMALL, num_hidden_layers=4, intermediate_size=[96, 96, 64, 64],
                    num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6,
                    max_position_embeddings=512, sliding_window=16,
                    layer_types=["sliding_attention", "full_attention"] * 2,
                    num_kv_shared_layers=2, activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0],
                    laurel_rank=8, hidden_size_per_layer_input=8,
                    vocab_size_per_layer_input=1024, rope_theta=500000.0,
                    rope_local_base_freq=20000.0, final_logit_softcapping=25.0,
                    tie_word_embeddings=True),
        # 4.57.6's save_pretrained writes per_layer_model_projection as
        # "model.language_model.per_layer_model.language_model_projection" (its
        # _checkpoint_conversion_mapping reversed into the name), which the converter cannot
        # map (and 4.57.6's own load does not map back): the case saves the parameters under
        # their names in the model, as 5.x's save_pretrained does, which 4.57.6 loads as they are
        state_dict_file_under_transformers4=True,
        # q8_0: the stacked AltUp projections and the per-layer embeddings in Q8_0 blocks
        outtypes=("f32", "q8_0"),
    ),
    "deepseek_v2": dict(
        cls="DeepseekV2ForCausalLM",
        tokenizer="gpt2",
        # MLA without a query LoRA (q_proj, as DeepSeek-V2-Lite); kv_b_proj split by the
        # converter into attn_k_b (per head, transposed) and attn_v_b; v_head_dim 20, neither
        # the nope part 32 nor nope + rope 40; layer 0 dense, layer 1 experts with two shared
        # experts as one MLP; softmax routing scaled by 1.5; untied output. num_key_value_heads
        # the head count: the converter's kv_b split views kv_b_proj by it. YaRN with
        # DeepSeek-V2's mscale and mscale_all_dim of 0.707 (the converter writes a tenth of the
        # latter only, which scales the attention too: modeling_deepseek_v2.py)
        config=dict(SMALL, num_key_value_heads=4, q_lora_rank=None, kv_lora_rank=64,
                    qk_nope_head_dim=32, qk_rope_head_dim=8, v_head_dim=20,
                    moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=2,
                    num_experts_per_tok=2, first_k_dense_replace=1, routed_scaling_factor=1.5,
                    rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=512,
                    rope_scaling=dict(DEEPSEEK_YARN, mscale=0.707, mscale_all_dim=0.707),
                    tie_word_embeddings=False),
        file=dict(mla=True),
        # q8_0: attn_k_b (a head's (64, 32): rows of the 32 nope dims, whole Q8_0 blocks),
        # attn_v_b and the rest as Q8_0 (kv_b_proj then comes back from blocks that run across
        # its rows, per head)
        outtypes=("f32", "q8_0"),
    ),
    "deepseek_v3": dict(
        cls="DeepseekV3ForCausalLM",
        tokenizer="gpt2",
        # MLA with a query LoRA (q_a_proj, q_a_layernorm, q_b_proj, as DeepSeek-V3), v_head_dim
        # 12 below the nope part 16; sigmoid
        # routing with the correction bias over 2 groups, 1 of them used; norm_topk_prob false
        # (the converter writes the key only when true; the class default is true); layer 0
        # dense; tied output; YaRN with DeepSeek-V3's (and R1's) mscale and mscale_all_dim of 1
        config=dict(SMALL, num_key_value_heads=4, q_lora_rank=48, kv_lora_rank=32,
                    qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                    moe_intermediate_size=32, n_routed_experts=4, n_shared_experts=1,
                    num_experts_per_tok=2, n_group=2, topk_group=1, norm_topk_prob=False,
                    first_k_dense_replace=1, routed_scaling_factor=1.5, rms_norm_eps=1e-5,
                    rope_theta=10000.0, max_position_embeddings=512,
                    rope_scaling=dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=1.0),
                    tie_word_embeddings=True),
        file=dict(mla=True),
    ),
    "deepseek_v32": dict(
        # transformers 5's class only (4.57.6 has no models/deepseek_v32: the case skips itself)
        cls="DeepseekV32ForCausalLM",
        mlx_under_5=True,
        tokenizer="llama3",
        # the converter asserts add_bos_token (deepseek.py, DeepseekV32Model.set_vocab), which
        # DeepSeek-V3.2's tokenizer_config.json has, as Llama 3's, under LlamaTokenizerFast; 5.x
        # ignores the field beside a tokenizer.json (tokenization_utils_base.py,
        # from_pretrained), 4.57.6 reads it: converted under 4.57.6 (no unk_token: the class
        # would add its <unk>)
        tokenizer_config=dict(add_bos_token=True, tokenizer_class="LlamaTokenizerFast",
                              unk_token=None),
        convert_under_transformers4=True,
        outtypes=("f32", "bf16"),
        # DeepSeek-V3's MLA with the query LoRA, and the DSA indexer in every layer: 2 heads of
        # 16 (the rope part 8), its top-k 4 below the prompt's length, so that the sparse mask
        # changes the logits; layer 0 dense; sigmoid routing over 2 groups; untied output
        config=dict(SMALL, num_key_value_heads=4, q_lora_rank=48, kv_lora_rank=32,
                    qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, index_n_heads=2,
                    index_head_dim=16, index_topk=4, moe_intermediate_size=32,
                    n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=2,
                    topk_group=1, norm_topk_prob=False, first_k_dense_replace=1,
                    routed_scaling_factor=1.5, rms_norm_eps=1e-5, rope_theta=10000.0,
                    max_position_embeddings=512,
                    rope_scaling=dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=1.0),
                    tie_word_embeddings=False),
        file=dict(mla=True),
        # mlx-lm's deepseek_v32.py reads rope_scaling and rope_theta, which 5.x's config writes
        # in rope_parameters only: the Hub's config.json has them
        mlx_reference=dict(rope_scaling=dict(DEEPSEEK_YARN, mscale=1.0, mscale_all_dim=1.0),
                           rope_theta=10000.0),
    ),
    "glm_moe_dsa": dict(
        # transformers 5's class only (4.57.6 has no models/glm_moe_dsa: the case skips itself)
        cls="GlmMoeDsaForCausalLM",
        mlx_under_5=True,
        tokenizer="glm4moe",
        outtypes=("f32", "bf16"),
        # DeepSeek-V3.2's model with the indexer in layers 0 and 2 ("full") and none in layer 1
        # ("shared": it reuses layer 0's top-k); the indexer's 2 heads of 16, its top-k 4 below
        # the prompt's length; layer 0 dense; sigmoid routing, norm_topk_prob false; untied
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=4, q_lora_rank=48,
                    kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                    index_n_heads=2, index_head_dim=16, index_topk=4,
                    indexer_types=["full", "shared", "full"], moe_intermediate_size=32,
                    n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
                    norm_topk_prob=False, first_k_dense_replace=1, routed_scaling_factor=2.5,
                    rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=512,
                    tie_word_embeddings=False),
        file=dict(mla=True),
    ),
    "hy_v3": dict(
        # transformers 5's class only (4.57.6 has no models/hy_v3: the case skips itself)
        cls="HYV3ForCausalLM",
        tokenizer="gpt2",
        outtypes=("f32", "bf16"),
        # experts in layers 0 and 2, a dense MLP in layer 1 (not the class default of a dense
        # first layer), with the router's expert_bias and 2 shared experts as one MLP 2·32 wide;
        # q/k norms; head_dim 32 != hidden / heads; grouped KV; untied output
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-5, rope_theta=1000000.0, max_position_embeddings=512,
                    mlp_layer_types=["sparse", "dense", "sparse"], num_experts=4,
                    num_experts_per_tok=2, num_shared_experts=2, moe_intermediate_size=32,
                    router_scaling_factor=2.5, tie_word_embeddings=False),
    ),
    "qwen3next": dict(
        cls="Qwen3NextForCausalLM",
        tokenizer="qwen2",
        # gated delta net, gated attention, gated delta net layers (not the class's every-4th
        # pattern); 2 key heads of 16 and 4 value heads of 8 (2 value heads a key head: the
        # converter's in_proj_qkvz split regroups them); conv kernel 3; head_dim 32 != hidden /
        # heads; partial_rotary_factor 0.5 (not 0.25); grouped KV; 4 experts of 32 and a shared
        # expert of 48; untied output
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, head_dim=32,
                    partial_rotary_factor=0.5, rms_norm_eps=1e-6, rope_theta=1000000.0,
                    max_position_embeddings=512,
                    layer_types=["linear_attention", "full_attention", "linear_attention"],
                    linear_conv_kernel_dim=3, linear_key_head_dim=16, linear_value_head_dim=8,
                    linear_num_key_heads=2, linear_num_value_heads=4, num_experts=4,
                    num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=48, tie_word_embeddings=False),
        # transformers' class has no MTP layers: the converter asserts it finds some unless told
        # not to export them (qwen.py, _QwenMtpMixin.__init__)
        converter_args=("--no-mtp",),
        # the converter's w + 1 on the (1 + w) RMSNorms but linear_attn.norm, A = -exp(A_log),
        # and in_proj_qkvz's [q, k, v, z] per key head split into attn_qkv and attn_gate
        # (qwen.py, Qwen3NextModel.modify_tensors)
        file=dict(QWEN_LINEAR_FILE, qkvz=True),
    ),
    "qwen35": dict(
        # transformers 5 only; the text model (the converter registers it beside the VLM)
        cls="Qwen3_5ForCausalLM",
        tokenizer="qwen2",
        # qwen3next's layers unfused, a dense MLP: 2 key heads of 16 and 4 value heads of 12
        # (Qwen3.5's checkpoints have twice as many value heads as key heads; the converter
        # tiles them then: qwen.py, _LinearAttentionVReorderBase); partial_rotary_factor 0.5;
        # head_dim 32 != hidden / heads; grouped KV; untied output
        config=dict(SMALL, num_hidden_layers=3, num_key_value_heads=2, head_dim=32,
                    rms_norm_eps=1e-6, max_position_embeddings=512,
                    rope_parameters=dict(rope_type="default", rope_theta=1000000.0,
                                         partial_rotary_factor=0.5),
                    layer_types=["linear_attention", "full_attention", "linear_attention"],
                    linear_conv_kernel_dim=3, linear_key_head_dim=16, linear_value_head_dim=12,
                    linear_num_key_heads=2, linear_num_value_heads=4, tie_word_embeddings=False),
        converter_args=("--no-mtp",),
        file=dict(QWEN_LINEAR_FILE, v_tiles=True),
    ),
    "qwen35moe": dict(
        cls="Qwen3_5MoeForCausalLM",
        tokenizer="qwen2",
        # qwen35's layers with 4 experts of 32 and a gated shared expert of 48 (no dense MLP);
        # 2 key heads of 16 and 6 value heads of 8 (3 a key head, tiled by the converter)
        config=dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=3,
                    num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
                    max_position_embeddings=512,
                    rope_parameters=dict(rope_type="default", rope_theta=1000000.0,
                                         partial_rotary_factor=0.5),
                    layer_types=["linear_attention", "full_attention", "linear_attention"],
                    linear_conv_kernel_dim=3, linear_key_head_dim=16, linear_value_head_dim=8,
                    linear_num_key_heads=2, linear_num_value_heads=6, num_experts=4,
                    num_experts_per_tok=2, moe_intermediate_size=32,
                    shared_expert_intermediate_size=48, tie_word_embeddings=False),
        converter_args=("--no-mtp",),
        file=dict(QWEN_LINEAR_FILE, v_tiles=True),
    ),
    "ministral3": dict(
        # transformers 5's class only (4.57.6 has no models/ministral3: the case skips itself)
        cls="Ministral3ForCausalLM",
        # Ministral3Config's bos, eos and pad ids default to 1, 2 and 11, not None: a byte-level
        # BPE tokenizer (the converter's gpt2 path, llama.py LlamaModel.set_vocab) naming all three
        tokenizer="gpt2-pad",
        # head_dim 32 != hidden / heads; grouped KV; untied output; YaRN as Ministral 3's
        # rope_parameters, with mscale_all_dim and llama_4_scaling_beta other than the class's
        # (conversion/mistral3.py, Ministral3Model.set_gguf_parameters writes both)
        config=dict(SMALL, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5,
                    max_position_embeddings=512, tie_word_embeddings=False,
                    rope_parameters=dict(type="yarn", rope_type="yarn", rope_theta=1000000.0,
                                         factor=4.0, original_max_position_embeddings=128,
                                         beta_fast=32.0, beta_slow=1.0, mscale=1.0,
                                         mscale_all_dim=0.5, llama_4_scaling_beta=0.2)),
    ),
    "t5": dict(
        cls="T5ForConditionalGeneration",
        tokenizer="spm-t5",
        # relative attention bias in layer 0 of each stack (modeling_t5.py, T5Block)
        config=T5_CONFIG,
    ),
    "umt5": dict(
        # the converter writes it as t5 (conversion/t5.py, T5Model registers
        # UMT5ForConditionalGeneration); hf/ tells it by the relative attention bias of every
        # layer (modeling_umt5.py, UMT5Block), here layer 1's of each stack
        cls="UMT5ForConditionalGeneration",
        tokenizer="spm-t5",
        # tied: UMT5Config's default in 4.57.6, forced in 5.x
        config=T5_CONFIG,
    ),
}

# Known gaps of ggufs: (architecture, check), (architecture, outtype, check) or
# (architecture, "*") -> reason. The checks: state_dict, logits, generate, tokenizer, config,
# generation_config, generate_token_zero; outtype "unpadded": the unpadded variant (UNPADDED).
XFAIL = {}
if transformers.__version__.split(".")[0] == "5":
    # transformers 5's tokenizer classes: save_pretrained and from_pretrained of the original
    # differ from 4.57.6's in the special tokens they list; the ids of the text are equal.
    XFAIL.update({
        ("phi3", "tokenizer"): (
            "phi3 (transformers 5): the original's special tokens list '</s>' first (5.x's "
            "LlamaTokenizer saves it as an extra special token), hf/'s the file's bos, eos, unk"),
        ("phimoe", "tokenizer"): (
            "phimoe (transformers 5): as phi3, the original's special tokens list '</s>' first "
            "(5.x's LlamaTokenizer saves it as an extra special token), hf/'s the file's bos, "
            "eos, unk"),
        ("gemma2", "tokenizer"): (
            "gemma2 (transformers 5): the original GemmaTokenizer has mask_token '<mask>' (its "
            "class default), which the file does not name (no tokenizer.ggml.mask_token_id)"),
        ("gemma3", "tokenizer"): (
            "gemma3 (transformers 5): the original GemmaTokenizer has mask_token '<mask>' (its "
            "class default), which the file does not name (no tokenizer.ggml.mask_token_id)"),
        ("gemma3n", "tokenizer"): (
            "gemma3n (transformers 5): the original GemmaTokenizer has mask_token '<mask>' (its "
            "class default, id 1000 past the SentencePiece model's 1000 pieces), which the file "
            "does not name: the converter's token 1000 is its filler '[PAD1000]' (base.py, "
            "_create_vocab_sentencepiece), though it writes tokenizer.ggml.mask_token_id 1000"),
    })

CASES = [(arch, t) for arch, row in ARCHS.items() for t in row.get("outtypes", ("f32",))]

# The tokenizers that name a padding token (Originals.tokenizer checks it). A row whose tokenizer
# names none has no padding token in its own case; a row whose tokenizer names one is also
# converted (--outtype f32) from an original without one, "unpadded": its tokenizer's pad_token
# and its config's pad_token_id None, as a model without a padding token has them (gguf-py's
# vocab.py, SpecialVocab, then writes no tokenizer.ggml.padding_token_id), so that every row's
# config, generation config and generate are checked on a file holding no padding token, where
# the config class's default (Phi3Config's 32000, CohereConfig's 0, ...) is not the original's.
# But Nemotron's, whose converter writes pad 0 whatever the tokenizer says (nemotron.py,
# NemotronModel.set_vocab), and T5's and UMT5's, whose decoder inputs are shifted in with the pad
# id (modeling_t5.py, T5PreTrainedModel._shift_right raises without one).
PADDED_TOKENIZERS = {"spm-llama-pad", "spm-phi3", "spm-gemma", "gpt2-pad", "qwen2", "glm4",
                     "spm-nemotron", "glm4moe", "spm-gemma4", "spm-t5"}
UNPADDED = [arch for arch, row in ARCHS.items() if row["tokenizer"] in PADDED_TOKENIZERS
            and arch not in ("nemotron", "t5", "umt5", "nemotron_h-dense")]
# Nor nemotron_h-dense's: its original is a Hub-form config.json (hub_config) that the converter
# reads as it is; without a pad token it holds no pad_token_id at all, so transformers 5 gives
# the original NemotronHConfig's default 0 while the converter writes none, and hf/ writes null
# (the file cannot tell an absent field from a None one).
# test_generate_token_zero's bound on each step's logits. It looks for a pad id that masks out a
# prompt token, which moves them by far more (lfm2 with CohereConfig-style pad 0: 0.17); 20 steps
# of generate carry the last-ulp differences of weights that are not bit-exact (A_log within
# A_LOG_BOUND; gpt-oss's MXFP4 experts) into them: jamba 1.8e-7, gpt-oss-mxfp4 4.2e-7 (measured,
# under 4.57.6 and 5.24.0). test_logits keeps its exact comparison.
TOKEN_ZERO_LOGITS_ATOL = 1e-5
# The conversions in the order the tests ask for them (Originals.converted starts the next one):
# "unpadded" is an --outtype f32 conversion of the unpadded original.
CONVERSIONS = CASES + [(arch, "unpadded") for arch in UNPADDED]

# test_mlx_llama_quantize's originals: the row's model at sizes where every matrix's rows are
# whole K-quant super-blocks (QK_K 256, ggml-common.h), so that llama-quantize's K-quants need no
# fallback (llama-quant.cpp, tensor_type_fallback: a row of another length takes Q5_0, Q5_1,
# Q8_0 ...): hidden 256, 4 heads of 64, MLP widths of 256 and 512; 2 layers, gemma3's 6 (mlx-lm's
# gemma3_text.py reads layer sliding_window_pattern - 1's cache). The tokenizer's vocabulary as
# the row's.
WIDE_SIZES = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                  num_attention_heads=4, head_dim=64)
WIDE = {
    "llama": WIDE_SIZES,
    "qwen3": WIDE_SIZES,
    "qwen3moe": dict(WIDE_SIZES, moe_intermediate_size=256),
    "gemma3": dict(WIDE_SIZES, num_hidden_layers=6),
    "phi3": {k: v for k, v in WIDE_SIZES.items() if k != "head_dim"},  # hidden / heads
    "gpt-oss-mxfp4": dict(WIDE_SIZES, intermediate_size=256),
}
WIDE_CONVERSIONS = [(arch, "wide") for arch in WIDE]

TEXT = (
    "Hello world! The quick brown fox jumps over the lazy dog.\n"
    "Grüße aus Köln: Äpfel, Öl und Übermut kosten 12,50 € – schön, größer, Straße.\n"
    "中文分词测试：我们在北京工作，你好世界。\n"
    "def f(x):\n\tif x:\n        return x  # tabs\tand   spaces\n"
    "digits 1234567 and 3.14159\n"
    "emoji 🦙🚀😀👍🏽 done  \n\n"
)
PROMPT = "The quick brown fox jumps over"
N_NEW = 20

# Config keys that are bookkeeping, not the model.
CONFIG_IGNORED = {"transformers_version", "_name_or_path", "torch_dtype", "dtype",
                  "_attn_implementation_autoset", "_commit_hash", "output_attentions",
                  "output_hidden_states", "use_cache"}


# ---------------------------------------------------------------------------------------------
# GGUF files: a minimal reader of the header (gguf-py's GGUFReader takes ~10 s on a file holding
# Qwen2's 151k tokens and merges, one memmap view a string); test_reader_agrees_with_gguf_py
# checks it against GGUFReader. Tensor values are dequantized by gguf-py (gguf.quants).

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}


class GgufTensor:
    def __init__(self, name, shape, tensor_type, data):
        self.name, self.shape, self.tensor_type, self.data = name, shape, tensor_type, data

    def values(self):
        """float32, in numpy order (the GGUF dims reversed), as gguf-py dequantizes them."""
        return quants.dequantize(self.data, self.tensor_type).reshape(self.shape)


def read_gguf(path):
    """(metadata, {name: GgufTensor}) of a GGUF v2/v3 file (little-endian)."""
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    raw = memoryview(buf)
    pos = 0

    def take(fmt):
        nonlocal pos
        (v,) = struct.unpack_from(fmt, raw, pos)
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return bytes(raw[pos - n:pos]).decode("utf-8", errors="surrogateescape")

    def value(vtype):
        if vtype == 8:
            return string()
        if vtype == 9:
            etype, n = take("<I"), take("<Q")
            return [value(etype) for _ in range(n)]
        return take(_SCALARS[vtype])

    assert take("<I") == 0x46554747, f"{path} is not a GGUF file"
    assert take("<I") in (2, 3)
    n_tensors, n_kv = take("<Q"), take("<Q")
    meta = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = [take("<Q") for _ in range(take("<I"))]
        infos.append((name, dims, gguf.GGMLQuantizationType(take("<I")), take("<Q")))
    align = meta.get("general.alignment", 32)
    start = -(-pos // align) * align
    tensors = {}
    for name, dims, qtype, offset in infos:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        nbytes = int(np.prod(dims)) // block * size
        data = buf[start + offset:start + offset + nbytes]
        tensors[name] = GgufTensor(name, tuple(reversed(dims)), qtype, data)
    return meta, tensors


# ---------------------------------------------------------------------------------------------
# Tokenizers


def _corpus(n_lines=4000):
    """A generated multilingual text, the same every run: pseudo-words from English and German
    syllables (umlauts, ß), Chinese characters, code with tabs and indents, digits, emoji."""
    rng = random.Random(20240601)
    en = ("th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha wo "
          "qu ck ox ju mp ov la zy do g b c f k p v w x y z j m").split()
    de = "sch ch ü ö ä ß ei ie au en er ung keit lich ge be ver zu ein über groß grü".split()
    zh = "我们在北京工作中文分词测试模型文件数据你好世界大小上下天地人口日月水火山石田土"
    code = ["def f(x):", "\treturn x", "    if x > 0:", "for i in range(10):", "\t\tprint(i)",
            "x = {'a': 1, 'b': [2, 3]}", "    # comment", "int main() { return 0; }"]
    emoji = "🦙🚀😀🎉👍✅"

    def word(sylls):
        return "".join(rng.choice(sylls) for _ in range(rng.randint(1, 4)))

    lines = []
    for _ in range(n_lines):
        kind = rng.randrange(6)
        if kind == 0:
            line = " ".join(word(en) for _ in range(rng.randint(3, 12))).capitalize() + "."
        elif kind == 1:
            line = " ".join(word(de) for _ in range(rng.randint(3, 10))).capitalize() + "!"
        elif kind == 2:
            line = "".join(rng.choice(zh) for _ in range(rng.randint(4, 20))) + "。"
        elif kind == 3:
            line = "\n".join(rng.choice(code) for _ in range(rng.randint(1, 4)))
        elif kind == 4:
            line = " ".join(str(rng.randint(0, 10 ** rng.randint(1, 8))) for _ in range(5))
        else:
            line = word(en) + " " + rng.choice(emoji) + " " + word(de)
        lines.append(line)
    return lines


def _train_spm(path, gemma, ids=None, symbols=()):
    """`symbols`: user-defined pieces of the model (Gemma 3's image tokens are such pieces)."""
    spm = pytest.importorskip(
        "sentencepiece", reason="sentencepiece is not installed: the SentencePiece rows need it"
    )
    pytest.importorskip(
        "google.protobuf", reason="protobuf is not installed: transformers needs it to read a "
        "SentencePiece model"
    )
    ids = ids or (dict(pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>",
                       eos_piece="<eos>", bos_piece="<bos>", unk_piece="<unk>") if gemma
                  else dict(unk_id=0, bos_id=1, eos_id=2, pad_id=-1))
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_corpus()), model_prefix=str(path / "sp"), vocab_size=1000,
        model_type="bpe", byte_fallback=True, character_coverage=0.9995, split_digits=True,
        allow_whitespace_only_pieces=True, remove_extra_whitespaces=False,
        normalization_rule_name="identity", add_dummy_prefix=not gemma, num_threads=1,
        minloglevel=2, **ids, **({"user_defined_symbols": list(symbols)} if symbols else {}),
    )
    src = path / "src"
    src.mkdir()
    shutil.move(path / "sp.model", src / "tokenizer.model")
    return src


def _tok_class(*names):
    for name in names:
        if (cls := getattr(transformers, name, None)) is not None:
            return cls
    pytest.skip(f"transformers {transformers.__version__} lacks {' / '.join(names)}")


# add_bos_token=True as the real Llama, Mistral, Phi-3 and Gemma tokenizer_config.json say
# (transformers 5 builds a tokenizer from tokenizer.model without a BOS otherwise)


def _spm_llama(path, extra=(), **kwargs):
    src = _train_spm(path, gemma=False)
    tok = _tok_class("LlamaTokenizerFast", "LlamaTokenizer").from_pretrained(
        str(src), add_bos_token=True, add_eos_token=False, **kwargs)
    if extra:
        tok.add_special_tokens({"eos_token": extra[0], "pad_token": extra[0]})
        tok.add_tokens(list(extra), special_tokens=True)
    return tok, src / "tokenizer.model"


def _spm_llama_pad(path):
    """<unk> as the pad token too (as ERNIE 4.5's): it names bos, eos and pad. add_prefix_space
    stated (true, as the tokenizer does): ERNIE's converter writes tokenizer_config.json's
    value, a null as false (ernie.py, Ernie4_5Model.set_vocab)."""
    return _spm_llama(path, pad_token="<unk>", add_prefix_space=True)


def _spm_phi3(path):
    return _spm_llama(path, extra=("<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>"))


def _spm_nemotron(path):
    """Nemotron's ids: <pad> 0, <unk> 1, <s> 2, </s> 3 (the converter writes pad 0 and unk 1
    whatever the tokenizer says, nemotron.py NemotronModel.set_vocab; NemotronConfig's bos and
    eos default to 2 and 3)."""
    src = _train_spm(path, gemma=False, ids=dict(pad_id=0, unk_id=1, bos_id=2, eos_id=3,
                                                 pad_piece="<pad>"))
    tok = _tok_class("LlamaTokenizerFast", "LlamaTokenizer").from_pretrained(
        str(src), add_bos_token=True, add_eos_token=False, pad_token="<pad>")
    return tok, src / "tokenizer.model"


def _spm_gemma(path):
    src = _train_spm(path, gemma=True)
    tok = _tok_class("GemmaTokenizerFast", "GemmaTokenizer").from_pretrained(
        str(src), add_bos_token=True, add_eos_token=False)
    return tok, src / "tokenizer.model"


def _bpe_from_llama_cpp(path, vocab_name, cls_names, **kwargs):
    """vocab.json and merges.txt from llama.cpp's vocab-only GGUF, loaded by transformers' own
    tokenizer class; the special (control) tokens are added after the vocabulary, at the ids the
    GGUF gives them."""
    meta, _ = read_gguf(LLAMA_CPP / "models" / f"ggml-vocab-{vocab_name}.gguf")
    tokens = meta["tokenizer.ggml.tokens"]
    types = meta["tokenizer.ggml.token_type"]
    vocab = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty == gguf.TokenType.NORMAL}
    control = [t for t, ty in zip(tokens, types) if ty == gguf.TokenType.CONTROL]
    src = path / "src"
    src.mkdir()
    (src / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (src / "merges.txt").write_text(
        "#version: 0.2\n" + "\n".join(meta["tokenizer.ggml.merges"]) + "\n", encoding="utf-8"
    )
    tok = _tok_class(*cls_names).from_pretrained(str(src), **kwargs)
    tok.add_tokens([t for t in control if t not in tok.get_vocab()], special_tokens=True)
    for t in control:
        assert tok.convert_tokens_to_ids(t) == tokens.index(t), f"{t} is not at its GGUF id"
    return tok, None


def _gpt2(path):
    return _bpe_from_llama_cpp(path, "gpt-2", ("GPT2TokenizerFast", "GPT2Tokenizer"))


def _llama3(path):
    """Llama 3's tokenizer (llama.cpp's llama-bpe: ggml-vocab-llama-bpe.gguf's vocabulary and
    merges, Meta-Llama-3's pre-tokenizer pattern, merges ignored for whole-vocabulary words,
    <|begin_of_text|> added before every text) as Meta's tokenizer_config.json names it:
    LlamaTokenizerFast with add_bos_token, which DeepSeek-V3.2's converter asserts (deepseek.py,
    DeepseekV32Model.set_vocab)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    meta, _ = read_gguf(LLAMA_CPP / "models" / "ggml-vocab-llama-bpe.gguf")
    tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
    vocab = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty == gguf.TokenType.NORMAL}
    control = [t for t, ty in zip(tokens, types) if ty == gguf.TokenType.CONTROL]
    merges = [tuple(m.split(" ", 1)) for m in meta["tokenizer.ggml.merges"]]
    pattern = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    backend = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(control)
    bos = "<|begin_of_text|>"
    backend.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tokens.index(bos))])
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=bos,
                                               eos_token="<|end_of_text|>")
    for t in control:
        assert tok.convert_tokens_to_ids(t) == tokens.index(t), f"{t} is not at its GGUF id"
    return tok, None


def _gpt2_pad(path):
    """GPT-2's with <|endoftext|> as its pad token too: it names bos, eos and pad, for the
    classes whose config defaults them to ids other than None (and OLMoE's tokenizer has a
    padding token: a file without one would leave the config's to that default)."""
    return _bpe_from_llama_cpp(path, "gpt-2", ("GPT2TokenizerFast", "GPT2Tokenizer"),
                               pad_token="<|endoftext|>")


def _qwen2(path):
    return _bpe_from_llama_cpp(path, "qwen2", ("Qwen2TokenizerFast", "Qwen2Tokenizer"),
                               unk_token=None, bos_token=None, eos_token="<|endoftext|>",
                               pad_token="<|endoftext|>")


def _glm4(path):
    """Qwen2's vocabulary with <|user|> added (GLM-4's converter looks it up, glm.py
    Glm4Model.set_vocab) and <|endoftext|> named bos, eos, unk and pad: the converter writes it
    as bos, eos and unk whatever the tokenizer says."""
    special = {f"{k}_token": "<|endoftext|>" for k in ("unk", "bos", "eos", "pad")}
    tok, _ = _bpe_from_llama_cpp(path, "qwen2", ("Qwen2TokenizerFast", "Qwen2Tokenizer"),
                                 **special)
    tok.add_tokens(["<|user|>"], special_tokens=True)
    return tok, None


def _glm4moe(path):
    """Qwen2's vocabulary with the tokens GLM-4.5's converter looks up (base.py, _set_vocab_glm:
    bos [gMASK], eot <|user|>, unk <|endoftext|>, eom <|observation|>), named as it writes them;
    <|endoftext|> is eos and pad too."""
    tok, _ = _bpe_from_llama_cpp(path, "qwen2", ("Qwen2TokenizerFast", "Qwen2Tokenizer"),
                                 unk_token="<|endoftext|>", eos_token="<|endoftext|>",
                                 pad_token="<|endoftext|>")
    tok.add_tokens(["[gMASK]", "<|user|>", "<|observation|>"], special_tokens=True)
    tok.add_special_tokens({"bos_token": "[gMASK]"})
    return tok, None


def _spm_gemma4(path):
    """Gemma's without the mask token transformers 5's GemmaTokenizer adds by default (id 1000,
    past the SentencePiece pieces: Gemma3Model.modify_tensors cuts the embedding to those)."""
    src = _train_spm(path, gemma=True)
    tok = _tok_class("GemmaTokenizerFast", "GemmaTokenizer").from_pretrained(
        str(src), add_bos_token=True, add_eos_token=False, mask_token=None)
    return tok, src / "tokenizer.model"
def _spm_t5(path):
    """T5's: a SentencePiece Unigram model (spiece.model) with pad 0, eos 1, unk 2 and no bos,
    trained by sentencepiece's own trainer; no extra ids (the converter's vocabulary is the
    model's pieces, t5.py, T5Model.set_vocab)."""
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
    pytest.importorskip("google.protobuf", reason="protobuf is not installed: transformers "
                        "needs it to read a SentencePiece model")
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_corpus()), model_prefix=str(path / "sp"),
        vocab_size=1000, model_type="unigram", normalization_rule_name="nmt_nfkc",
        character_coverage=0.9995, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, num_threads=1,
        minloglevel=2)
    shutil.copy(path / "sp.model", path / "spiece.model")
    tok = _tok_class("T5TokenizerFast").from_pretrained(str(path), extra_ids=0)
    return tok, path / "spiece.model"


TOKENIZERS = {"spm-llama": _spm_llama, "spm-llama-pad": _spm_llama_pad, "spm-phi3": _spm_phi3,
              "spm-gemma": _spm_gemma, "gpt2": _gpt2, "llama3": _llama3, "gpt2-pad": _gpt2_pad, "qwen2": _qwen2,
              "glm4": _glm4, "spm-nemotron": _spm_nemotron,
              "glm4moe": _glm4moe, "spm-gemma4": _spm_gemma4, "spm-t5": _spm_t5}


# ---------------------------------------------------------------------------------------------
# The session's originals and converted files


def _mxfp4_experts(path):
    """The saved gpt-oss's experts as gpt-oss's Hub checkpoints hold them: `*_blocks` (E, rows,
    cols/32, 16) uint8, two FP4 codes a byte (low nibble first), and `*_scales` (E, rows, cols/32)
    uint8 (E8M0), rows (E, 2F, H) for gate_up_proj and (E, H, F) for down_proj
    (integrations/mxfp4.py, convert_moe_packed_tensors, which transposes them after); random
    codes, scales 2^-9..2^-4; and the Hub's quantization_config."""
    from safetensors.torch import load_file, save_file
    file = path / "model.safetensors"
    tensors = load_file(str(file))
    g = torch.Generator().manual_seed(1)
    for name in [n for n in tensors if re.search(r"experts\.(gate_up|down)_proj$", n)]:
        rows, cols = tensors.pop(name).shape[-1:-3:-1]  # (E, cols, rows), stored transposed
        e = tensors[name + "_bias"].shape[0]
        tensors[name + "_blocks"] = torch.randint(0, 256, (e, rows, cols // 32, 16),
                                                  generator=g, dtype=torch.uint8)
        tensors[name + "_scales"] = torch.randint(118, 124, (e, rows, cols // 32),
                                                  generator=g, dtype=torch.uint8)
    save_file(tensors, str(file), metadata={"format": "pt"})
    config = json.loads((path / "config.json").read_text())
    config["quantization_config"] = {
        "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                   "model.embed_tokens", "lm_head"],
        "quant_method": "mxfp4"}
    (path / "config.json").write_text(json.dumps(config, indent=2))


class Originals:
    """Per tokenizer kind, per architecture, per (architecture, outtype): built on first use.
    Conversions run in the background, one ahead of the one a test waits for (the converter is a
    Python process of its own: two cores, two at a time)."""

    def __init__(self, root):
        self.root = root
        self.tokenizers = {}
        self.dirs = {}
        self.jobs = {}

    def tokenizer(self, kind, unpadded=False):
        """(tokenizer, SentencePiece model or None) of kind `kind`; `unpadded`: a copy naming no
        padding token."""
        if kind not in self.tokenizers:
            path = self.root / f"tok-{kind}"
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir()
            tok, sp_model = TOKENIZERS[kind](path)
            assert (tok.pad_token is not None) == (kind in PADDED_TOKENIZERS), (
                f"{kind}: pad_token {tok.pad_token!r}: PADDED_TOKENIZERS is wrong")
            self.tokenizers[kind] = tok, sp_model
        if unpadded and (kind, "unpadded") not in self.tokenizers:
            tok, sp_model = self.tokenizers[kind]
            tok = copy.deepcopy(tok)
            tok.pad_token = None
            assert tok.pad_token is None and tok.pad_token_id is None
            self.tokenizers[(kind, "unpadded")] = tok, sp_model
        return self.tokenizers[(kind, "unpadded") if unpadded else kind]

    def original(self, arch, unpadded=False, wide=False):
        """The folder save_pretrained wrote (model, tokenizer, and tokenizer.model where the
        tokenizer is SentencePiece's); `unpadded`: of the original without a padding token;
        `wide`: of the row's model at WIDE's sizes (test_mlx_llama_quantize)."""
        if (arch, unpadded, wide) not in self.dirs:
            row = ARCHS[arch]
            cls = getattr(transformers, row["cls"], None)
            if cls is None:
                pytest.skip(f"transformers {transformers.__version__} lacks {row['cls']}")
            major = transformers.__version__.split(".")[0]
            if why := row.get("converter_fails", {}).get(major):
                pytest.skip(f"llama.cpp's converter fails under transformers {major}: {why}")
            tok, sp_model = self.tokenizer(row["tokenizer"], unpadded)
            ids = {f"{k}_token_id": getattr(tok, f"{k}_token_id")
                   for k in ("bos", "eos", "pad")}
            # a row may set vocab_size (above the tokenizer's: a padded embedding)
            sizes = WIDE[arch] if wide else {}
            config = cls.config_class(**{"vocab_size": len(tok), **ids, **row["config"],
                                         **sizes})
            torch.manual_seed(0)
            model = cls(config).eval()
            # no parameter keeps its initial constant (norms of ones, biases of zeros): a tensor
            # hf/ lacked would be initialized to that constant and go unnoticed
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(torch.randn_like(p), alpha=0.02)
                # and no saved buffer (dots1's e_score_correction_bias)
                saved = model.state_dict()
                for name, b in model.named_buffers():
                    if name in saved and b.is_floating_point():
                        b.add_(torch.randn_like(b), alpha=0.02)
            path = self.root / (f"{arch}-unpadded" if unpadded else
                                f"{arch}-wide" if wide else arch)
            model.save_pretrained(str(path))
            if row.get("state_dict_file_under_transformers4") and major == "4":
                tied = {"lm_head.weight"} if config.tie_word_embeddings else set()
                safetensors_torch.save_file(
                    {k: v.contiguous() for k, v in model.state_dict().items() if k not in tied},
                    str(path / "model.safetensors"), metadata={"format": "pt"})
            if row.get("mxfp4"):
                _mxfp4_experts(path)
            if "hub_class" in row:  # the class name the Hub repository's config.json gives
                config_json = json.loads((path / "config.json").read_text())
                config_json["architectures"] = [row["hub_class"]]
                (path / "config.json").write_text(json.dumps(config_json, indent=2))
            if "hub_config" in row:  # None: a field the Hub's config.json lacks
                config_json = json.loads((path / "config.json").read_text())
                config_json.update(row["hub_config"])
                config_json = {k: v for k, v in config_json.items() if v is not None}
                (path / "config.json").write_text(json.dumps(config_json, indent=2))
            tok.save_pretrained(str(path))
            if "tokenizer_config" in row:  # fields the Hub's tokenizer_config.json has
                tok_json = json.loads((path / "tokenizer_config.json").read_text())
                tok_json.update(row["tokenizer_config"])
                (path / "tokenizer_config.json").write_text(json.dumps(tok_json, indent=2))
            if sp_model is not None and not (path / "tokenizer.model").exists():
                shutil.copy(sp_model, path / "tokenizer.model")
            self.dirs[(arch, unpadded, wide)] = path
        return self.dirs[(arch, unpadded, wide)]

    def _start(self, key):
        arch, outtype = key
        src = self.original(arch, unpadded=outtype == "unpadded", wide=outtype == "wide")
        out = self.root / f"{arch}-{outtype}.gguf"
        python = None  # this venv's: forked from llama_converter's forkserver
        if ARCHS[arch].get("convert_under_transformers4"):
            python = os.environ.get("GGUFS_TRANSFORMERS4_PYTHON", str(TRANSFORMERS4_PYTHON))
            if not os.access(python, os.X_OK):
                pytest.skip(f"no transformers 4 venv to convert {arch} under ({python}; "
                            "scripts/install-deps --tests, or $GGUFS_TRANSFORMERS4_PYTHON)")
        args = [src, "--outtype", "f32" if outtype in ("unpadded", "wide") else outtype,
                "--outfile", out, *ARCHS[arch].get("converter_args", ())]
        job = llama_converter.convert(args, self.root / f"{arch}-{outtype}.log", python)
        self.jobs[key] = (job, out)

    def converted(self, arch, outtype):
        """The GGUF file llama.cpp's converter made of the original (--outtype `outtype`;
        "unpadded": --outtype f32 of the original without a padding token; "wide": --outtype
        f32 of the wide original)."""
        key = (arch, outtype)
        if key not in self.jobs:
            self._start(key)
        order = WIDE_CONVERSIONS if outtype == "wide" else CONVERSIONS
        for ahead in order[order.index(key) + 1:]:
            if ahead not in self.jobs:
                try:
                    self._start(ahead)
                except pytest.skip.Exception:
                    pass
                break
        job, out = self.jobs[key]
        status = job.wait(timeout=900)
        if status != 0 or not out.is_file():
            text = job.log()
            if m := re.search(r"ModuleNotFoundError: No module named '([^']+)'", text):
                pytest.skip(f"llama.cpp's converter needs {m[1]}, which is not installed")
            pytest.fail(f"convert_hf_to_gguf.py {arch} --outtype {outtype} failed "
                        f"({status}):\n{text[-4000:]}")
        return out

    def close(self):
        for job, _ in self.jobs.values():
            if job.running():
                job.kill()


@pytest.fixture(scope="session")
def originals(tmp_path_factory):
    if not (LLAMA_CPP / "convert_hf_to_gguf.py").is_file():
        pytest.skip(f"llama.cpp's source tree is absent ({LLAMA_CPP}; set GGUFS_LLAMA_CPP)")
    o = Originals(tmp_path_factory.mktemp("roundtrip"))
    yield o
    o.close()


def _known_gap(request, arch, outtype, check):
    reason = (XFAIL.get((arch, outtype, check)) or XFAIL.get((arch, check))
              or XFAIL.get((arch, "*")))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


def _hf(m, arch):
    hf = m / "hf"
    assert hf.is_dir(), f"ggufs renders no hf/ for {arch}"
    return hf


def _same_files_in_process(m, path):
    """Every file of the mount's hf/ and mlx/ (where served) as the Python package reads it from
    the file in-process (ggufs.open), byte for byte."""
    import ggufs

    with ggufs.open(path) as g:
        for view in ("hf", "mlx"):
            if not (m / view).is_dir():
                continue
            names = sorted(p.name for p in (m / view).iterdir())
            assert sorted(g.listdir(view)) == names, view
            for name in names:
                assert g.read(f"{view}/{name}") == (m / view / name).read_bytes(), (view, name)


def _in_process(path):
    """hf/'s model as the Python package builds it from the file, no mount (ggufs.transformers),
    with _load_model's dtype and attention."""
    import ggufs.transformers

    return ggufs.transformers.from_pretrained(
        path, tokenizer_too=False, dtype=torch.float32, attn_implementation="eager").eval()


def _load_model(path, arch, hf=False):
    """The original's class, or for hf/ the class hf/'s config names."""
    row = ARCHS[arch]
    cls = getattr(transformers, row.get("hf_class", row["cls"]) if hf else row["cls"])
    model = cls.from_pretrained(str(path), dtype=torch.float32, attn_implementation="eager")
    if row.get("mxfp4") and not hf:
        # transformers dequantizes MXFP4 experts to bfloat16 (convert_moe_packed_tensors),
        # whatever the dtype asked; float32 holds those values exactly
        model = model.float()
    return model.eval()


# ---------------------------------------------------------------------------------------------
# The reference weights: the original's as the converter's file holds them


def _converter_names():
    """(constants, tensor_mapping) of llama.cpp's own gguf-py (LLAMA_CPP/gguf-py; the two import
    nothing else), the one its converter wrote the file with, loaded as the package
    gguf_converter beside the pinned gguf: they hold the architectures newer than the pinned
    release."""
    if "gguf_converter" not in sys.modules:
        package = types.ModuleType("gguf_converter")
        package.__path__ = [str(LLAMA_CPP / "gguf-py" / "gguf")]
        sys.modules["gguf_converter"] = package
    return (importlib.import_module("gguf_converter.constants"),
            importlib.import_module("gguf_converter.tensor_mapping"))


def _tensor_name_map(name, n_blocks):
    """gguf-py's tensor name map of general.architecture `name`: the pinned gguf's, else (an
    architecture newer than it) the converter's own."""
    for arch, arch_name in gguf.MODEL_ARCH_NAMES.items():
        if arch_name == name:
            return gguf.get_tensor_name_map(arch, n_blocks)
    constants, mapping = _converter_names()
    for arch, arch_name in constants.MODEL_ARCH_NAMES.items():
        if arch_name == name:
            return mapping.get_tensor_name_map(arch, n_blocks)
    raise AssertionError(f"gguf-py does not know the architecture {name}")


# transformers 5 renames some checkpoint names at load (conversion_mapping.py,
# _checkpoint_conversion_mapping): (5.x's name, the checkpoint's, which the converter reads).
RENAMED_AT_LOAD = (
    (r"block_sparse_moe\.router\.weight$", "block_sparse_moe.router.layer.weight"),
    (r"block_sparse_moe\.experts\.down_proj$", "block_sparse_moe.output_linear.weight"),
    (r"mlp\.gate\.moe_statics\.", "mlp.moe_statics."),
    # HYV3MoE's buffer, the Hub's mlp.expert_bias (conversion_mapping.py, "hy_v3"); the
    # converter keeps it without a suffix (blk.N.exp_probs_b: gguf_tensor)
    (r"^(model\.layers\.\d+\.mlp)\.e_score_correction_bias$", r"\1.expert_bias"),
    # not transformers': the converter's own (base.py, ModelBase.filter_tensors)
    (r"e_score_correction_bias$", "e_score_correction.bias"),
    # and lfm2.py's (LFM2MoeModel.filter_tensors)
    (r"feed_forward\.expert_bias$", "feed_forward.expert_bias.bias"),
    # and afmoe.py's (AfmoeModel.filter_tensors)
    (r"mlp\.expert_bias$", "mlp.expert_bias.bias"),
    # the converter's own too (mamba.py, Mamba2Model.filter_tensors)
    (r"(mixer|mamba)\.dt_bias$", r"\1.dt_proj.bias"),
    (r"mixer\.dt_bias$", "mixer.dt_proj.bias"),
    # and qwen.py's (Qwen3NextModel.modify_tensors)
    (r"linear_attn\.dt_bias$", "linear_attn.dt_proj.bias"),
    # not a rename: T5's encoder and decoder embed_tokens are its shared embedding
    # (modeling_t5.py), which the converter keeps once (t5.py, T5Model.modify_tensors)
    (r"^(en|de)coder\.embed_tokens\.weight$", "shared.weight"),
    # NemotronH's mixers under transformers 5's name (conversion_mapping.py, "nemotron_h":
    # backbone. -> model., the experts stacked): the checkpoint's, the stack as the converter
    # names it (nemotron.py, NemotronHModel.modify_tensors)
    (r"^model\.layers\.(\d+)\.mixer\.experts\.(up|down)_proj$",
     r"model.layers.\1.mlp.experts.\2_proj"),
    (r"^model\.layers\.(\d+)\.mixer\.", r"backbone.layers.\1.mixer."),
)

OUTTYPES = {"f32": gguf.GGMLQuantizationType.F32, "f16": gguf.GGMLQuantizationType.F16,
            "bf16": gguf.GGMLQuantizationType.BF16, "q8_0": gguf.GGMLQuantizationType.Q8_0}


class Reference:
    """The converter's file, seen from the Hugging Face names: which tensor holds a Hugging Face
    tensor (gguf-py's own name map, the one the converter uses), in which type, in which layout
    (the row's `file` entry: what the converter does to values besides moving rows)."""

    def __init__(self, gguf_path, arch, config):
        self.meta, self.tensors = read_gguf(gguf_path)
        name = self.meta["general.architecture"]
        self.names = _tensor_name_map(name, self.meta[f"{name}.block_count"])
        self.layout = ARCHS[arch].get("file", {})
        # query heads and KV groups of a fused query_key_value (modeling_gpt_neox.py,
        # modeling_bloom.py: per head; modeling_falcon.py, FalconAttention: per KV group, one
        # for the multi-query layout)
        heads = getattr(config, "num_attention_heads", 0)  # none in an SSM's config
        groups = heads
        if config.model_type == "falcon":
            new = config.new_decoder_architecture or not config.multi_query
            groups = config.num_kv_heads if new else 1
        self.qkv = (heads, groups)

    def _regrouped(self, hf_name):
        return hf_name.endswith(self.layout.get("regrouped", ()))

    def _regroup(self, x, back=False):
        """The converter's regroup (gptneox.py, bloom.py, falcon.py: modify_tensors): per KV
        group [q of heads / groups heads, k, v] to [all q; all k; all v], or `back`."""
        heads, groups = self.qkv
        rest = x.shape[1:]
        hd = x.shape[0] // (heads + 2 * groups)
        if not back:
            x = x.reshape(groups, heads // groups + 2, hd, *rest)
            return torch.cat([x[:, :-2].reshape(-1, *rest), x[:, -2].reshape(-1, *rest),
                              x[:, -1].reshape(-1, *rest)])
        q, k, v = x.split([heads * hd, groups * hd, groups * hd])
        parts = (q.reshape(groups, -1, hd, *rest), k.reshape(groups, 1, hd, *rest),
                 v.reshape(groups, 1, hd, *rest))
        return torch.cat(parts, dim=1).reshape(x.shape)

    def gguf_tensor(self, hf_name):
        if hf_name.startswith("blk."):  # already the GGUF tensor's name (_file_views)
            return self.tensors.get(hf_name)
        for new, old in RENAMED_AT_LOAD:
            hf_name = re.sub(new, old, hf_name)
        name = self.names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None and hf_name.startswith("transformer."):
            # the converter's own rename before the map (bloom.py, BloomModel.modify_tensors)
            name = self.names.get_name(hf_name.removeprefix("transformer."),
                                       try_suffixes=(".weight", ".bias"))
        name = name or ""
        # or without the suffix the map tried (hunyuan.py, HYV3Model: exp_probs_b)
        return (self.tensors.get(name) or self.tensors.get(name + ".weight")
                or self.tensors.get(name.removesuffix(".bias")))

    def _transposed(self, hf_name):
        return hf_name.endswith(self.layout.get("transposed", ()))

    def _plus_one(self, hf_name):
        return hf_name.endswith(self.layout.get("plus_one", ()))

    def _neg_exp(self, hf_name):
        return hf_name.endswith(self.layout.get("neg_exp", ()))

    def to_file(self, hf_name, x):
        """float32 numpy, as the converter hands it to the writer."""
        x = x.detach().to(torch.float32)
        if self._regrouped(hf_name):
            x = self._regroup(x)
        if self._neg_exp(hf_name):  # as the converter computes it: torch, float32
            x = -torch.exp(x)
        if self._transposed(hf_name):
            x = x.T
        if self._plus_one(hf_name):
            x = x + 1
        return np.ascontiguousarray(x.numpy())

    def from_file(self, hf_name, y):
        y = torch.from_numpy(np.ascontiguousarray(y, dtype=np.float32))
        if self._plus_one(hf_name):
            y = y - 1
        if self._transposed(hf_name):
            y = y.T.contiguous()
        if self._regrouped(hf_name):
            y = self._regroup(y, back=True).contiguous()
        return y

    def type_of(self, hf_name, x, outtype):
        """The type the converter stored the tensor in; one it does not store under its own
        name (a tied output) by the converter's rule: 1-D in F32, others in the outtype."""
        t = self.gguf_tensor(hf_name)
        if t is None and self.layout.get("gpt_oss"):  # gate_up_proj: as its gate half
            t = self.gguf_tensor(re.sub(r"(gate_up|down)_proj(_bias)?$",
                                        lambda m: ("gate" if m[1] == "gate_up" else "down")
                                        + "_proj" + (".bias" if m[2] else ""), hf_name))
        if t is not None:
            return t.tensor_type
        return gguf.GGMLQuantizationType.F32 if x.dim() <= 1 else OUTTYPES[outtype]

    def expected(self, hf_name, x, outtype):
        """What hf/ must give for the original tensor x: x through the file and back."""
        qtype = self.type_of(hf_name, x, outtype)
        if self._neg_exp(hf_name):
            # no exact inverse (A_LOG_BOUND bounds hf/'s): the original
            assert qtype == gguf.GGMLQuantizationType.F32, (hf_name, qtype)
            return x.detach().to(torch.float32).clone()
        if qtype == gguf.GGMLQuantizationType.MXFP4:
            # the original's own MXFP4 codes and scales, moved as they are (gpt_oss.py,
            # repack_mxfp4): x, transformers' dequantization of them, is the reference, but for
            # code 8, -0.0 in transformers' FP4_VALUES (integrations/mxfp4.py) and +0.0 in
            # ggml's kvalues_mxfp4 (ggml-common.h): ggml's dequantization, as for every type
            return x.detach().to(torch.float32) + 0.0
        kv_b = self.layout.get("mla") and re.fullmatch(
            r"model\.layers\.(\d+)\.self_attn\.kv_b_proj\.weight", hf_name)
        if kv_b:
            # per head, the nope rows transposed (attn_k_b) and the value rows (attn_v_b), each
            # in its own type (deepseek.py, DeepseekV2Model.modify_tensors; base.py stores F16
            # where a row is no whole number of blocks)
            k_b, v_b = (self.tensors[f"blk.{kv_b[1]}.attn_{p}_b.weight"] for p in "kv")
            k, v = _split_kv_b(x.detach().to(torch.float32), k_b.shape[0], k_b.shape[-1])
            k = _through(k, k_b.tensor_type).transpose(1, 2)
            return torch.cat([k, _through(v, v_b.tensor_type)], 1).reshape(x.shape)
        y = self.to_file(hf_name, x)
        return self.from_file(hf_name, _through(y, qtype).numpy())


def _split_kv_b(value, heads, nope):
    """MLA's kv_b_proj (heads·(nope + v), kv_lora_rank) as the converter splits it (deepseek.py,
    DeepseekV2Model.modify_tensors): per head its nope rows transposed (attn_k_b) and its value
    rows (attn_v_b)."""
    h = value.reshape(heads, -1, value.shape[-1])
    return h[:, :nope].transpose(1, 2), h[:, nope:]


def _through(x, qtype):
    """x (torch or numpy) stored in qtype and read back by gguf-py, as float32 torch."""
    y = np.ascontiguousarray(x, dtype=np.float32)
    if qtype != gguf.GGMLQuantizationType.F32:
        y = quants.dequantize(quants.quantize(y, qtype), qtype).reshape(y.shape)
    return torch.from_numpy(np.ascontiguousarray(y))


def _logits(model, ids):
    """The logits of `ids`; an encoder-decoder's encoder reads them, its decoder them shifted
    right after its start token (modeling_t5.py, T5PreTrainedModel._shift_right)."""
    if model.config.is_encoder_decoder:
        return model(ids, decoder_input_ids=model._shift_right(ids)).logits
    return model(ids).logits


class Case:
    """One (architecture, outtype): the converted file, the reference (the original model
    carrying the reference weights, and those weights by name), the prompt, and what the
    reference model answers to it. `unpadded`: of the original without a padding token (f32)."""

    def __init__(self, originals, arch, outtype, unpadded=False):
        self.arch, self.outtype = arch, outtype
        self.path = originals.converted(arch, "unpadded" if unpadded else outtype)
        self.original = originals.original(arch, unpadded)
        self.model = _load_model(self.original, arch)
        state = self.model.state_dict()
        self.ref = Reference(self.path, arch, self.model.config)
        # a row whose converter folds config values into the weights: the reference weights
        # are the folded ones, the reference model the original (it applies those values)
        fold = ARCHS[arch].get("fold", {}).get("weights")
        if fold:
            state = {k: fold(self.model.config, k, v.detach().to(torch.float32).clone())
                     for k, v in state.items()}
        self.expected = {k: self.ref.expected(k, v, outtype) for k, v in state.items()}
        if not fold and any(not torch.equal(self.expected[k], v) for k, v in state.items()):
            self.model.load_state_dict(self.expected)
        self.tok, _ = originals.tokenizer(ARCHS[arch]["tokenizer"], unpadded)
        self.ids = torch.tensor([self.tok.encode(PROMPT)])
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None \
            else self.tok.eos_token_id
        self.generate_kwargs = dict(do_sample=False, max_new_tokens=N_NEW,
                                    min_new_tokens=N_NEW,
                                    attention_mask=torch.ones_like(self.ids), pad_token_id=pad)
        with torch.no_grad():
            self.logits = _logits(self.model, self.ids)
        self.generated = self.model.generate(self.ids, **self.generate_kwargs)


@pytest.fixture(scope="module", params=CASES, ids=[f"{a}-{t}" for a, t in CASES])
def case(request, originals):
    """Module-scoped, so that pytest runs a case's tests together and builds it once."""
    return Case(originals, *request.param)


def _sorted_rows(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    rows = a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(1, -1)
    return np.sort(rows.view(np.dtype((np.void, rows.shape[1] * 4))).ravel())


# ---------------------------------------------------------------------------------------------
# The oracle's own checks (no ggufs)


def test_reader_agrees_with_gguf_py(originals):
    """read_gguf gives what gguf-py's GGUFReader gives, on a converted file of each type."""
    for outtype in ARCHS["llama"]["outtypes"]:
        path = originals.converted("llama", outtype)
        meta, tensors = read_gguf(path)
        reader = gguf.GGUFReader(str(path))
        fields = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
        assert meta == fields
        assert list(tensors) == [t.name for t in reader.tensors]
        for t in reader.tensors:
            ours = tensors[t.name]
            assert ours.tensor_type == t.tensor_type
            assert ours.data.tobytes() == np.asarray(t.data).tobytes()
            assert ours.shape == tuple(reversed([int(d) for d in t.shape]))


def _tile_v_heads(value, dim, nk, d):
    """Qwen3.5's value heads along axis `dim` (nv heads of d, grouped by key head) in the
    converter's tiled order: the axis viewed as (nk, nv / nk, d), its first two axes swapped
    (qwen.py, _LinearAttentionVReorderBase._reorder_v_heads)."""
    shape = list(value.shape)
    split = value.reshape(*shape[:dim], nk, -1, d, *shape[dim + 1:])
    return split.transpose(dim, dim + 1).reshape(shape)


def _file_views(expected, gpt_oss=False, dense_shared=False, mla=None, qkvz=None, v_tiles=None):
    """(Hugging Face name, name gguf-py's name map knows or the GGUF tensor's own, value): each
    tensor; the halves of a fused experts gate_up_proj (transformers 5) and of GraniteMoe's
    input_linear and its shared expert's (granite.py, GraniteMoeModel.modify_tensors; without
    experts, `dense_shared`, the shared MLP is written as the plain ffn); per-expert tensors
    stacked (transformers 4), as the converter writes them; with `mla` (the config), MLA's
    kv_b_proj as attn_k_b and attn_v_b; `qkvz` (key heads, key head size, value rows a key
    head): qwen3next's in_proj_qkvz as attn_qkv and attn_gate (qwen.py,
    Qwen3NextModel.modify_tensors); `v_tiles` (key heads, key head size, value head size):
    Qwen3.5's value heads tiled (qwen.py, _LinearAttentionVReorderBase.modify_tensors: the v
    rows of in_proj_qkv and the v channels of conv1d, after the q and k ones; in_proj_z's,
    in_proj_a's and in_proj_b's rows; A_log and dt_bias; out_proj's columns)."""
    per_expert, altup = {}, {}
    for name, value in expected.items():
        if v_tiles and ".linear_attn." in name:
            nk, hk, hv = v_tiles
            if name.endswith((".in_proj_qkv.weight", ".conv1d.weight")):
                value = torch.cat([value[:2 * nk * hk], _tile_v_heads(value[2 * nk * hk:], 0, nk,
                                                                      hv)])
            elif name.endswith(".in_proj_z.weight"):
                value = _tile_v_heads(value, 0, nk, hv)
            elif name.endswith((".in_proj_a.weight", ".in_proj_b.weight", ".A_log", ".dt_bias")):
                value = _tile_v_heads(value, 0, nk, 1)
            elif name.endswith(".out_proj.weight"):
                value = _tile_v_heads(value, 1, nk, hv)
        if qkvz and (m := re.fullmatch(r"model\.layers\.(\d+)\.linear_attn\.in_proj_qkvz\.weight",
                                       name)):
            heads, nk, nv = qkvz
            q, k, v, z = value.reshape(heads, -1, value.shape[-1]).split([nk, nk, nv, nv], dim=1)
            qkv = torch.cat([x.reshape(-1, value.shape[-1]) for x in (q, k, v)])
            yield name, f"blk.{m[1]}.attn_qkv.weight", qkv
            yield name, f"blk.{m[1]}.attn_gate.weight", z.reshape(-1, value.shape[-1])
            continue
        # gpt-oss's experts (E, H, 2F), (E, F, H) and biases: transposed, and gate_up's even
        # columns the gate, its odd the up (gpt_oss.py, GptOssModel.modify_tensors)
        oss = gpt_oss and re.fullmatch(
            r"model\.layers\.(\d+)\.mlp\.experts\.(gate_up|down)_proj(_bias)?", name)
        if oss:
            kind = ".bias" if oss[3] else ".weight"
            v = value if oss[3] else value.transpose(-1, -2)
            if oss[2] == "down":
                yield name, f"blk.{oss[1]}.ffn_down_exps{kind}", v
            else:
                yield name, f"blk.{oss[1]}.ffn_gate_exps{kind}", v[:, ::2]
                yield name, f"blk.{oss[1]}.ffn_up_exps{kind}", v[:, 1::2]
            continue
        # MLA's kv_b_proj, `mla` the config: split as the converter does, by the config's
        # num_key_value_heads
        kv_b = mla is not None and re.fullmatch(
            r"model\.layers\.(\d+)\.self_attn\.kv_b_proj\.weight", name)
        if kv_b:
            k, v = _split_kv_b(value, mla.num_key_value_heads, mla.qk_nope_head_dim)
            yield name, f"blk.{kv_b[1]}.attn_k_b.weight", k
            yield name, f"blk.{kv_b[1]}.attn_v_b.weight", v
            continue
        granite = re.fullmatch(r"model\.layers\.(\d+)\.(block_sparse_moe|shared_mlp)\."
                               r"(input_linear\.weight|experts\.gate_up_proj)", name)
        if granite:
            half = value.shape[-2] // 2
            kind = "_exps" if granite[2] == "block_sparse_moe" else \
                "" if dense_shared else "_shexp"
            yield name, f"blk.{granite[1]}.ffn_gate{kind}.weight", value[..., :half, :]
            yield name, f"blk.{granite[1]}.ffn_up{kind}.weight", value[..., half:, :]
        elif dense_shared and (m := re.fullmatch(
                r"model\.layers\.(\d+)\.shared_mlp\.output_linear\.weight", name)):
            yield name, f"blk.{m[1]}.ffn_down.weight", value
        elif m := re.fullmatch(r"(model\.altup_(?:unembed_)?projections)\.(\d+)\.weight", name):
            # Gemma 3n's AltUp projections, stacked (gemma.py, Gemma3NModel.modify_tensors)
            altup.setdefault(m[1], {})[int(m[2])] = (name, value)
        elif m := re.fullmatch(r"(.*\.experts)\.(\d+)\.(\w+)\.weight", name):
            per_expert.setdefault((m[1], m[3]), {})[int(m[2])] = (name, value)
        elif m := re.fullmatch(r"(.*\.experts)\.gate_up_proj", name):
            half = value.shape[1] // 2
            yield name, m[1] + ".gate_proj", value[:, :half]
            yield name, m[1] + ".up_proj", value[:, half:]
        else:
            yield name, name, value
    for prefix, matrices in altup.items():
        yield ([matrices[i][0] for i in sorted(matrices)], f"{prefix}.weight",
               torch.stack([matrices[i][1] for i in sorted(matrices)]))
    for (prefix, proj), experts in per_expert.items():
        names = [experts[e][0] for e in sorted(experts)]
        yield names, f"{prefix}.{proj}", torch.stack([experts[e][1] for e in sorted(experts)])


def test_reference_is_the_file(case):
    """Every Hugging Face tensor is in the converter's file (under the name gguf-py's name map
    gives, the converter's own) and holds there, in the file's layout and dequantized by gguf-py,
    the reference values, row for row up to an order of rows (the converter's q/k permutation).
    Only a tied output is absent."""
    ref, expected = case.ref, case.expected
    covered = set()
    layout = ARCHS[case.arch].get("file", {})
    c, qkvz, v_tiles = case.model.config, None, None
    if layout.get("qkvz"):
        qkvz = (c.linear_num_key_heads, c.linear_key_head_dim, c.linear_num_value_heads
                // c.linear_num_key_heads * c.linear_value_head_dim)
    if layout.get("v_tiles") and c.linear_num_key_heads != c.linear_num_value_heads:
        v_tiles = (c.linear_num_key_heads, c.linear_key_head_dim, c.linear_value_head_dim)
    for names, map_name, value in _file_views(expected, layout.get("gpt_oss", False),
                                              layout.get("dense_shared", False),
                                              c if layout.get("mla") else None, qkvz, v_tiles):
        t = ref.gguf_tensor(map_name)
        if t is None:
            continue
        first = names[0] if isinstance(names, list) else names
        want = ref.to_file(first, value)
        assert t.shape == want.shape or int(np.prod(t.shape)) == want.size, (map_name, t.shape)
        want = want.reshape(t.shape)  # the converter's squeeze and reshapes (mamba.py)
        assert np.array_equal(_sorted_rows(t.values()), _sorted_rows(want)), map_name
        covered.update(names if isinstance(names, list) else [names])
    missing = set(expected) - covered
    tied = ARCHS[case.arch]["config"].get("tie_word_embeddings", False)
    assert missing <= ({"lm_head.weight"} if tied else set()), f"not found in the file: {missing}"


# ---------------------------------------------------------------------------------------------
# The checks of hf/


def _file_names(folder):
    """The tensor names of a model folder's safetensors files, sorted."""
    names = []
    for f in sorted(pathlib.Path(folder).glob("*.safetensors")):
        with safetensors.safe_open(str(f), "np") as st:
            names.extend(st.keys())
    return sorted(names)


def test_state_dict(case, mount, request):
    _known_gap(request, case.arch, case.outtype, "state_dict")
    expected = case.expected
    m = mount(case.path)
    _same_files_in_process(m, case.path)
    # hf/'s files name each tensor as the original's save_pretrained did (from_pretrained would
    # take some other names too, through transformers' checkpoint conversions)
    # (gpt-oss-mxfp4's original holds the experts as MXFP4 blocks and scales; hf/ the
    # dequantized model transformers loads from them, hf-mxfp4/ the blocks)
    if not ARCHS[case.arch].get("mxfp4"):
        assert _file_names(_hf(m, case.arch)) == _file_names(case.original), "hf/'s names"
    got = _load_model(_hf(m, case.arch), case.arch, hf=True).state_dict()
    in_process = _in_process(case.path).state_dict()
    assert list(in_process) == list(got), "ggufs.transformers: not the mount's names"
    assert all(torch.equal(in_process[k], v) for k, v in got.items()), "ggufs.transformers"
    assert sorted(got) == sorted(expected), (
        f"names: missing {sorted(set(expected) - set(got))}, "
        f"extra {sorted(set(got) - set(expected))}"
    )
    bad_shape = {k: (tuple(got[k].shape), tuple(v.shape)) for k, v in expected.items()
                 if got[k].shape != v.shape}
    assert not bad_shape, f"shapes (hf/, original): {bad_shape}"
    neg_exp = ARCHS[case.arch].get("file", {}).get("neg_exp", ())
    bounded = {k for k in expected if neg_exp and k.endswith(neg_exp)}
    bad = {k: float((got[k] - v).abs().max()) for k, v in expected.items()
           if k not in bounded and not torch.equal(got[k], v)}
    assert not bad, f"values differ (max abs diff): {bad}"
    far = {k: excess for k in bounded if (excess := _beyond_a_log_bound(got[k], expected[k]))}
    assert not far, f"A_log beyond A_LOG_BOUND (the largest |diff|, the bound there): {far}"


# hf/'s A_log against the original's. The converter stores A = -exp(A_log), torch.exp on float32
# (mamba.py, MambaModel.modify_tensors; its CPU kernel is SLEEF's Sleef_expf*_u10, ATen's
# vec256/vec512_float.h, documented "max error 1.0 ULP" by sleef.org; glibc's expf, for a scalar
# tail, 1 ulp on x86_64 in glibc's libm-test-ulps). ggufs gives log(-A), std::log on float32
# (content.cpp, add_to): glibc's logf, 1 ulp (libm-test-ulps, "log": float: 1). So, for A_log = x
# with exp(x) a normal float32 (x > -87.3):
#   - the stored e = exp(x)(1 + d) with |d| <= ulp(exp(x)) / exp(x) <= 2^-23: that ulp is the
#     float32 rounding of the stored A too, which GGUF's F32 keeps as it is;
#   - log(e) = x + log(1 + d): at most -log(1 - 2^-23) from x, an absolute error whatever x is
#     (near x = 0, where exp maps many floats to one, that is up to 2^23 ulps of x);
#   - logf returns a float32 within 1 ulp of log(e), whose magnitude is at most |x| plus that.
# A_LOG_BOUND = (absolute, ulps): |hf/ - original| <= absolute + ulps * ulp(max(|hf/|, |original|)
# + absolute).
A_LOG_BOUND = (-math.log1p(-2.0**-23), 1)


def _beyond_a_log_bound(got, want):
    """(|got - want|, its bound) at the element that most exceeds A_LOG_BOUND, or None."""
    g, w = got.to(torch.float64), want.to(torch.float64)
    absolute, ulps = A_LOG_BOUND
    mag = torch.maximum(g.abs(), w.abs()) + absolute
    # ulp of float32 at mag (frexp: mag = m * 2^e, m in [0.5, 1)), scaled up so a mag just below a
    # power of two counts the binade above; 2^-149 below the normal range
    _, e = torch.frexp(mag * (1 + 2.0**-22))
    ulp = torch.clamp(torch.pow(2.0, (e - 24).to(torch.float64)), min=2.0**-149)
    diff, bound = (g - w).abs(), absolute + ulps * ulp
    i = int(torch.argmax(diff - bound)) if got.numel() else 0
    if not got.numel() or diff.flatten()[i] <= bound.flatten()[i]:
        return None
    return float(diff.flatten()[i]), float(bound.flatten()[i])


def test_logits(case, mount, request):
    """hf/'s logits, from the mount and from the Python package's in-process from_pretrained of
    the file itself (ggufs.transformers), against the original's."""
    _known_gap(request, case.arch, case.outtype, "logits")
    m = mount(case.path)
    in_process = _in_process(case.path)
    want = case.logits
    for model, where in ((_load_model(_hf(m, case.arch), case.arch, hf=True), "mount"),
                         (in_process, "ggufs.transformers")):
        with torch.no_grad():
            got = _logits(model, case.ids)
        assert got.shape == want.shape, where
        diff = float((got - want).abs().max())
        if (atol := ARCHS[case.arch].get("logits_atol")) is not None:  # a folded row: its bound
            assert diff <= atol, f"{where}: max abs diff {diff} (the row's bound {atol})"
        else:
            assert torch.equal(got, want), f"{where}: max abs diff {diff}"


def test_generate(case, mount, request):
    _known_gap(request, case.arch, case.outtype, "generate")
    m = mount(case.path)
    model = _load_model(_hf(m, case.arch), case.arch, hf=True)
    got = model.generate(case.ids, **case.generate_kwargs)
    want = case.generated
    # an encoder-decoder's answer: its decoder start token, then the new ones
    prompt = 1 if model.config.is_encoder_decoder else case.ids.shape[1]
    assert want.shape[1] == prompt + N_NEW
    i = _first_difference(got[0].tolist(), want[0].tolist()) - prompt
    assert got.tolist() == want.tolist(), f"first difference at new token {i} of {N_NEW}"
    # The Python package's in-process model of the file itself: the same tokens.
    assert _in_process(case.path).generate(case.ids, **case.generate_kwargs).tolist() == \
        want.tolist(), "ggufs.transformers"


@pytest.fixture(scope="module", params=list(ARCHS))
def unpadded_case(request, originals):
    """A row's f32 case of a file holding no padding token: its unpadded original's (UNPADDED),
    else its own (its tokenizer names none; or Nemotron's and T5's, which keep theirs)."""
    return Case(originals, request.param, "f32", unpadded=request.param in UNPADDED)


def test_generate_token_zero(unpadded_case, mount, request):
    """generate as the model's own configs direct it, on a prompt holding token 0 ("!" in GPT-2's
    vocabulary) and the config class's default pad id where that names another token: no
    attention_mask nor pad_token_id given, generate masks out the prompt's tokens equal to its
    pad id (utils.py, _prepare_attention_mask_for_generation), so that a pad id the original
    lacks changes the answer. 20 greedy tokens, equal to the original's, and the logits of each
    step (as test_logits: equal, or within a folded row's bound; a tiny random model may repeat
    the prompt's last token whatever it attends to)."""
    case = unpadded_case
    _known_gap(request, case.arch, "f32", "generate_token_zero")
    if case.arch in UNPADDED:  # the variant's point: the converter wrote no padding token
        meta, _ = read_gguf(case.path)
        assert "tokenizer.ggml.padding_token_id" not in meta
    ids = case.ids[0].tolist()
    vocab = case.model.get_input_embeddings().num_embeddings
    default_pad = type(case.model.config)().pad_token_id  # transformers' class default
    inserted = [0] + ([default_pad] if isinstance(default_pad, int) and 0 < default_pad < vocab
                      else [])
    prompt = torch.tensor([ids[:1] + inserted + ids[1:]])  # after a leading bos
    kwargs = dict(do_sample=False, max_new_tokens=N_NEW, min_new_tokens=N_NEW,
                  return_dict_in_generate=True, output_logits=True)
    want = case.model.generate(prompt, **kwargs)
    m = mount(case.path)
    got = _load_model(_hf(m, case.arch), case.arch, hf=True).generate(prompt, **kwargs)
    a, b = got.sequences[0].tolist(), want.sequences[0].tolist()
    assert a == b, f"first difference at token {_first_difference(a, b)} (prompt {prompt})"
    assert len(got.logits) == len(want.logits) == N_NEW
    diff = max(float((g - w).abs().max()) for g, w in zip(got.logits, want.logits))
    atol = max(ARCHS[case.arch].get("logits_atol") or 0.0, TOKEN_ZERO_LOGITS_ATOL)
    assert diff <= atol, f"logits: max abs diff {diff} (bound {atol})"


def _first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _assert_encodes_as(want, got):
    """The special tokens, and the ids of TEXT with and without them and their decoding, of
    tokenizer `got` are those of the original `want`."""
    specials = ("bos_token", "eos_token", "unk_token", "pad_token")
    assert {k: getattr(got, k) for k in specials} == {k: getattr(want, k) for k in specials}
    for special in (True, False):
        a = want.encode(TEXT, add_special_tokens=special)
        b = got.encode(TEXT, add_special_tokens=special)
        i = _first_difference(a, b)
        assert a == b, (
            f"add_special_tokens={special}: first difference at {i}: original "
            f"{want.convert_ids_to_tokens(a[i:i + 5])} hf/ {got.convert_ids_to_tokens(b[i:i + 5])}"
        )
        assert got.decode(b) == want.decode(a)


@pytest.mark.parametrize("arch", list(ARCHS))
def test_tokenizer(originals, mount, request, arch):
    _known_gap(request, arch, "f32", "tokenizer")
    want = AutoTokenizer.from_pretrained(str(originals.original(arch)))
    m = mount(originals.converted(arch, "f32"))
    got = AutoTokenizer.from_pretrained(str(_hf(m, arch)))
    _assert_encodes_as(want, got)
    assert sorted(got.all_special_tokens) == sorted(want.all_special_tokens)
    assert len(got) == len(want)


# ---------------------------------------------------------------------------------------------
# A Unigram tokenizer (tokenizer.ggml.model "t5", llama.cpp's UGM): no architecture of ARCHS has
# one, so the original is T5's tokenizer, over a SentencePiece Unigram model trained here with
# nmt_nfkc's normalization (its precompiled charsmap goes into the file), and the file is the
# converter's --vocab-only output for a tiny T5 (conversion/t5.py, T5Model.set_vocab): hf/ then
# holds the tokenizer files alone.


def _t5_vocab(root):
    """(the original's folder, the converter's vocabulary-only file)."""
    out = root / "t5-vocab.gguf"
    src = root / "t5-vocab"  # not "t5": the folder of ARCHS' t5 original (Originals.original)
    if out.is_file():
        return src, out
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
    pytest.importorskip("google.protobuf", reason="protobuf is not installed: transformers "
                        "needs it to read a SentencePiece model")
    cls = _tok_class("T5TokenizerFast")
    shutil.rmtree(src, ignore_errors=True)
    (root / "t5-sp").mkdir(exist_ok=True)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(_corpus()), model_prefix=str(root / "t5-sp" / "sp"),
        vocab_size=1000, model_type="unigram", normalization_rule_name="nmt_nfkc",
        character_coverage=0.9995, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, num_threads=1,
        minloglevel=2)
    shutil.copy(root / "t5-sp" / "sp.model", root / "t5-sp" / "spiece.model")
    tok = cls.from_pretrained(str(root / "t5-sp"), extra_ids=0)
    config = transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64,
                                   num_layers=1, num_heads=4, decoder_start_token_id=0)
    torch.manual_seed(0)
    transformers.T5ForConditionalGeneration(config).save_pretrained(str(src))
    tok.save_pretrained(str(src))
    shutil.copy(root / "t5-sp" / "sp.model", src / "spiece.model")
    status, log = llama_converter.run([src, "--vocab-only", "--outfile", out],
                                      out.with_suffix(".log"))
    assert status == 0 and out.is_file(), log[-6000:]
    return src, out


def _converted_t5(originals, name, cls, config_cls, **config):
    """The converter's f32 file of a tiny `cls` (an encoder-decoder of T5's kind) with T5's
    tokenizer."""
    src = originals.root / name
    out = originals.root / f"{name}.gguf"
    if not out.is_file():
        tok, sp_model = originals.tokenizer("spm-t5")
        config = getattr(transformers, config_cls)(
            vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
            decoder_start_token_id=0, **config)
        torch.manual_seed(0)
        getattr(transformers, cls)(config).save_pretrained(str(src))
        tok.save_pretrained(str(src))
        shutil.copy(sp_model, src / "spiece.model")
        status, log = llama_converter.run([src, "--outtype", "f32", "--outfile", out],
                                          out.with_suffix(".log"))
        assert status == 0 and out.is_file(), log[-6000:]
    return out


def test_relu_t5_gets_no_hf(originals, mount):
    """The original T5's ReLU MLP (DenseReluDense.wi, no ffn_gate in the file) is not the t5
    row's gated one: no hf/, and the reason."""
    out = _converted_t5(originals, "t5-relu", "T5ForConditionalGeneration", "T5Config",
                        feed_forward_proj="relu")
    _, tensors = read_gguf(out)
    assert "enc.blk.0.ffn_up.weight" in tensors and "enc.blk.0.ffn_gate.weight" not in tensors
    m = mount(out)
    assert not (m / "hf").exists()
    assert b"ReLU MLP" in os.getxattr(m.path, "user.ggufs.hf")


def test_unigram_tokenizer(originals, mount):
    """The converter's vocabulary-only file of a T5 tokenizer: hf/'s tokenizer encodes as the
    original (its special tokens, the ids of the multilingual text with and without them, the
    decoding)."""
    src, path = _t5_vocab(originals.root)
    meta, tensors = read_gguf(path)
    assert meta["tokenizer.ggml.model"] == "t5" and "tokenizer.ggml.precompiled_charsmap" in meta
    assert not tensors
    want = AutoTokenizer.from_pretrained(str(src))
    got = AutoTokenizer.from_pretrained(str(_hf(mount(path), "t5")))
    _assert_encodes_as(want, got)
    assert len(got) == len(want)


def _rope_theta(config):
    if getattr(config, "rope_theta", None) is not None:
        return config.rope_theta
    params = getattr(config, "rope_parameters", None) or {}
    return params.get("full_attention", params).get("rope_theta")


def _same(a, b):
    """Equal, floats as float32 (GGUF stores them so), recursively."""
    if isinstance(a, float) or isinstance(b, float):
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        return numbers and (np.float32(a) == np.float32(b) or (math.isnan(a) and math.isnan(b)))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _compare(want, got, what):
    """Every field of the original's equal in hf/'s; fields only hf/ has are reported as a
    warning (they change nothing transformers builds)."""
    keys = set(want) - CONFIG_IGNORED
    diff = {k: (want[k], got.get(k, "<absent>")) for k in sorted(keys)
            if not _same(want[k], got.get(k))}
    extra = sorted(set(got) - set(want) - CONFIG_IGNORED)
    if extra:
        warnings.warn(f"{what}: hf/ has fields the original lacks: "
                      f"{ {k: got[k] for k in extra} }")
    assert not diff, f"{what} fields differ (original, hf/): {diff}"


# Every row's f32 case, and its unpadded variant's (UNPADDED)
VARIANTS = [(arch, False) for arch in ARCHS] + [(arch, True) for arch in UNPADDED]
VARIANT_IDS = [f"{arch}-unpadded" if unpadded else arch for arch, unpadded in VARIANTS]


@pytest.mark.parametrize("arch,unpadded", VARIANTS, ids=VARIANT_IDS)
def test_config(originals, mount, request, arch, unpadded):
    _known_gap(request, arch, "unpadded" if unpadded else "f32", "config")
    want = AutoConfig.from_pretrained(str(originals.original(arch, unpadded)))
    m = mount(originals.converted(arch, "unpadded" if unpadded else "f32"))
    got = AutoConfig.from_pretrained(str(_hf(m, arch)))
    row = ARCHS[arch]
    assert got.architectures == [row.get("hub_class") or row.get("hf_class", row["cls"])]
    if "hf_class" not in row:
        assert type(got) is type(want)
    assert _same(_rope_theta(got), _rope_theta(want)), "rope_theta"
    not_carried = row.get("not_carried", ())
    expected = {k: v for k, v in want.to_dict().items() if k not in not_carried}
    expected.update(row.get("fold", {}).get("config", {}))  # folded into the weights
    if "head_dim" in expected and expected["head_dim"] is None:
        # MistralConfig's head_dim None stands for hidden_size // num_attention_heads
        # (modeling_mistral.py, MistralAttention), which llama.cpp's rope.dimension_count holds.
        expected["head_dim"] = expected["hidden_size"] // expected["num_attention_heads"]
    _compare(expected, got.to_dict(), "config")


@pytest.mark.parametrize("arch,unpadded", VARIANTS, ids=VARIANT_IDS)
def test_generation_config(originals, mount, request, arch, unpadded):
    _known_gap(request, arch, "unpadded" if unpadded else "f32", "generation_config")
    want = GenerationConfig.from_pretrained(str(originals.original(arch, unpadded))).to_dict()
    m = mount(originals.converted(arch, "unpadded" if unpadded else "f32"))
    got = GenerationConfig.from_pretrained(str(_hf(m, arch))).to_dict()
    _compare(want, got, "generation_config")


MLX_PYTHON = pathlib.Path(
    os.environ.get("GGUFS_MLX_PYTHON", "/var/cache/ggufs-tests/venv-mlx/bin/python"))
# test_mlx's bound where the original holds a Mamba-style A_log (stored as -exp(A_log), within
# A_LOG_BOUND, not bit-exact): jamba's logits differ by 3.0e-7 (measured).
MLX_A_LOG_ATOL = 1e-6
# test_mlx's known gaps of mlx-lm 0.32.2 itself: the original folder fails in it as mlx/ does, or
# it lacks a field transformers' config class does not write (mlx/ writes it).
MLX_XFAIL = {
    "gemma3": "mlx-lm's gemma3_text.py reads the cache of layer sliding_window_pattern - 1 (6), "
              "which the 2-layer test model lacks (IndexError; the original alike)",
    "mixtral": "mlx-lm's mixtral.py takes head_dim as hidden_size / num_attention_heads; the "
               "test model's head_dim differs (the original alike)",
    "gptneox": "mlx-lm's gpt_neox.py sizes the MLP 4 x hidden_size, not intermediate_size (the "
               "original alike)",
    "granitemoehybrid-dense": "mlx-lm's granitemoehybrid.py sizes a dense model's MLP otherwise "
                              "than GraniteMoeHybridConfig (the original alike)",
    "deepseek_v3": "mlx-lm's deepseek_v3.py has no tied lm_head; the test model ties it (the "
                   "original alike)",
    "qwen3next": "mlx-lm's qwen3_next.py places full attention by full_attention_interval, not "
                 "layer_types (the original alike)",
    "falcon_h1": "mlx-lm's falcon_h1.py folds key_multiplier into key_proj.weight, a name "
                 "transformers' checkpoints lack (k_proj.weight gets attention_in_multiplier "
                 "alone), so it runs the original 0.0041 off torch's logits (of 0.04); mlx/, its "
                 "multipliers folded by the converter, is within 2.2e-8 of torch's (measured)",
}

# test_mlx's rows where mlx-lm 0.32.2 cannot load the original (a field transformers' config
# class does not write, or reads its checkpoint wrong) while it loads mlx/: mlx/ must load, and
# the comparison is an xfail.
MLX_REFERENCE_FAILS = {
    "exaone4": "mlx-lm's exaone4.py reads sliding_window_pattern as a string ('LLLG', EXAONE 4's "
               "own config.json files): it cannot load the original's int (mlx/ writes the string)",
    "exaone4_global": "mlx-lm's exaone4.py requires head_dim, which Exaone4Config does not "
                      "write: it cannot load the original (mlx/ writes it)",
    "lfm2": "mlx-lm's lfm2.py requires block_dim, which Lfm2Config does not have: it cannot load "
            "the original (mlx/ writes the Hub configs' hidden size)",
    "gpt-oss": "mlx-lm's gpt_oss.py takes the Hub's experts (gate_up_proj's gate and up rows "
               "interleaved), not transformers 4.57.6's save of them (gate_up_proj [E, H, 2F]): "
               "it cannot load the original (mlx/ serves the experts as its sanitize leaves them)",
}


def _mlx_reference(original, root, arch):
    """The original folder with config.json as the class's to_dict() (every field, defaults
    included; save_pretrained leaves out those equal to PretrainedConfig's, tie_word_embeddings
    among them, which mlx-lm's ModelArgs require), and the row's mlx_reference fields (a None the
    class reads as a number, written as that number): the same model, the files linked."""
    root.mkdir()
    for f in original.iterdir():
        if f.name != "config.json":
            (root / f.name).symlink_to(f)
    config = AutoConfig.from_pretrained(str(original)).to_dict()
    config.update(ARCHS[arch].get("mlx_reference", {}))
    (root / "config.json").write_text(json.dumps(config, indent=2))
    return root


@pytest.mark.parametrize("arch", list(ARCHS))
def test_mlx(originals, mount, request, tmp_path, arch):
    """mlx/ as mlx-lm 0.32.2 takes it: where ggufs offers mlx/, mlx_lm.load of it gives the logits
    of mlx_lm.load of the original folder (F32: equal; a folded row within its logits_atol);
    where it does not, mlx-lm cannot load the original either, and the mount says why
    (user.ggufs.mlx). mlx-lm runs in its own venv (tests/python/mlx_logits.py)."""
    if not MLX_PYTHON.is_file():
        pytest.skip(f"no MLX venv ({MLX_PYTHON}; scripts/install-deps --tests, or GGUFS_MLX_PYTHON)")
    if transformers.__version__.split(".")[0] != "4" and not ARCHS[arch].get("mlx_under_5"):
        pytest.skip("mlx-lm 0.32.2's models read transformers 4's checkpoints (per-expert names)")
    if arch in MLX_XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=MLX_XFAIL[arch]))
    original = _mlx_reference(originals.original(arch), tmp_path / "original", arch)
    tok, _ = originals.tokenizer(ARCHS[arch]["tokenizer"])
    converted = originals.converted(arch, "f32")
    m = mount(converted)
    offered = (m / "mlx").is_dir()
    # With the file too: the Python package's ggufs.mlx.load of it against mlx_lm.load of mlx/.
    r = subprocess.run([str(MLX_PYTHON), str(pathlib.Path(__file__).with_name("mlx_logits.py")),
                        str(original), str(m / "mlx") if offered else "-",
                        json.dumps(tok.encode(PROMPT)), str(converted)],
                       capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PYTHONPATH=os.environ.get("GGUFS_PYTHONPATH") or str(
                           pathlib.Path(__file__).resolve().parents[2] / "build" / "python")))
    assert r.returncode == 0, r.stderr[-2000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])
    if not offered:
        reason = os.getxattr(str(m.path), "user.ggufs.mlx").decode()
        assert "mlx-lm" in reason, reason
        assert result["original_error"], f"mlx/ is not offered ({reason}), but mlx-lm loads " \
            "the original"
        return
    assert result["mlx_error"] is None, f"mlx-lm fails on mlx/: {result['mlx_error']}"
    assert result["ggufs_error"] is None, f"ggufs.mlx.load fails: {result['ggufs_error']}"
    assert result["ggufs_equal"], "ggufs.mlx.load: not mlx_lm.load(MNT/mlx)'s logits and tokens"
    if arch in MLX_REFERENCE_FAILS:
        assert result["original_error"], "mlx-lm loads the original now: compare (remove the " \
            "row from MLX_REFERENCE_FAILS)"
        assert result["mlx_error"] is None, f"mlx-lm fails on mlx/: {result['mlx_error']}"
        pytest.xfail(MLX_REFERENCE_FAILS[arch])
    assert result["original_error"] is None, f"mlx-lm fails on the original: {result}"
    assert result["mlx_error"] is None, f"mlx-lm fails on mlx/: {result['mlx_error']}"
    assert result["shape_equal"], result
    with safetensors.safe_open(str(original / "model.safetensors"), "np") as f:
        a_log = any(k.endswith("A_log") for k in f.keys())
    atol = ARCHS[arch].get("logits_atol")  # a folded row: its bound
    if a_log:
        atol = max(atol or 0.0, MLX_A_LOG_ATOL)
    if atol is not None:
        assert result["max_diff"] <= atol, f"max abs diff {result['max_diff']} (bound {atol})"
    else:
        assert result["equal"], f"max abs diff {result['max_diff']}"


@pytest.mark.parametrize("arch", [a for a, t in CASES if t == "q8_0"])
def test_mlx_quantized(originals, mount, tmp_path, arch):
    """mlx/ of llama.cpp's own Q8_0 conversion (convert_hf_to_gguf.py --outtype q8_0): its
    matrices kept as MLX's 8-bit form (expert stacks as mlx-lm's switch_mlp), and mlx-lm's logits
    of it within 1e-4 (relative to the largest) of mlx-lm's of hf/ in float32 from the same mount
    (hf/'s files under mlx/'s config without its quantization): the same ggml values, only the
    order of float32 sums differs."""
    if not MLX_PYTHON.is_file():
        pytest.skip(f"no MLX venv ({MLX_PYTHON}; scripts/install-deps --tests, or GGUFS_MLX_PYTHON)")
    if transformers.__version__.split(".")[0] != "4":
        pytest.skip("mlx-lm 0.32.2's models read transformers 4's checkpoints (per-expert names)")
    if arch in MLX_XFAIL or arch in MLX_REFERENCE_FAILS:
        pytest.skip(f"test_mlx's known gap of mlx-lm: {arch}")
    m = mount(originals.converted(arch, "q8_0"))
    if not (m / "mlx").is_dir():
        pytest.skip(os.getxattr(str(m.path), "user.ggufs.mlx").decode())
    config = json.loads((m / "mlx" / "config.json").read_text())
    quantization = config.pop("quantization")
    config.pop("quantization_config")
    assert (quantization["bits"], quantization["group_size"]) == (8, 32), quantization
    floats = tmp_path / "float"
    floats.mkdir()
    for f in (m / "hf").iterdir():
        if f.name != "config.json":
            (floats / f.name).symlink_to(f)
    (floats / "config.json").write_text(json.dumps(config))
    tok, _ = originals.tokenizer(ARCHS[arch]["tokenizer"])
    ids = json.dumps(tok.encode(PROMPT))
    logits = {}
    for name, folder in (("mlx", m / "mlx"), ("float", floats)):
        out = tmp_path / f"{name}.npy"
        r = subprocess.run([str(MLX_PYTHON), str(pathlib.Path(__file__).with_name("mlx_logits.py")),
                            "--save", str(folder), ids, str(out)],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{name}: {r.stderr[-2000:]}"
        logits[name] = np.load(out)
    got, want = logits["mlx"], logits["float"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


LLAMA_QUANTIZE = pathlib.Path(
    os.environ.get("GGUFS_LLAMA_QUANTIZE") or "/var/cache/ggufs-tests/llama-quantize")
_Q = gguf.GGMLQuantizationType
# llama-quantize's ftypes (tools/quantize/quantize.cpp, QUANT_OPTIONS) and the ggml types each
# must put in a WIDE file (llama-quant.cpp, llama_tensor_get_type: Q4_K_M and Q5_K_M take Q6_K
# for output.weight and some attn_v and ffn_down; MXFP4_MOE, gpt-oss's own, MXFP4 experts and
# Q8_0 for the rest)
LLAMA_FTYPES = {"Q4_0": {_Q.Q4_0}, "Q4_1": {_Q.Q4_1}, "Q5_0": {_Q.Q5_0}, "Q5_1": {_Q.Q5_1},
                "Q8_0": {_Q.Q8_0}, "Q4_K_M": {_Q.Q4_K, _Q.Q6_K}, "Q5_K_M": {_Q.Q5_K, _Q.Q6_K},
                "Q6_K": {_Q.Q6_K}, "MXFP4_MOE": {_Q.MXFP4, _Q.Q8_0}}
# mlx/'s form of each type it keeps exactly ([mode, bits, group_size]; README's table); MXFP4 in
# expert stacks alone, as gpt-oss has it
MLX_FORMS = {_Q.Q4_0: ["affine", 4, 32], _Q.Q4_1: ["affine", 4, 32],
             _Q.Q5_0: ["affine", 5, 32], _Q.Q5_1: ["affine", 5, 32],
             _Q.Q8_0: ["affine", 8, 32], _Q.Q4_K: ["affine", 4, 32],
             _Q.Q5_K: ["affine", 5, 32], _Q.MXFP4: ["mxfp4", 4, 32]}
# test_mlx_llama_quantize's (WIDE row, ftype) cases: every ftype but gpt-oss's own on llama,
# gemma3 and phi3, and all on gpt-oss; qwen3 and qwen3moe, whose 151k-token vocabulary makes a
# case 6 s (llama's 2 to 4), take three: Q8_0 (of llama-quantize's types the one that keeps a
# tied embedding in its type, the others take Q6_K: llama_tensor_get_type), Q4_K_M's mix, and
# 5 bits (qwen3moe: in expert stacks).
LLAMA_QUANTIZE_TYPES = {"qwen3": ("Q8_0", "Q4_K_M", "Q5_0"),
                        "qwen3moe": ("Q8_0", "Q4_K_M", "Q5_1")}
LLAMA_QUANTIZE_CASES = [(arch, ftype) for arch in WIDE
                        for ftype in LLAMA_QUANTIZE_TYPES.get(arch, LLAMA_FTYPES)
                        if ftype != "MXFP4_MOE" or ARCHS[arch].get("mxfp4")]


# The rows whose mlx-lm model and transformers class give different logits for the same weights
# (mlx/'s parameters equal hf/'s, and its logits mlx-lm's of hf/, both checked first): the bound
# of the difference. gpt-oss: up to 5.0e-3 here (logits of about 1), the same for every ftype.
MLX_TRANSFORMERS_ATOL = {"gpt-oss-mxfp4": 1e-2}


def _gpt_oss_float(hf, floats):
    """hf/'s gpt-oss in the names mlx-lm's gpt_oss.py sanitize leaves (it takes the Hub's
    experts, not transformers' save: MLX_REFERENCE_FAILS): experts.gate_proj and up_proj the
    even and odd columns of gate_up_proj [E, H, 2F] (modeling_gpt_oss.py, GptOssExperts:
    gate_up[..., ::2], gate_up[..., 1::2]) transposed to [E, F, H], down_proj [E, F, H]
    transposed, their biases likewise; the values hf/'s."""
    tensors = {}
    for f in sorted(hf.glob("*.safetensors")):
        with safetensors.safe_open(str(f), "np") as st:
            tensors.update({k: st.get_tensor(k) for k in st.keys()})
    for name in [k for k in tensors if k.endswith(".experts.gate_up_proj")]:
        w, b = tensors.pop(name), tensors.pop(name + "_bias")
        stem = name.removesuffix("gate_up_proj")
        for i, part in enumerate(("gate_proj", "up_proj")):
            tensors[f"{stem}{part}.weight"] = np.ascontiguousarray(w[..., i::2].swapaxes(1, 2))
            tensors[f"{stem}{part}.bias"] = np.ascontiguousarray(b[..., i::2])
        tensors[f"{stem}down_proj.weight"] = np.ascontiguousarray(
            tensors.pop(f"{stem}down_proj").swapaxes(1, 2))
        tensors[f"{stem}down_proj.bias"] = tensors.pop(f"{stem}down_proj_bias")
    from safetensors.numpy import save_file
    save_file(tensors, str(floats / "model.safetensors"), metadata={"format": "mlx"})
    for f in hf.iterdir():
        if f.suffix != ".safetensors" and f.name not in ("config.json",
                                                         "model.safetensors.index.json"):
            (floats / f.name).symlink_to(f)


@pytest.mark.parametrize("arch,ftype", LLAMA_QUANTIZE_CASES,
                         ids=[f"{a}-{t}" for a, t in LLAMA_QUANTIZE_CASES])
def test_mlx_llama_quantize(originals, mount, tmp_path, arch, ftype):
    """mlx/ of llama.cpp's own quantizer's files: the WIDE original converted --outtype f32 and
    quantized by llama-quantize to `ftype`, the file holding the ftype's types (LLAMA_FTYPES);
    gpt-oss's MXFP4 experts requantized, which llama-quantize refuses without --allow-requantize
    ("requantizing from type mxfp4 is disabled", llama-quant.cpp), but for MXFP4_MOE, which
    keeps them. mlx/ keeps every matrix of a type of MLX_FORMS quantized in that form, as its
    config.json's quantization names it; and mlx-lm's load of mlx/ (tests/python/mlx_logits.py
    --compare, one MLX process) against its load of hf/'s float32 files under mlx/'s config
    without the quantization (gpt-oss's experts in mlx-lm's names, _gpt_oss_float): every
    parameter equal (a quantized module's weight mx.dequantize'd), the logits within 1e-4
    (relative to the largest; as test_mlx_quantized) of both mlx-lm's and transformers' of hf/
    in float32, 20 greedy tokens equal; and `python -m mlx_lm generate` runs from the mount."""
    if not MLX_PYTHON.is_file():
        pytest.skip(f"no MLX venv ({MLX_PYTHON}; scripts/install-deps --tests, or GGUFS_MLX_PYTHON)")
    if transformers.__version__.split(".")[0] != "4":
        pytest.skip("mlx-lm 0.32.2's models read transformers 4's checkpoints (per-expert names)")
    if not os.access(LLAMA_QUANTIZE, os.X_OK):
        pytest.skip(f"no llama-quantize ({LLAMA_QUANTIZE}; scripts/install-deps --tests builds it "
                    "from node-llama-cpp's llama.cpp, or GGUFS_LLAMA_QUANTIZE)")
    src = originals.converted(arch, "wide")
    path = tmp_path / f"{arch}-{ftype}.gguf"
    requantize = ["--allow-requantize"] if ARCHS[arch].get("mxfp4") and ftype != "MXFP4_MOE" \
        else []
    r = subprocess.run([str(LLAMA_QUANTIZE), *requantize, str(src), str(path), ftype, "2"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"llama-quantize {ftype} failed:\n{(r.stdout + r.stderr)[-3000:]}"
    _, tensors = read_gguf(path)
    if arch == "llama":  # read_gguf's types are GGUFReader's (~6 s on Qwen2's vocabulary)
        assert {t.name: t.tensor_type for t in gguf.GGUFReader(str(path)).tensors} == \
            {k: t.tensor_type for k, t in tensors.items()}
    types = {t.tensor_type for t in tensors.values()}
    assert LLAMA_FTYPES[ftype] <= types, f"{ftype}: the file holds {sorted(types)}"
    kept = [t.tensor_type for t in tensors.values() if t.tensor_type in MLX_FORMS]

    m = mount(path)
    assert (m / "mlx").is_dir(), os.getxattr(str(m.path), "user.ggufs.mlx").decode()
    config = json.loads((m / "mlx" / "config.json").read_text())
    quantization = config.pop("quantization", None)
    assert config.pop("quantization_config", None) == quantization
    floats = tmp_path / "float"
    floats.mkdir()
    if arch.startswith("gpt-oss"):
        _gpt_oss_float(m / "hf", floats)
    else:
        for f in (m / "hf").iterdir():
            if f.name != "config.json":
                (floats / f.name).symlink_to(f)
    (floats / "config.json").write_text(json.dumps(config))
    tok, _ = originals.tokenizer(ARCHS[arch]["tokenizer"])
    r = subprocess.run([str(MLX_PYTHON), str(pathlib.Path(__file__).with_name("mlx_logits.py")),
                        "--compare", str(m / "mlx"), str(floats), json.dumps(tok.encode(PROMPT)),
                        str(N_NEW), str(tmp_path), PROMPT],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    result = json.loads(r.stdout.strip().splitlines()[-1])

    # one quantized module a kept matrix, in its type's form, as config.json's quantization
    # names it (a module's own entry, else the default)
    forms = result["quantized"]
    assert forms or ftype == "Q6_K", "mlx/ keeps no matrix quantized"
    assert sorted(map(tuple, forms.values())) == sorted(tuple(MLX_FORMS[t]) for t in kept), \
        (forms, [t.name for t in kept])
    quantization = quantization or {}
    named = {k: [v["mode"], v["bits"], v["group_size"]] for k, v in quantization.items()
             if isinstance(v, dict)}
    default = [quantization.get(k) for k in ("mode", "bits", "group_size")]
    assert {k: named.get(k, default) for k in forms} == forms
    assert set(named) <= set(forms)
    if ftype == "Q4_K_M":
        assert ["affine", 4, 32] in forms.values()
    assert result["missing"] == [], result["missing"]
    assert result["differ"] == [], result["differ"]
    got, want = np.load(tmp_path / "mlx.npy"), np.load(tmp_path / "float.npy")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    # and of transformers' own model of hf/ (float32, the same ggml values)
    with torch.no_grad():
        want = _load_model(m / "hf", arch, hf=True)(
            torch.tensor([tok.encode(PROMPT)])).logits.float().numpy()
    assert got.shape == want.shape
    if arch in MLX_TRANSFORMERS_ATOL:
        assert np.abs(got - want).max() <= MLX_TRANSFORMERS_ATOL[arch]
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert len(result["tokens"]["float"]) == N_NEW
    assert result["tokens"]["mlx"] == result["tokens"]["float"]
    generate = result["generate"]
    assert generate["exit"] in (0, None) and "Generation:" in generate["stdout"], generate


@pytest.mark.parametrize("arch", [a for a, row in ARCHS.items() if row.get("mxfp4")])
def test_mxfp4_folder(originals, mount, arch):
    """hf-mxfp4/: the original's `*_blocks` and `*_scales` bytes bit for bit (the converter moves
    them, gpt_oss.py, repack_mxfp4; hf-mxfp4/ moves them back), every other tensor as the
    original has it, the original's quantization_config; loaded (dequantized by transformers as
    the original is), the same weights and the same logits."""
    from safetensors import safe_open
    original = originals.original(arch)
    m = mount(originals.converted(arch, "f32"))
    folder = m / "hf-mxfp4"
    assert folder.is_dir(), f"ggufs renders no hf-mxfp4/ for {arch}"
    with safe_open(str(original / "model.safetensors"), "pt") as f:
        want = {k: f.get_tensor(k) for k in f.keys()}
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        got = {k: f.get_tensor(k) for k in f.keys()}
    assert sorted(got) == sorted(want)
    packed = [k for k in want if k.endswith(("_blocks", "_scales"))]
    assert packed
    bad = [k for k in want if got[k].dtype != want[k].dtype or got[k].shape != want[k].shape
           or not torch.equal(got[k], want[k])]
    assert not bad, f"differ from the original: {bad}"
    want_q = json.loads((original / "config.json").read_text())["quantization_config"]
    got_q = json.loads((folder / "config.json").read_text())["quantization_config"]
    assert got_q == want_q
    ref = _load_model(original, arch)
    ours = _load_model(folder, arch)  # dequantized to bfloat16 as the original, then float32
    ours = ours.float()
    ref_sd, our_sd = ref.state_dict(), ours.state_dict()
    assert sorted(our_sd) == sorted(ref_sd)
    assert not [k for k in ref_sd if not torch.equal(our_sd[k], ref_sd[k])]
    tok, _ = originals.tokenizer(ARCHS[arch]["tokenizer"])
    ids = torch.tensor([tok.encode(PROMPT)])
    with torch.no_grad():
        assert torch.equal(ours(ids).logits, ref(ids).logits)
