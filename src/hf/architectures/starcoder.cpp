// The rows of the classes llama.cpp's conversion/starcoder.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigKey kStarcoder2Keys[] = {{"block_count", "num_hidden_layers"},
                                         {"context_length", "max_position_embeddings"},
                                         {"embedding_length", "hidden_size"},
                                         {"feed_forward_length", "intermediate_size"},
                                         {"attention.head_count", "num_attention_heads"},
                                         {"attention.head_count_kv", "num_key_value_heads"},
                                         {"attention.layer_norm_epsilon", "norm_epsilon", kNumber},
                                         {"rope.freq_base", "rope_theta", kNumber}};

}  // namespace

void starcoder(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& biased_norms = b.biased_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_bias_head = b.norm_bias_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  add({.gguf_arch = "starcoder2",
       .model_type = "starcoder2",
       .class_name = "Starcoder2ForCausalLM",
       .keys = kStarcoder2Keys,
       .defaults = {.kv_heads = 2, .ff = 12288, .bos = 50256, .eos = 50256},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention,
                     {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
                      {"ffn_up.weight", "mlp.c_fc.weight", Shape::kFfHidden},
                      {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
                      {"ffn_down.weight", "mlp.c_proj.weight", Shape::kHiddenFf},
                      {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden}},
                     biased_norms}),
       .after = norm_bias_head});
}

}  // namespace ggufs::hf::table
