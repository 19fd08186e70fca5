// The rows of the classes llama.cpp's conversion/chatglm.py converts (table.h).
#include <fmt/format.h>

#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// chatglm.py, ChatGLMModel.set_gguf_parameters, for GlmForCausalLM's config: hidden_size,
// intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads; the rotary
// dimensions as hidden / heads · partial_rotary_factor; the rope base as 10000 · rope_ratio
// (GlmConfig has no rope_ratio: 10000, the class default rope_theta, which the converter's
// llama.cpp model runs). Not carried: max_position_embeddings (context_length is seq_length, a
// field GlmConfig lacks, else hidden_size: left to the class default), rms_norm_eps (written as
// layernorm_epsilon, which GlmConfig lacks: 1e-5, as llama.cpp runs the model).
constexpr ConfigKey kChatGlmKeys[] = {
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", ValueKind::kNumber},
    {"rope.dimension_count", "partial_rotary_factor", ValueKind::kRotaryFraction},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", ValueKind::kNumber}};

// The converter writes no head_dim and takes a head as hidden / heads (the rotary dimensions
// above); GlmConfig's default is 128. A file whose heads do not divide the hidden size is no
// model the converter wrote.
std::string head_dim_of_hidden(ConfigFields& f) {
  const std::uint64_t hidden = count_field(f.config, "hidden_size"),
                      heads = count_field(f.config, "num_attention_heads");
  if (heads == 0 || hidden % heads != 0) {
    return fmt::format(
        "{} heads do not divide hidden size {}: chatglm.py takes a head as "
        "hidden / heads",
        heads, hidden);
  }
  f.config["head_dim"] = hidden / heads;
  return "";
}
constexpr ConfigQuirk kChatGlmQuirks[] = {{QuirkStage::kChecks, head_dim_of_hidden}};

// mlx-lm's glm.py defaults attention_bias to false; GlmConfig's is true.
constexpr ConfigConstant kMlxGlm[] = {{"attention_bias", "true"}};

}  // namespace

void chatglm(Rows& rows) {
  const Blocks& b = blocks();
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // GLM-4 (modeling_glm.py, GlmForCausalLM): q/k/v biases, gate_up_proj kept fused as ffn_up
  // (gguf-py's tensor_mapping.py, FFN_UP), two norms a layer; the converter renames only (its
  // filter_tensors strips chatglm3's "transformer." prefix, which GlmForCausalLM has not).
  add({.gguf_arch = "chatglm",
       .model_type = "glm",
       .class_name = "GlmForCausalLM",
       .keys = kChatGlmKeys,
       .defaults = {.kv_heads = 2, .ff = 13696, .eos = 151329, .pad = 151329},
       .layer_prefix = kModelLayer,
       .before = b.embed,
       .layer = cat({b.biased_attention,
                     {{"ffn_up.weight", "mlp.gate_up_proj.weight", Shape::kFusedGateUp},
                      {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf}},
                     b.two_norms}),
       .after = b.norm_head,
       .quirks = kChatGlmQuirks,
       .mlx = {.defaults = kMlxGlm}});
}

}  // namespace ggufs::hf::table
