// The rows of the classes llama.cpp's conversion/t5.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// t5.py, T5Model.set_gguf_parameters (n_positions written as 512 where the config has none;
// layer_norm_epsilon twice, as the RMS epsilon too).
constexpr ConfigKey kT5Keys[] = {
    {"context_length", "n_positions"},
    {"embedding_length", "d_model"},
    {"feed_forward_length", "d_ff"},
    {"block_count", "num_layers"},
    {"decoder_block_count", "num_decoder_layers"},
    {"attention.head_count", "num_heads"},
    {"attention.key_length", "d_kv"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber},
    {"attention.relative_buckets_count", "relative_attention_num_buckets"},
    {"decoder_start_token_id", "decoder_start_token_id", ValueKind::kTokenId}};

// The gated MLP the file's ffn_gate tensors are (T5 v1.1, Flan-T5; transformers' own import
// assumes it too, modeling_gguf_pytorch_utils.py, load_gguf_checkpoint).
constexpr ConfigConstant kT5Constants[] = {{"feed_forward_proj", R"("gated-gelu")"}};

// The t5 rows' MLP is the gated one (T5 v1.1, Flan-T5, UMT5): the original T5's ReLU MLP (no
// ffn_gate, DenseReluDense.wi) is another state_dict.
constexpr Refusal kT5Refusals[] = {{RefuseWhen::kTensorAbsent, "enc.blk.0.ffn_gate.weight",
                                    "T5's ReLU MLP, which hf/ does not render"}};

// modeling_t5.py, T5Stack: T5Block(has_relative_attention_bias=bool(i == 0)), in the encoder
// and the decoder (UMT5 holds it in every layer: its row lists none).
constexpr std::string_view kT5RelativeBiasTensors[] = {"attn_rel_b.weight"};

constexpr LayerGroup kT5RelativeBias[] = {
    {kT5RelativeBiasTensors, 0, "has_relative_attention_bias"}};

}  // namespace

void t5(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // T5 (modeling_t5.py): the encoder's layers, its final norm, the decoder's layers with the
  // cross-attention; the relative attention bias in layer 0 only (T5Attention's
  // has_relative_attention_bias); the embeddings as shared.weight (t5.py, T5Model.modify_tensors).
  const std::vector<WeightEntry> t5_self_attention = {
      {"attn_q.weight", "layer.0.SelfAttention.q.weight", Shape::kQ},
      {"attn_k.weight", "layer.0.SelfAttention.k.weight", Shape::kKv},
      {"attn_v.weight", "layer.0.SelfAttention.v.weight", Shape::kKv},
      {"attn_o.weight", "layer.0.SelfAttention.o.weight", Shape::kO},
      {"attn_rel_b.weight", "layer.0.SelfAttention.relative_attention_bias.weight",
       Shape::kBucketsHeads},
      {"attn_norm.weight", "layer.0.layer_norm.weight", Shape::kHidden}};
  // The gated MLP: layer.1 of an encoder layer, layer.2 of a decoder layer.
  const std::vector<WeightEntry> t5_encoder_mlp = {
      {"ffn_gate.weight", "layer.1.DenseReluDense.wi_0.weight", Shape::kFfHidden},
      {"ffn_up.weight", "layer.1.DenseReluDense.wi_1.weight", Shape::kFfHidden},
      {"ffn_down.weight", "layer.1.DenseReluDense.wo.weight", Shape::kHiddenFf},
      {"ffn_norm.weight", "layer.1.layer_norm.weight", Shape::kHidden}};
  const std::vector<WeightEntry> t5_decoder_mlp = {
      {"ffn_gate.weight", "layer.2.DenseReluDense.wi_0.weight", Shape::kFfHidden},
      {"ffn_up.weight", "layer.2.DenseReluDense.wi_1.weight", Shape::kFfHidden},
      {"ffn_down.weight", "layer.2.DenseReluDense.wo.weight", Shape::kHiddenFf},
      {"ffn_norm.weight", "layer.2.layer_norm.weight", Shape::kHidden}};
  add({.gguf_arch = "t5",
       .model_type = "t5",
       .class_name = "T5ForConditionalGeneration",
       .keys = kT5Keys,
       .constants = kT5Constants,
       .defaults = {.head_dim = 64, .ff = 2048, .eos = 1, .pad = 0},
       .layer_prefix = "encoder.block.{}.",
       .before = {{"token_embd.weight", "shared.weight", Shape::kVocabHidden}},
       .layer = cat({t5_self_attention, t5_encoder_mlp}),
       .after = {{"dec.output_norm.weight", "decoder.final_layer_norm.weight", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .decoder_prefix = "decoder.block.{}.",
       .decoder_layer =
           cat({t5_self_attention,
                {{"cross_attn_q.weight", "layer.1.EncDecAttention.q.weight", Shape::kQ},
                 {"cross_attn_k.weight", "layer.1.EncDecAttention.k.weight", Shape::kKv},
                 {"cross_attn_v.weight", "layer.1.EncDecAttention.v.weight", Shape::kKv},
                 {"cross_attn_o.weight", "layer.1.EncDecAttention.o.weight", Shape::kO},
                 {"cross_attn_norm.weight", "layer.1.layer_norm.weight", Shape::kHidden}},
                t5_decoder_mlp}),
       .between = {{"enc.output_norm.weight", "encoder.final_layer_norm.weight", Shape::kHidden}},
       .layer_groups = kT5RelativeBias,
       .refusals = kT5Refusals,
       .leading_layers = {"has_relative_attention_bias", "T5Stack", 1},
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type t5 (mlx_lm/models/)"}});
  // UMT5 (modeling_umt5.py): T5's state_dict with a relative attention bias in every layer
  // (UMT5Block's has_relative_attention_bias=True); the converter writes it as t5 (t5.py,
  // T5Model registers UMT5ForConditionalGeneration).
  Architecture umt5 = rows.back();
  umt5.model_type = "umt5";
  umt5.class_name = "UMT5ForConditionalGeneration";
  umt5.required_tensor = "attn_rel_b.weight";
  umt5.required_from_layer = 1;
  umt5.layer_groups = {};
  umt5.leading_layers = {};
  umt5.mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type umt5 (mlx_lm/models/)"};
  add(std::move(umt5));
}

}  // namespace ggufs::hf::table
