// The rows of the classes llama.cpp's conversion/command_r.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// command_r.py, CommandR2Model: base.py's keys (layer norms with an epsilon, no RMS) and the
// logit scale; context_length is model_max_length where the config has one.
constexpr ConfigKey kCohereKeys[] = {{"context_length", "max_position_embeddings"},
                                     {"block_count", "num_hidden_layers"},
                                     {"feed_forward_length", "intermediate_size"},
                                     {"embedding_length", "hidden_size"},
                                     {"rope.freq_base", "rope_theta", kNumber},
                                     {"attention.head_count", "num_attention_heads"},
                                     {"attention.head_count_kv", "num_key_value_heads"},
                                     {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
                                     {"logit_scale", "logit_scale", kNumber}};

constexpr TensorFlag kCohereFlags[] = {{"attn_q_norm.weight", "use_qk_norm"}};

// command_r.py, Cohere2Model.set_gguf_parameters: the sliding window, the vocabulary size and
// rotary_pct (a field of the checkpoints' config.json that Cohere2Config keeps, unused) as
// rotary dimensions per head.
constexpr ConfigKey kCohere2Own[] = {
    {"attention.sliding_window", "sliding_window"},
    {"vocab_size", "vocab_size"},
    {"rope.dimension_count", "rotary_pct", ValueKind::kRotaryFraction}};

constexpr auto kCohere2Keys = join(kCohereKeys, kCohere2Own);

}  // namespace

void command_r(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Command R: one layer norm (weight only) before attention and MLP in parallel; per-head q/k
  // norms (nh, hd) where use_qk_norm, which the tensors show (modeling_cohere.py,
  // CohereAttention); the converter renames only (command_r.py, CommandR2Model).
  add({.gguf_arch = "command-r",
       .model_type = "cohere",
       .class_name = "CohereForCausalLM",
       .keys = kCohereKeys,
       .defaults = {.ff = 22528, .bos = 5, .eos = 255001, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                conditional(
                    {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadsHeadDim},
                     {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvHeadsHeadDim}}),
                gated_mlp,
                {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .tensor_flags = kCohereFlags});
  // Command R7B: Command R's tensors without q/k norms; the converter drops the biases, which
  // must be zero (command_r.py, Cohere2Model.modify_tensors), as the class has none. The layer
  // pattern is not written: llama.cpp's every 4th layer global (src/models/cohere2.cpp) is the
  // class default.
  add({.gguf_arch = "cohere2",
       .model_type = "cohere2",
       .class_name = "Cohere2ForCausalLM",
       .keys = kCohere2Keys,
       .defaults = {.ff = 22528, .bos = 5, .eos = 255001, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     gated_mlp,
                     {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head});
}

}  // namespace ggufs::hf::table
