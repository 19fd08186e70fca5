// The rows of the classes llama.cpp's conversion/phi.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// phi.py, PhiMoeModel.set_gguf_parameters: phi3's and the expert counts.
constexpr auto kPhiMoeKeys =
    base_and({{"rope.scaling.original_context_length", "original_max_position_embeddings"},
              {"expert_count", "num_local_experts"},
              {"expert_used_count", "num_experts_per_tok"}});

// Phi-3.5-MoE's config.json (the one PhiMoE model); the converter keeps the biases as tensors.
constexpr ConfigConstant kPhiMoeConstants[] = {
    {"attention_bias", "true"}, {"lm_head_bias", "true"}, {"input_jitter_noise", "0.01"}};

// phi.py, Phi3MiniModel.set_gguf_parameters.
constexpr auto kPhi3Keys =
    base_and({{"rope.scaling.original_context_length", "original_max_position_embeddings"}});

// phi.py, Phi2Model.set_gguf_parameters: its own keys, feed_forward_length as 4 · hidden (every
// Phi-1.5 and Phi-2 config's intermediate_size), head_count_kv as head_count, the rotary
// fraction as dimensions per head; no rope base (the class default).
constexpr ConfigKey kPhi2Keys[] = {
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"feed_forward_length", "intermediate_size"},
    {"block_count", "num_hidden_layers"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
    {"rope.dimension_count", "partial_rotary_factor", ValueKind::kRotaryFraction}};

}  // namespace

void phi(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& block_sparse_moe = b.block_sparse_moe;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& biased_norms = b.biased_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Phi3Attention registers o_proj before qkv_proj; the converter keeps both fusions.
  add({.gguf_arch = "phi3",
       .model_type = "phi3",
       .class_name = "Phi3ForCausalLM",
       .keys = kPhi3Keys,
       .defaults = {.ff = 8192, .bos = 1, .eos = 32000, .pad = 32000},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({{{"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
                      {"attn_qkv.weight", "self_attn.qkv_proj.weight", Shape::kFusedQkv},
                      {"ffn_up.weight", "mlp.gate_up_proj.weight", Shape::kFusedGateUp},
                      {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf}},
                     two_norms}),
       .after = norm_head});
  // PhiMoE: phi3's file with split q/k/v, LayerNorms with biases, and Mixtral's experts
  // (phi.py, PhiMoeModel.modify_tensors stacks block_sparse_moe.experts.X.w1/w2/w3).
  add({.gguf_arch = "phimoe",
       .model_type = "phimoe",
       .class_name = "PhiMoEForCausalLM",
       .keys = kPhiMoeKeys,
       .constants = kPhiMoeConstants,
       .defaults = {.kv_heads = 8, .ff = 6400, .experts = 16, .bos = 1, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention,
                     {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden}},
                     block_sparse_moe,
                     biased_norms}),
       .after = {{"output_norm.weight", "model.norm.weight", Shape::kHidden},
                 {"output_norm.bias", "model.norm.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden},
                 {"output.bias", "lm_head.bias", Shape::kVocab}},
       .mlx = {.experts = kMlxBlockSparseSwitch}});
  // Phi-2: biased q/k/v and dense, fc1/fc2 MLP, one layer norm per layer (modeling_phi.py,
  // PhiDecoderLayer) and a biased lm_head; the converter renames only.
  add({.gguf_arch = "phi2",
       .model_type = "phi",
       .class_name = "PhiForCausalLM",
       .keys = kPhi2Keys,
       .defaults = {.ff = 8192, .bos = 1, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
                 {"attn_output.weight", "self_attn.dense.weight", Shape::kO},
                 {"attn_output.bias", "self_attn.dense.bias", Shape::kHidden},
                 {"ffn_up.weight", "mlp.fc1.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.fc1.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.fc2.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.fc2.bias", Shape::kHidden},
                 {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "model.final_layernorm.weight", Shape::kHidden},
                 {"output_norm.bias", "model.final_layernorm.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden},
                 {"output.bias", "lm_head.bias", Shape::kVocab}}});
}

}  // namespace ggufs::hf::table
