// The rows of the classes llama.cpp's conversion/falcon.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// falcon.py, FalconModel.set_gguf_parameters: its own keys; context_length is the constant 2048
// and feed_forward_length 4 · hidden (the class's ffn_hidden_size), neither a config field.
constexpr ConfigKey kFalconKeys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_kv_heads"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};

constexpr ConfigConstant kFalconOneNorm[] = {{"new_decoder_architecture", "true"},
                                             {"num_ln_in_parallel_attn", "1"}};

constexpr ConfigConstant kFalconTwoNorms[] = {{"new_decoder_architecture", "true"},
                                              {"num_ln_in_parallel_attn", "2"}};

}  // namespace

void falcon(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Falcon: the fused query_key_value per KV group [q × heads / kv, k, v] (regrouped by the
  // converter, falcon.py FalconModel.modify_tensors), no biases (its view of a bias fails),
  // parallel attention and MLP (gguf-py's FALCON tensors have no FFN_NORM).
  const std::vector<WeightEntry> falcon_attention_mlp = {
      {"attn_qkv.weight", "self_attention.query_key_value.weight", Shape::kFusedQkv},
      {"attn_output.weight", "self_attention.dense.weight", Shape::kHiddenHidden},
      {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
      {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf}};
  const std::vector<WeightEntry> falcon_embed = {
      {"token_embd.weight", "transformer.word_embeddings.weight", Shape::kVocabHidden}};
  const std::vector<WeightEntry> falcon_head = {
      {"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
      {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden}};
  add({.gguf_arch = "falcon",
       .model_type = "falcon",
       .class_name = "FalconForCausalLM",
       .keys = kFalconKeys,
       .constants = kFalconOneNorm,
       .defaults = {.bos = 11, .eos = 11},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = falcon_embed,
       .layer = cat({falcon_attention_mlp,
                     {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                      {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden}}}),
       .after = falcon_head,
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type falcon (mlx_lm/models/)"}});
  // gguf-py names ln_attn ATTN_NORM_2 and ln_mlp ATTN_NORM (tensor_mapping.py).
  add({.gguf_arch = "falcon",
       .model_type = "falcon",
       .class_name = "FalconForCausalLM",
       .keys = kFalconKeys,
       .constants = kFalconTwoNorms,
       .defaults = {.bos = 11, .eos = 11},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = falcon_embed,
       .layer = cat({falcon_attention_mlp,
                     {{"attn_norm_2.weight", "ln_attn.weight", Shape::kHidden},
                      {"attn_norm_2.bias", "ln_attn.bias", Shape::kHidden},
                      {"attn_norm.weight", "ln_mlp.weight", Shape::kHidden},
                      {"attn_norm.bias", "ln_mlp.bias", Shape::kHidden}}}),
       .after = falcon_head,
       .required_tensor = "attn_norm_2.weight",
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type falcon (mlx_lm/models/)"}});
}

}  // namespace ggufs::hf::table
