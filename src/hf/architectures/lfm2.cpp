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

// lfm2.py, LFM2MoeModel.set_gguf_parameters: LFM2's keys, the experts (base.py), their width,
// the leading dense layers and sigmoid gating (the class's only routing, not read).
// routed_scaling_factor and norm_topk_prob are not written: the class defaults (1.0 and true,
// as LFM2-8B-A1B).
constexpr ConfigKey kLfm2MoeOwn[] = {{"expert_count", "num_experts"},
                                     {"expert_used_count", "num_experts_per_tok"},
                                     {"expert_feed_forward_length", "moe_intermediate_size"},
                                     {"leading_dense_block_count", "num_dense_layers"}};
constexpr auto kLfm2MoeKeys = join(kLfm2Keys, kLfm2MoeOwn);
constexpr TensorFlag kLfm2MoeFlags[] = {{"exp_probs_b.bias", "use_expert_bias"}};

// The mixer of a layer by layer_types, its MLP by num_dense_layers (modeling_lfm2_moe.py,
// Lfm2MoeDecoderLayer): two sets of alternatives.
constexpr LayerGroup kLfm2MoeGroups[] = {{kNormedAttentionTensors, 1, "full_attention"},
                                         {kShortConvTensors, 1, "conv"},
                                         {kDenseMlpTensors, 2, "dense"},
                                         {kMoeTensors, 2, "moe"}};

// mlx-lm's lfm2_moe.py requires norm_topk_prob and conv_bias; its sanitize stacks the experts
// into switch_mlp's gate_proj, up_proj and down_proj, names it leaves.
constexpr ConfigConstant kMlxLfm2Moe[] = {{"norm_topk_prob", "true"}, {"conv_bias", "false"}};
constexpr std::pair<std::string_view, std::string_view> kMlxLfm2MoeExperts[] = {
    {"feed_forward.experts.{}.w1.weight", "feed_forward.switch_mlp.gate_proj.weight"},
    {"feed_forward.experts.{}.w3.weight", "feed_forward.switch_mlp.up_proj.weight"},
    {"feed_forward.experts.{}.w2.weight", "feed_forward.switch_mlp.down_proj.weight"}};

}  // namespace

void lfm2(Rows& rows) {
  const Blocks& b = blocks();
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // A layer's mixer, attention (q/k norms, out_proj) or the short convolution (lfm2.py squeezes
  // the Conv1d weight), its w1/w3/w2 MLP and its norms (modeling_lfm2.py, Lfm2DecoderLayer).
  const std::vector<WeightEntry> mixers = {
      {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
      {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
      {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
      {"attn_output.weight", "self_attn.out_proj.weight", Shape::kO},
      {"attn_q_norm.weight", "self_attn.q_layernorm.weight", Shape::kHeadDim},
      {"attn_k_norm.weight", "self_attn.k_layernorm.weight", Shape::kHeadDim},
      {"shortconv.conv.weight", "conv.conv.weight", Shape::kHiddenOneConv},
      {"shortconv.in_proj.weight", "conv.in_proj.weight", Shape::kThreeHiddenHidden},
      {"shortconv.out_proj.weight", "conv.out_proj.weight", Shape::kHiddenHidden}};
  const std::vector<WeightEntry> dense_mlp = {
      {"ffn_gate.weight", "feed_forward.w1.weight", Shape::kFfHidden},
      {"ffn_up.weight", "feed_forward.w3.weight", Shape::kFfHidden},
      {"ffn_down.weight", "feed_forward.w2.weight", Shape::kHiddenFf}};
  const std::vector<WeightEntry> norms = {
      {"attn_norm.weight", "operator_norm.weight", Shape::kHidden},
      {"ffn_norm.weight", "ffn_norm.weight", Shape::kHidden}};
  // The final norm is embedding_norm.
  const std::vector<WeightEntry> after = {
      {"token_embd_norm.weight", "model.embedding_norm.weight", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden}};
  add({.gguf_arch = "lfm2",
       .model_type = "lfm2",
       .class_name = "Lfm2ForCausalLM",
       .keys = kLfm2Keys,
       .constants = kLfm2Constants,
       .defaults = {.kv_heads = 8, .ff = 12288, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = b.embed,
       .layer = cat({mixers, dense_mlp, norms}),
       .after = after,
       .layer_types = {"attention.head_count_kv", "full_attention", "conv"},
       .layer_groups = kLfm2Groups,
       .mlx = {.defaults = kMlxLfm2, .renamed = kMlxLfm2Renamed}});
  // LFM2-MoE (modeling_lfm2_moe.py): LFM2's mixers; the first num_dense_layers layers with
  // LFM2's MLP, the others with the router, its expert_bias (a buffer, under use_expert_bias)
  // and the experts, which lfm2.py stacks (LFM2MoeModel.modify_tensors).
  add({.gguf_arch = "lfm2moe",
       .model_type = "lfm2_moe",
       .class_name = "Lfm2MoeForCausalLM",
       .keys = kLfm2MoeKeys,
       .defaults = {.kv_heads = 8,
                    .ff = 7168,
                    .experts = 32,
                    .expert_ff = 1792,
                    .bos = 1,
                    .eos = 2,
                    .pad = 0},
       .layer_prefix = kModelLayer,
       .before = b.embed,
       .layer =
           cat({mixers,
                dense_mlp,
                {{"ffn_gate_inp.weight", "feed_forward.gate.weight", Shape::kRouter},
                 {"exp_probs_b.bias", "feed_forward.expert_bias", Shape::kExperts, false, {}, true},
                 {"ffn_gate_exps.weight", "feed_forward.experts.{}.w1.weight",
                  Shape::kExpertFfHidden, true},
                 {"ffn_up_exps.weight", "feed_forward.experts.{}.w3.weight", Shape::kExpertFfHidden,
                  true},
                 {"ffn_down_exps.weight", "feed_forward.experts.{}.w2.weight",
                  Shape::kExpertHiddenFf, true}},
                norms}),
       .after = after,
       .tensor_flags = kLfm2MoeFlags,
       .layer_types = {"attention.head_count_kv", "full_attention", "conv"},
       .layer_groups = kLfm2MoeGroups,
       .moe_layers = {.from = "num_dense_layers"},
       .mlx = {.defaults = kMlxLfm2Moe, .experts = kMlxLfm2MoeExperts}});
}

}  // namespace ggufs::hf::table
