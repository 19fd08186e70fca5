// The rows of the classes llama.cpp's conversion/gpt_oss.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// gpt_oss.py, GptOssModel.set_gguf_parameters: base.py's (head_dim as attention.key_length,
// the expert counts, rope_scaling's YaRN keys), the sliding window, and intermediate_size (each
// expert's width) again as expert_feed_forward_length.
constexpr ConfigKey kGptOssOwn[] = {{"attention.key_length", "head_dim"},
                                    {"attention.sliding_window", "sliding_window"},
                                    {"expert_feed_forward_length", "intermediate_size"}};

constexpr auto kGptOssKeys = join(kBaseKeys, kLocalExperts, kGptOssOwn);

// gpt-oss-20b's and -120b's config.json: YaRN without truncation (rope_scaling.truncate false;
// transformers' YaRN default truncates), which base.py does not write.
constexpr ConfigConstant kGptOssConstants[] = {{"rope_scaling", R"({"truncate": false})"}};

// gpt_oss.py: the experts as its sanitize leaves them (gate_up_proj's even and odd rows as
// gate_proj and up_proj, [E, F, H]; down_proj [E, H, F]; each with its bias), which the
// converter's ffn_{gate,up,down}_exps stacks are as stored (gpt_oss.py,
// GptOssModel.modify_tensors); MXFP4 stacks in mlx-lm's "mxfp4" form.
constexpr MlxUnfused kMlxGptOssExperts[] = {
    {"mlp.experts.gate_up_proj", {"mlp.experts.gate_proj.weight", "mlp.experts.up_proj.weight"}},
    {"mlp.experts.gate_up_proj_bias", {"mlp.experts.gate_proj.bias", "mlp.experts.up_proj.bias"}},
    {"mlp.experts.down_proj", {"mlp.experts.down_proj.weight", ""}},
    {"mlp.experts.down_proj_bias", {"mlp.experts.down_proj.bias", ""}}};

}  // namespace

void gpt_oss(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // gpt-oss: biased attention with per-head sinks, a biased router, stacked experts with biases
  // (modeling_gpt_oss.py, GptOssAttention, GptOssTopKRouter, GptOssExperts). The converter
  // splits gate_up_proj (E, H, 2F) into its even and odd columns, transposed, and transposes
  // down_proj (gpt_oss.py, GptOssModel.modify_tensors); sinks become attn_sinks.weight
  // (GptOssModel.filter_tensors).
  add({.gguf_arch = "gpt-oss",
       .model_type = "gpt_oss",
       .class_name = "GptOssForCausalLM",
       .keys = kGptOssKeys,
       .constants = kGptOssConstants,
       .defaults = {.kv_heads = 8, .head_dim = 64, .ff = 2880, .experts = 128},
       .transforms = Transforms::kGptOss,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {{{"attn_sinks.weight", "self_attn.sinks", Shape::kHeads}},
            b.biased_attention,
            {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
             {"ffn_gate_inp.weight", "mlp.router.weight", Shape::kRouter},
             {"ffn_gate_inp.bias", "mlp.router.bias", Shape::kExperts},
             {"ffn_gate_exps.weight",
              "mlp.experts.gate_up_proj",
              Shape::kExpertsHiddenGateUp,
              false,
              {"ffn_up_exps.weight"}},
             {"ffn_gate_exps.bias",
              "mlp.experts.gate_up_proj_bias",
              Shape::kExpertsGateUpBias,
              false,
              {"ffn_up_exps.bias"}},
             {"ffn_down_exps.weight", "mlp.experts.down_proj", Shape::kExpertsFfHiddenT},
             {"ffn_down_exps.bias", "mlp.experts.down_proj_bias", Shape::kExpertsHidden},
             {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .mlx = {.unfused = kMlxGptOssExperts}});
}

}  // namespace ggufs::hf::table
