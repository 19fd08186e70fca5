// The rows of the classes llama.cpp's conversion/bloom.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// Every Falcon the converter converts has new_decoder_architecture's fused QKV per KV group:
// falcon.py reads the KV heads from num_kv_heads, which FalconConfig sets to the head count
// when absent, so a multi-query falcon-7b config (no num_kv_heads) fails its view. Falcon-40B
// and -180B have two norms (ln_attn, ln_mlp), Falcon2-11B one (num_ln_in_parallel_attn 1);
// with one KV head the layout is multi_query's, and the model the same (modeling_falcon.py).
// bloom.py, BloomModel.set_gguf_parameters: its own keys; context_length (seq_length, else the
// hidden size), feed_forward_length (4 · hidden) and head_count_kv (the head count) are no
// config fields.
constexpr ConfigKey kBloomKeys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "n_layer"},
    {"attention.head_count", "n_head"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};

}  // namespace

void bloom(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // BLOOM: the embedding's LayerNorm, the fused query_key_value per head [q, k, v] (regrouped by
  // the converter, bloom.py BloomModel.modify_tensors, which also drops "transformer."),
  // biased LayerNorms, dense and MLP; ALiBi, no rotary; tied lm_head (modeling_bloom.py).
  add({.gguf_arch = "bloom",
       .model_type = "bloom",
       .class_name = "BloomForCausalLM",
       .keys = kBloomKeys,
       .defaults = {.bos = 1, .eos = 2},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = {{"token_embd.weight", "transformer.word_embeddings.weight", Shape::kVocabHidden},
                  {"token_embd_norm.weight", "transformer.word_embeddings_layernorm.weight",
                   Shape::kHidden},
                  {"token_embd_norm.bias", "transformer.word_embeddings_layernorm.bias",
                   Shape::kHidden}},
       .layer = {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
                 {"attn_qkv.weight", "self_attention.query_key_value.weight", Shape::kFusedQkv},
                 {"attn_qkv.bias", "self_attention.query_key_value.bias", Shape::kThreeHidden},
                 {"attn_output.weight", "self_attention.dense.weight", Shape::kHiddenHidden},
                 {"attn_output.bias", "self_attention.dense.bias", Shape::kHidden},
                 {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden},
                 {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.dense_h_to_4h.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.dense_4h_to_h.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
                 {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type bloom (mlx_lm/models/)"}});
}

}  // namespace ggufs::hf::table
