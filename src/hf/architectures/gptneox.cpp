// The rows of the classes llama.cpp's conversion/gptneox.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// gptneox.py, GPTNeoXModel.set_gguf_parameters: its own keys, rotary_pct as rotary dimensions
// per head, no rope base (rotary_emb_base is not written) and no vocabulary size.
constexpr ConfigKey kGptNeoXKeys[] = {
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"rope.dimension_count", "rotary_pct", ValueKind::kRotaryFraction},
    {"attention.head_count", "num_attention_heads"},
    {"use_parallel_residual", "use_parallel_residual", ValueKind::kAny},
    {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber}};

constexpr TensorFlag kGptNeoXFlags[] = {{"attn_qkv.bias", "attention_bias"}};

// GPTNeoXConfig's rope_theta was rotary_emb_base; lfm2.py's block_dim is the Hub configs'
// hidden size (LFM2's own config.json files).
constexpr std::pair<std::string_view, std::string_view> kMlxGptNeoXRenamed[] = {
    {"rotary_emb_base", "rope_theta"}};

}  // namespace

void gptneox(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // GPT-NeoX: LayerNorms with biases, the fused query_key_value per head [q, k, v] (regrouped
  // by the converter, gptneox.py GPTNeoXModel.modify_tensors), biased dense and MLP, untied
  // embed_out (modeling_gpt_neox.py); the attention's biases under attention_bias
  // (GPTNeoXAttention), which the tensors set (kGptNeoXFlags).
  add({.gguf_arch = "gptneox",
       .model_type = "gpt_neox",
       .class_name = "GPTNeoXForCausalLM",
       .keys = kGptNeoXKeys,
       .defaults = {.ff = 24576, .bos = 0, .eos = 2},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "gpt_neox.layers.{}.",
       .before = {{"token_embd.weight", "gpt_neox.embed_in.weight", Shape::kVocabHidden}},
       .layer = {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
                 {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden},
                 {"attn_qkv.weight", "attention.query_key_value.weight", Shape::kFusedQkv},
                 {.gguf = "attn_qkv.bias",
                  .hf = "attention.query_key_value.bias",
                  .shape = Shape::kThreeHidden,
                  .optional = true},
                 {"attn_output.weight", "attention.dense.weight", Shape::kHiddenHidden},
                 {.gguf = "attn_output.bias",
                  .hf = "attention.dense.bias",
                  .shape = Shape::kHidden,
                  .optional = true},
                 {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.dense_h_to_4h.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.dense_4h_to_h.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "gpt_neox.final_layer_norm.weight", Shape::kHidden},
                 {"output_norm.bias", "gpt_neox.final_layer_norm.bias", Shape::kHidden},
                 {"output.weight", "embed_out.weight", Shape::kVocabHidden}},
       .tensor_flags = kGptNeoXFlags,
       .mlx = {.renamed = kMlxGptNeoXRenamed}});
}

}  // namespace ggufs::hf::table
