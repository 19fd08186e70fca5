// The rows of the classes llama.cpp's conversion/stablelm.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigKey kStablelmKeys[] = {{"context_length", "max_position_embeddings"},
                                       {"block_count", "num_hidden_layers"},
                                       {"feed_forward_length", "intermediate_size"},
                                       {"embedding_length", "hidden_size"},
                                       {"attention.head_count", "num_attention_heads"},
                                       {"attention.head_count_kv", "num_key_value_heads"},
                                       {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
                                       {"vocab_size", "vocab_size"}};

constexpr ConfigConstant kMlxStableLm[] = {{"rope_theta", "10000"},
                                           {"partial_rotary_factor", "0.25"}};

}  // namespace

void stablelm(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& biased_norms = b.biased_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_bias_head = b.norm_bias_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  add({.gguf_arch = "stablelm",
       .model_type = "stablelm",
       .class_name = "StableLmForCausalLM",
       .keys = kStablelmKeys,
       .defaults = {.kv_heads = 32, .ff = 6912, .bos = 0, .eos = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       // The q/k/v biases under use_qkv_bias, post_attention_layernorm unless
       // use_parallel_residual (modeling_stablelm.py, StableLmAttention and
       // StableLmDecoderLayer), both of which the tensors set (hf_config.cpp, tensor_fields).
       .layer = conditional(
           cat({biased_attention, gated_mlp, biased_norms}),
           {"attn_q.bias", "attn_k.bias", "attn_v.bias", "ffn_norm.weight", "ffn_norm.bias"}),
       .after = norm_bias_head,
       .mlx = {.defaults = kMlxStableLm}});
}

}  // namespace ggufs::hf::table
