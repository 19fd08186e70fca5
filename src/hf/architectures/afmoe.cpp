// The rows of the classes llama.cpp's conversion/afmoe.py converts (table.h).
#include <cstdint>
#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// afmoe.py, AfmoeModel.set_gguf_parameters after LlamaModel's (base.py's keys; head_dim as
// rope.dimension_count): the shared experts' count, the experts' width, the leading dense
// layers, route_scale, the window. Not written: global_attn_every_n_layers (llama.cpp's
// load_swa_pattern takes every 4th layer as global without a pattern key: the class default 4,
// and layer_types as the class derives it),
// route_norm (no AfmoeConfig field).
constexpr auto kAfmoeKeys = base_and({{"rope.dimension_count", "head_dim"},
                                      {"expert_count", "num_experts"},
                                      {"expert_used_count", "num_experts_per_tok"},
                                      {"expert_shared_count", "num_shared_experts"},
                                      {"expert_feed_forward_length", "moe_intermediate_size"},
                                      {"leading_dense_block_count", "num_dense_layers"},
                                      {"expert_weights_scale", "route_scale", kNumber},
                                      {"attention.sliding_window", "sliding_window"}});

// llama.cpp's afmoe graph scales the embeddings by sqrt(hidden) always (src/models/afmoe.cpp,
// MuP), which AfmoeConfig does under mup_enabled (modeling_afmoe.py, AfmoeModel.forward), as
// Trinity's configs set it; the converter does not write it.
constexpr ConfigConstant kAfmoeConstants[] = {{"mup_enabled", "true"}};

// layer_types as AfmoeConfig.__post_init__ derives it from the class default
// global_attn_every_n_layers, 4 (every 4th layer global), which llama.cpp takes too: written out,
// as the class's to_dict holds it, for readers of config.json without the class (mlx-lm's
// afmoe.py requires it).
std::string layer_types(ConfigFields& f) {
  if (f.config.contains("layer_types")) return "";
  nlohmann::json types = nlohmann::json::array();
  for (std::uint64_t i = 0; i < f.layers; ++i) {
    types.push_back((i + 1) % 4 != 0 ? "sliding_attention" : "full_attention");
  }
  f.config["layer_types"] = std::move(types);
  return "";
}
constexpr ConfigQuirk kAfmoeQuirks[] = {{QuirkStage::kLayerFields, layer_types}};

// mlx-lm's afmoe.py stacks the experts into mlp.experts.<projection>, names it leaves.
constexpr std::pair<std::string_view, std::string_view> kMlxAfmoeExperts[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.experts.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.experts.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.experts.down_proj.weight"}};

}  // namespace

void afmoe(Rows& rows) {
  const Blocks& b = blocks();
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Trinity (modeling_afmoe.py, AfmoeDecoderLayer): llama's attention with q/k norms and an
  // output gate (self_attn.gate_proj, ATTN_GATE), four norms; the first num_dense_layers layers
  // with the dense MLP, the others with the router (mlp.router.gate), its expert_bias (afmoe.py's
  // filter_tensors names it expert_bias.bias), the stacked experts (AfmoeModel.modify_tensors)
  // and the shared experts as one MLP. q/k rows as they are: AfmoeModel.modify_tensors calls
  // ModelBase's, not LlamaModel's permutation.
  add({.gguf_arch = "afmoe",
       .model_type = "afmoe",
       .class_name = "AfmoeForCausalLM",
       .keys = kAfmoeKeys,
       .constants = kAfmoeConstants,
       .defaults = {.kv_heads = 16,
                    .head_dim = 128,
                    .ff = 6144,
                    .experts = 64,
                    .expert_ff = 1408,
                    .shared_experts = 2},
       .layer_prefix = kModelLayer,
       .before = b.embed,
       .layer =
           cat({b.llama_attention,
                b.qk_norms,
                {{"attn_gate.weight", "self_attn.gate_proj.weight", Shape::kQ}},
                b.gated_mlp,
                {{"ffn_gate_inp.weight", "mlp.router.gate.weight", Shape::kRouter},
                 {"exp_probs_b.bias", "mlp.expert_bias", Shape::kExperts}},
                b.stacked_experts,
                b.shared_experts,
                {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.weight", "pre_mlp_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_mlp_layernorm.weight", Shape::kHidden}}}),
       .after = b.norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {.from = "num_dense_layers"},
       .quirks = kAfmoeQuirks,
       .mlx = {.experts = kMlxAfmoeExperts}});
}

}  // namespace ggufs::hf::table
