// The rows of the classes llama.cpp's conversion/ernie.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// ernie.py, Ernie4_5MoeModel.set_gguf_parameters. Its expert_shared_feed_forward_length is
// intermediate_size // num_key_value_heads, no config field: the shared experts are
// moe_intermediate_size · moe_num_shared_experts wide (modeling_ernie4_5_moe.py).
constexpr auto kErnie45MoeKeys = base_and({{"expert_count", "moe_num_experts"},
                                           {"expert_used_count", "moe_k"},
                                           {"interleave_moe_layer_step", "moe_layer_interval"},
                                           {"leading_dense_block_count", "moe_layer_start_index"},
                                           {"expert_feed_forward_length", "moe_intermediate_size"},
                                           {"expert_shared_count", "moe_num_shared_experts"}});

// mlx/'s columns (MlxColumn): the class defaults mlx-lm 0.32.2's ModelArgs requires, each from
// transformers 4.57.6's configuration_<model>.py, and the fields it reads under other names.
constexpr ConfigConstant kMlxNoBias[] = {{"use_bias", "false"}};  // Ernie4_5(Moe)Config

}  // namespace

void ernie(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& experts = b.experts;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // ERNIE 4.5 MoE: dense layers before moe_layer_start_index, then the router's correction
  // bias, the experts (ernie.py, Ernie4_5MoeModel.modify_tensors) and the shared experts as one
  // MLP; the MTP layers are dropped by the converter.
  add({.gguf_arch = "ernie4_5-moe",
       .model_type = "ernie4_5_moe",
       .class_name = "Ernie4_5_MoeForCausalLM",
       .keys = kErnie45MoeKeys,
       .defaults = {.kv_heads = 4,
                    .ff = 12288,
                    .experts = 64,
                    .expert_ff = 1536,
                    .shared_experts = 2,
                    .bos = 1,
                    .eos = 2,
                    .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            gated_mlp,
            {{"exp_probs_b.bias", "mlp.moe_statics.e_score_correction_bias", Shape::kOneExperts}},
            experts,
            // Where moe_num_shared_experts > 0 (modeling_ernie4_5_moe.py,
            // Ernie4_5_MoeSparseMoeBlock).
            conditional({{"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight",
                          Shape::kSharedExpertsFfHidden},
                         {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight",
                          Shape::kSharedExpertsFfHidden},
                         {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight",
                          Shape::kHiddenSharedExpertsFf}}),
            two_norms}),
       .after = norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"moe_layer_start_index", "moe_layer_interval", 1, 1},
       .mlx = {.defaults = kMlxNoBias, .experts = kMlxSwitchMlp}});
  // Ernie4_5ForCausalLM's q/k/v and gate/up are separate (the converter's split of a fused
  // checkpoint's qkv_proj and up_gate_proj, ernie.py Ernie4_5Model.modify_tensors, is the same
  // tensors); head_dim is written as attention.key_length (base.py).
  add({.gguf_arch = "ernie4_5",
       .model_type = "ernie4_5",
       .class_name = "Ernie4_5ForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.kv_heads = 2, .head_dim = 128, .ff = 3072, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head,
       .mlx = {.defaults = kMlxNoBias}});
}

}  // namespace ggufs::hf::table
