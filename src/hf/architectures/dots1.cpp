// The rows of the classes llama.cpp's conversion/dots1.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// dots1.py, Dots1Model.set_gguf_parameters (after qwen.py's Qwen2MoeModel and base.py's).
constexpr auto kDots1Keys = base_and({{"expert_count", "n_routed_experts"},
                                      {"expert_used_count", "num_experts_per_tok"},
                                      {"expert_group_count", "n_group"},
                                      {"expert_group_used_count", "topk_group"},
                                      {"expert_feed_forward_length", "moe_intermediate_size"},
                                      {"leading_dense_block_count", "first_k_dense_replace"},
                                      {"expert_shared_count", "n_shared_experts"},
                                      {"expert_weights_scale", "routed_scaling_factor", kNumber},
                                      {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny}});

// dots1.py: mlp.experts itself is the SwitchGLU.
constexpr std::pair<std::string_view, std::string_view> kMlxDots1Experts[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.experts.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.experts.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.experts.down_proj.weight"}};

}  // namespace

void dots1(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& scored_experts = b.scored_experts;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // dots.llm1: dense layers before first_k_dense_replace, then the experts (qwen.py,
  // Qwen2MoeModel.modify_tensors), the router with its correction bias (a buffer), and the
  // shared experts as one MLP moe_intermediate_size · n_shared_experts wide.
  add({.gguf_arch = "dots1",
       .model_type = "dots1",
       .class_name = "Dots1ForCausalLM",
       .keys = kDots1Keys,
       .defaults = {.kv_heads = 32, .ff = 10944, .expert_ff = 1408},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, qk_norms, gated_mlp, scored_experts, two_norms}),
       .after = norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 0},
       .mlx = {.experts = kMlxDots1Experts}});
}

}  // namespace ggufs::hf::table
