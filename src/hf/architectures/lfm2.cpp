// The rows of the classes llama.cpp's conversion/lfm2.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigConstant kMlxLfm2[] = {
    {"conv_bias", "false"}, {"block_multiple_of", "256"}, {"block_ffn_dim_multiplier", "1.0"}};

constexpr std::pair<std::string_view, std::string_view> kMlxLfm2Renamed[] = {
    {"block_dim", "hidden_size"}};

// lfm2.py, LFM2Model.set_gguf_parameters: num_key_value_heads as one count a layer, 0 for the
// short-convolution layers (the field the attention layers' count; layer_types from it), the
// convolution's cache length, norm_eps as the RMS epsilon, and feed_forward_length as the MLP's
// own width: block_auto_adjust_ff_dim's arithmetic already applied, so it is off here.
constexpr ConfigKey kLfm2Keys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads", ValueKind::kLayerMax},
    {"attention.layer_norm_rms_epsilon", "norm_eps", kNumber},
    {"vocab_size", "vocab_size"},
    {"shortconv.l_cache", "conv_L_cache"}};

constexpr ConfigConstant kLfm2Constants[] = {{"block_auto_adjust_ff_dim", "false"}};

// modeling_lfm2.py, Lfm2DecoderLayer: self_attn (with q/k layernorms) where layer_types says
// "full_attention", the short convolution elsewhere.
constexpr std::string_view kShortConvTensors[] = {
    "shortconv.conv.weight", "shortconv.in_proj.weight", "shortconv.out_proj.weight"};

constexpr LayerGroup kLfm2Groups[] = {{kNormedAttentionTensors, 1, "full_attention"},
                                      {kShortConvTensors, 1, "conv"}};

}  // namespace

void lfm2(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& embed = b.embed;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // LFM2: attention layers (q/k norms, out_proj) and short-convolution layers (lfm2.py
  // squeezes the Conv1d weight), each with the w1/w3/w2 MLP (modeling_lfm2.py,
  // Lfm2DecoderLayer); the final norm is embedding_norm.
  add({.gguf_arch = "lfm2",
       .model_type = "lfm2",
       .class_name = "Lfm2ForCausalLM",
       .keys = kLfm2Keys,
       .constants = kLfm2Constants,
       .defaults = {.kv_heads = 8, .ff = 12288, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_output.weight", "self_attn.out_proj.weight", Shape::kO},
                 {"attn_q_norm.weight", "self_attn.q_layernorm.weight", Shape::kHeadDim},
                 {"attn_k_norm.weight", "self_attn.k_layernorm.weight", Shape::kHeadDim},
                 {"shortconv.conv.weight", "conv.conv.weight", Shape::kHiddenOneConv},
                 {"shortconv.in_proj.weight", "conv.in_proj.weight", Shape::kThreeHiddenHidden},
                 {"shortconv.out_proj.weight", "conv.out_proj.weight", Shape::kHiddenHidden},
                 {"ffn_gate.weight", "feed_forward.w1.weight", Shape::kFfHidden},
                 {"ffn_up.weight", "feed_forward.w3.weight", Shape::kFfHidden},
                 {"ffn_down.weight", "feed_forward.w2.weight", Shape::kHiddenFf},
                 {"attn_norm.weight", "operator_norm.weight", Shape::kHidden},
                 {"ffn_norm.weight", "ffn_norm.weight", Shape::kHidden}},
       .after = {{"token_embd_norm.weight", "model.embedding_norm.weight", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .layer_types = {"attention.head_count_kv", "full_attention", "conv"},
       .layer_groups = kLfm2Groups,
       .mlx = {.defaults = kMlxLfm2, .renamed = kMlxLfm2Renamed}});
}

}  // namespace ggufs::hf::table
