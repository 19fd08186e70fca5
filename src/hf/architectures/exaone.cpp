// The rows of the classes llama.cpp's conversion/exaone.py converts (table.h).
#include <cstddef>
#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigConstant kMlxExaone4[] = {{"rope_scaling", "null"}};

// exaone.py, Exaone4Model.set_gguf_parameters: the window, and its layer pattern as one flag a
// layer (Architecture::layer_types); head_dim as key_length (base.py). A model without a window
// gets neither key: sliding_window null (the class default 4096 with every layer global would
// be another model; Exaone4Config divides by the pattern 0 without layer_types).
constexpr auto kExaone4Keys = base_and(
    {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}});

constexpr ConfigConstant kExaone4Constants[] = {{"sliding_window", "null"}};

// exaone.py, ExaoneMoEModel.set_gguf_parameters: EXAONE 4's keys (Exaone4Model's), the
// experts (base.py: count, used count, groups), their width, the shared experts' count,
// routed_scaling_factor, norm_topk_prob, the leading dense layers, and the MTP layers it appends
// to block_count (Architecture::appended_layers; none served). The shared experts' width it
// writes is moe_intermediate_size times their count, the class's own product.
constexpr auto kExaoneMoeKeys =
    base_and({{"attention.key_length", "head_dim"},
              {"attention.sliding_window", "sliding_window"},
              {"expert_count", "num_experts"},
              {"expert_used_count", "num_experts_per_tok"},
              {"expert_group_count", "n_group"},
              {"expert_group_used_count", "topk_group"},
              {"expert_feed_forward_length", "moe_intermediate_size"},
              {"expert_shared_count", "num_shared_experts"},
              {"expert_weights_scale", "routed_scaling_factor", kNumber},
              {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny},
              {"leading_dense_block_count", "first_k_dense_replace"},
              {"nextn_predict_layers", "num_nextn_predict_layers"}});

// sliding_window_pattern, which the converter writes only as layer_types' flags: the period
// whose last layer of each is global and the others sliding (configuration_exaone4.py and
// configuration_exaone_moe.py derive layer_types so without one), where layer_types is that;
// else (no layer sliding, or no pattern) the class default; layer_types rules the model either
// way.
std::string window_period(ConfigFields& f) {
  const auto it = f.config.find("layer_types");
  if (it == f.config.end() || !it->is_array() || it->empty()) return "";
  const nlohmann::json& types = *it;
  std::size_t period = 0;
  while (period < types.size() && types[period] != "full_attention") ++period;
  if (period == 0 || ++period > types.size()) return "";  // no sliding layer, or no global one
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] != ((i + 1) % period == 0 ? "full_attention" : "sliding_attention")) return "";
  }
  f.config["sliding_window_pattern"] = period;
  return "";
}
constexpr ConfigQuirk kExaoneQuirks[] = {{QuirkStage::kLayerFields, window_period}};

}  // namespace

void exaone(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // EXAONE 4: q/k norms, and norms after attention and the MLP only (modeling_exaone4.py,
  // Exaone4DecoderLayer); the converter renames only (exaone.py, Exaone4Model; rope_freqs, made
  // from a llama3 rope_scaling, has no parameter).
  add({.gguf_arch = "exaone4",
       .model_type = "exaone4",
       .class_name = "Exaone4ForCausalLM",
       .keys = kExaone4Keys,
       .constants = kExaone4Constants,
       .defaults = {.kv_heads = 32, .ff = 16384, .bos = 0, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                qk_norms,
                gated_mlp,
                {{"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .quirks = kExaoneQuirks,
       .mlx = {.defaults = kMlxExaone4, .window_pattern = true}});
  // K-EXAONE (modeling_exaone_moe.py, ExaoneMoeDecoderLayer): EXAONE 4's attention and norms;
  // the first first_k_dense_replace layers with the dense MLP, the others with the router, its
  // correction bias (mlp.e_score_correction_bias, a buffer: base.py's filter_tensors names it
  // e_score_correction.bias), the stacked experts (ExaoneMoEModel.modify_tensors) and the shared
  // experts as one MLP.
  add({.gguf_arch = "exaone-moe",
       .model_type = "exaone_moe",
       .class_name = "ExaoneMoeForCausalLM",
       .keys = kExaoneMoeKeys,
       .constants = kExaone4Constants,
       .defaults = {.kv_heads = 32,
                    .ff = 16384,
                    .experts = 64,
                    .expert_ff = 1024,
                    .shared_experts = 1,
                    .bos = 1,
                    .eos = 53,
                    .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     qk_norms,
                     gated_mlp,
                     {{"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
                      {"exp_probs_b.bias", "mlp.e_score_correction_bias", Shape::kExperts}},
                     b.stacked_experts,
                     b.shared_experts,
                     b.two_norms}),
       .after = norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .appended_layers = "nextn_predict_layers",
       .layer_groups = kDenseOrMoe,
       .moe_layers = {.from = "first_k_dense_replace"},
       .quirks = kExaoneQuirks,
       .mlx = {.absent = "mlx-lm 0.32.2's exaone_moe.py requires is_moe_layer, a field "
                         "ExaoneMoeConfig does not have"}});
}

}  // namespace ggufs::hf::table
