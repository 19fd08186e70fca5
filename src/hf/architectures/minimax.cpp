// The rows of the classes llama.cpp's conversion/minimax.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// minimax.py, MiniMaxM2Model.set_gguf_parameters (after base.py's): each expert's width
// (intermediate_size) and rotary_dim, the field MiniMax-M2's config.json has (transformers 5.24.0's
// MiniMaxM2Config reads it as partial_rotary_factor · head_dim); head_dim as key_length.
constexpr auto kMiniMaxM2Keys = base_and({{"attention.key_length", "head_dim"},
                                          {"rope.dimension_count", "rotary_dim"},
                                          {"expert_count", "num_local_experts"},
                                          {"expert_used_count", "num_experts_per_tok"}});

}  // namespace

void minimax(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& block_sparse_moe = b.block_sparse_moe;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // MiniMax-M2: q/k norms over all heads, Mixtral's expert names (the checkpoint's, which
  // transformers 5.24.0 fuses at load: conversion_mapping.py, "minimax_m2") stacked by the
  // converter (minimax.py, MiniMaxM2Model.modify_tensors), the routing's correction bias.
  add({.gguf_arch = "minimax-m2",
       .model_type = "minimax_m2",
       .class_name = "MiniMaxM2ForCausalLM",
       .keys = kMiniMaxM2Keys,
       .defaults = {.kv_heads = 8,
                    .head_dim = 128,
                    .ff = 1536,
                    .experts = 256,
                    .bos = 200034,
                    .eos = 200020},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                {
                    {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
                    {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias},
                },
                block_sparse_moe,
                {{"exp_probs_b.bias", "block_sparse_moe.e_score_correction_bias", Shape::kExperts}},
                two_norms}),
       .after = norm_head,
       .mlx = {.experts = kMlxBlockSparseSwitch}});
}

}  // namespace ggufs::hf::table
