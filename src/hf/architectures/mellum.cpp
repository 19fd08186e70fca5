// The rows of the classes llama.cpp's conversion/mellum.py converts (table.h).
#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// mellum.py, MellumModel.set_gguf_parameters after base.py's: head_dim as key_length, the experts
// (count, used count), their width, the window and its layer pattern as one flag a layer
// (layer_types); the rope bases of the full and the sliding layers as rope.freq_base and
// rope.freq_base_swa (base.py, from rope_parameters' full_attention and sliding_attention; the
// latter held as rope_local_base_freq until mellum_rope nests them). Not written: norm_topk_prob
// (the class default true), mlp_layer_types (the class default: every layer sparse; a file with
// dense layers is refused by its tensors).
constexpr auto kMellumKeys = base_and({{"attention.key_length", "head_dim"},
                                       {"expert_count", "num_local_experts"},
                                       {"expert_used_count", "num_experts_per_tok"},
                                       {"expert_feed_forward_length", "moe_intermediate_size"},
                                       {"attention.sliding_window", "sliding_window"},
                                       {"rope.freq_base_swa", "rope_local_base_freq", kNumber}});

// MellumConfig's rope_parameters, one per layer type (configuration_mellum.py): the file's
// bases, else the class defaults (500000 and 10000).
std::string mellum_rope(ConfigFields& f) {
  nlohmann::json& config = f.config;
  nlohmann::json full = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  nlohmann::json sliding = {{"rope_type", "default"}, {"rope_theta", 10000.0}};
  if (config.contains("rope_theta")) full["rope_theta"] = config["rope_theta"];
  if (config.contains("rope_local_base_freq")) {
    sliding["rope_theta"] = config["rope_local_base_freq"];
  }
  config.erase("rope_theta");
  config.erase("rope_local_base_freq");
  config["rope_parameters"] = {{"full_attention", full}, {"sliding_attention", sliding}};
  return "";
}
constexpr ConfigQuirk kMellumQuirks[] = {{QuirkStage::kLayerFields, mellum_rope}};

// mlx-lm's mellum.py reads the experts' count as num_experts and requires norm_topk_prob and
// tie_word_embeddings; its sanitize stacks the experts into switch_mlp, names it leaves.
constexpr ConfigConstant kMlxMellum[] = {{"norm_topk_prob", "true"},
                                         {"tie_word_embeddings", "false"}};
constexpr std::pair<std::string_view, std::string_view> kMlxMellumRenamed[] = {
    {"num_experts", "num_local_experts"}};
constexpr std::pair<std::string_view, std::string_view> kMlxMellumExperts[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.switch_mlp.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.switch_mlp.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.switch_mlp.down_proj.weight"}};

}  // namespace

void mellum(Rows& rows) {
  const Blocks& b = blocks();
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Mellum 2 (modeling_mellum.py, MellumDecoderLayer): q/k norms, sliding and full attention
  // layers, every layer's MLP the router and the experts (mellum.py stacks mlp.experts.X.*; the
  // class holds them fused as gate_up_proj and down_proj, saved one by one).
  add({.gguf_arch = "mellum",
       .model_type = "mellum",
       .class_name = "MellumForCausalLM",
       .keys = kMellumKeys,
       .defaults = {.kv_heads = 4, .head_dim = 128, .ff = 7168, .experts = 64, .expert_ff = 896},
       .layer_prefix = kModelLayer,
       .before = b.embed,
       .layer = cat({b.llama_attention, b.qk_norms, b.experts, b.two_norms}),
       .after = b.norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .quirks = kMellumQuirks,
       .mlx = {
           .defaults = kMlxMellum, .renamed = kMlxMellumRenamed, .experts = kMlxMellumExperts}});
}

}  // namespace ggufs::hf::table
