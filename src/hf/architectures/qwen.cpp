// The rows of the classes llama.cpp's conversion/qwen.py, qwenvl.py, qwen3vl.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// qwen.py, Qwen2MoeModel.set_gguf_parameters: the expert widths.
constexpr auto kQwen2MoeKeys =
    base_and({{"expert_count", "num_experts"},
              {"expert_used_count", "num_experts_per_tok"},
              {"expert_feed_forward_length", "moe_intermediate_size"},
              {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"}});

constexpr auto kQwen3MoeKeys = base_and({{"attention.key_length", "head_dim"},
                                         {"expert_count", "num_experts"},
                                         {"expert_used_count", "num_experts_per_tok"},
                                         {"expert_feed_forward_length", "moe_intermediate_size"}});

// Qwen3MoeConfig.norm_topk_prob defaults to False; every Qwen3-MoE checkpoint (config.json of
// Qwen3-30B-A3B, Qwen3-235B-A22B) sets it True, as transformers 5.24.0's own GGUF import does
// (integrations/ggml.py). The converter does not write it.
constexpr ConfigConstant kQwen3MoeConstants[] = {{"norm_topk_prob", "true"}};

constexpr ConfigConstant kMlxSparseStep[] = {{"decoder_sparse_step", "1"},  // Qwen3(Moe|Next)
                                             {"mlp_only_layers", "[]"}};

// qwen.py, Qwen3NextModel.set_gguf_parameters (after Qwen2MoeModel's and base.py's): the
// experts, the gated delta net's conv kernel, key head size and count (state_size, group_count),
// value head count (time_step_rank) and inner size (value heads · their size), the layer pattern
// (Architecture::layer_types), and the rotary dimensions, head_dim · partial_rotary_factor.
constexpr auto kQwen3NextKeys = base_and(
    {{"attention.key_length", "head_dim"},
     {"expert_count", "num_experts"},
     {"expert_used_count", "num_experts_per_tok"},
     {"expert_feed_forward_length", "moe_intermediate_size"},
     {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"},
     {"ssm.conv_kernel", "linear_conv_kernel_dim"},
     {"ssm.state_size", "linear_key_head_dim"},
     {"ssm.group_count", "linear_num_key_heads"},
     {"ssm.time_step_rank", "linear_num_value_heads"},
     {"ssm.inner_size", "linear_value_head_dim", ValueKind::kQuotient, "linear_num_value_heads"},
     {"rope.dimension_count", "partial_rotary_factor", ValueKind::kQuotient, "head_dim"}});

// qwen.py, Qwen3_5TextModel and Qwen3_5MoeTextModel: Qwen3NextModel's keys (the MoE's with
// its experts); the rope dimension sections it writes are MRoPE's, which text alone does not use.
constexpr ConfigKey kQwen35Own[] = {
    {"attention.key_length", "head_dim"},
    {"ssm.conv_kernel", "linear_conv_kernel_dim"},
    {"ssm.state_size", "linear_key_head_dim"},
    {"ssm.group_count", "linear_num_key_heads"},
    {"ssm.time_step_rank", "linear_num_value_heads"},
    {"ssm.inner_size", "linear_value_head_dim", ValueKind::kQuotient, "linear_num_value_heads"},
    {"rope.dimension_count", "partial_rotary_factor", ValueKind::kQuotient, "head_dim"}};

constexpr auto kQwen35Keys = join(kBaseKeys, kQwen35Own);

constexpr ConfigKey kQwen35MoeExperts[] = {
    {"expert_count", "num_experts"},
    {"expert_used_count", "num_experts_per_tok"},
    {"expert_feed_forward_length", "moe_intermediate_size"},
    {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"}};

constexpr auto kQwen35MoeKeys = join(kBaseKeys, kQwen35Own, kQwen35MoeExperts);

// modeling_qwen3_next.py, Qwen3NextDecoderLayer (and modeling_qwen3_5.py's): the gated delta
// net where layer_types says "linear_attention", gated attention with q/k norms where it says
// "full_attention"; in_proj_qkvz's split (attn_qkv, attn_gate) and in_proj_ba (ssm_ba) are
// qwen3next's, in_proj_b and in_proj_a (ssm_beta, ssm_alpha) Qwen3.5's.
constexpr std::string_view kGatedDeltaNetTensors[] = {
    "ssm_dt.bias",     "ssm_a",           "ssm_conv1d.weight", "ssm_norm.weight",
    "ssm_out.weight",  "attn_qkv.weight", "attn_gate.weight",  "ssm_ba.weight",
    "ssm_beta.weight", "ssm_alpha.weight"};

constexpr LayerGroup kQwenLinearOrFull[] = {{kGatedDeltaNetTensors, 1, "linear_attention"},
                                            {kNormedAttentionTensors, 1, "full_attention"}};

}  // namespace

void qwen(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& experts = b.experts;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Qwen2MoeSparseMoeBlock's shared expert and its sigmoid gate.
  const std::vector<WeightEntry> shared_expert = {
      {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight", Shape::kSharedFfHidden},
      {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight", Shape::kSharedFfHidden},
      {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight", Shape::kHiddenSharedFf},
      {"ffn_gate_inp_shexp.weight", "mlp.shared_expert_gate.weight", Shape::kOneHidden},
  };
  const Architecture qwen2{.gguf_arch = "qwen2",
                           .model_type = "qwen2",
                           .class_name = "Qwen2ForCausalLM",
                           .keys = kBaseKeys,
                           .defaults = {.kv_heads = 32, .ff = 22016},
                           .layer_prefix = kModelLayer,
                           .before = embed,
                           .layer = cat({biased_attention, gated_mlp, two_norms}),
                           .after = norm_head};
  add(qwen2);
  // Qwen2-VL's and Qwen2.5-VL's language model (qwenvl.py, Qwen2VLModel: qwen2's tensors, and
  // its M-RoPE sections as rope.dimension_sections): Qwen2's decoder, which on text alone is the
  // same model (modeling_qwen2_vl.py, get_rope_index: text positions are equal on all three
  // axes, so each section rotates as plain RoPE does). hf/ of the pair with its projector is
  // the ...ForConditionalGeneration class (hf_vision.cpp).
  Architecture qwen2vl = qwen2;
  qwen2vl.gguf_arch = "qwen2vl";
  add(std::move(qwen2vl));
  add({.gguf_arch = "qwen2moe",
       .model_type = "qwen2_moe",
       .class_name = "Qwen2MoeForCausalLM",
       .keys = kQwen2MoeKeys,
       .defaults =
           {.kv_heads = 16, .ff = 5632, .experts = 60, .expert_ff = 1408, .shared_expert_ff = 5632},
       .transforms = Transforms::kMoe,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention, experts, shared_expert, two_norms}),
       .after = norm_head,
       .mlx = {.experts = kMlxSwitchMlp}});
  const Architecture qwen3{.gguf_arch = "qwen3",
                           .model_type = "qwen3",
                           .class_name = "Qwen3ForCausalLM",
                           .keys = kQwen3Keys,
                           .defaults = {.kv_heads = 32, .head_dim = 128, .ff = 22016},
                           .layer_prefix = kModelLayer,
                           .before = embed,
                           .layer = cat({llama_attention, qk_norms, gated_mlp, two_norms}),
                           .after = norm_head};
  add(qwen3);
  // Qwen3-VL's language model (qwen3vl.py, Qwen3VLTextModel: qwen3's tensors, its interleaved
  // M-RoPE sections and n_deepstack_layers): Qwen3's decoder, the same model on text (the
  // deepstack features join only an image's positions). hf/ of the pair with its projector is
  // Qwen3VLForConditionalGeneration (hf_vision.cpp).
  Architecture qwen3vl = qwen3;
  qwen3vl.gguf_arch = "qwen3vl";
  add(std::move(qwen3vl));
  add({.gguf_arch = "qwen3moe",
       .model_type = "qwen3_moe",
       .class_name = "Qwen3MoeForCausalLM",
       .keys = kQwen3MoeKeys,
       .constants = kQwen3MoeConstants,
       .defaults = {.kv_heads = 4, .ff = 6144, .experts = 128, .expert_ff = 768},
       .transforms = Transforms::kMoe,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, qk_norms, experts, two_norms}),
       .after = norm_head,
       .mlx = {.defaults = kMlxSparseStep, .experts = kMlxSwitchMlp}});
  // Qwen3-Next: gated delta net layers and gated attention layers (q_proj holds the output
  // gate too), each with Qwen2-MoE's experts and gated shared expert (modeling_qwen3_next.py,
  // Qwen3NextGatedDeltaNet, Qwen3NextAttention, Qwen3NextSparseMoeBlock). The converter
  // renames dt_bias dt_proj.bias, squeezes conv1d and splits in_proj_qkvz (qwen.py,
  // Qwen3NextModel.modify_tensors).
  add({.gguf_arch = "qwen3next",
       .model_type = "qwen3_next",
       .class_name = "Qwen3NextForCausalLM",
       .keys = kQwen3NextKeys,
       .defaults = {.kv_heads = 2,
                    .head_dim = 256,
                    .ff = 5632,
                    .experts = 512,
                    .expert_ff = 512,
                    .shared_expert_ff = 512},
       .transforms = Transforms::kQwen3Next,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {{{"ssm_dt.bias", "linear_attn.dt_bias", Shape::kSsmHeads},
             {"ssm_a", "linear_attn.A_log", Shape::kSsmHeads},
             {"ssm_conv1d.weight", "linear_attn.conv1d.weight", Shape::kConvChannelsOneKernel},
             {"attn_qkv.weight",
              "linear_attn.in_proj_qkvz.weight",
              Shape::kLinearQkvz,
              false,
              {"attn_gate.weight"}},
             {"ssm_ba.weight", "linear_attn.in_proj_ba.weight", Shape::kTwoRankHidden},
             {"ssm_norm.weight", "linear_attn.norm.weight", Shape::kValueHeadDim},
             {"ssm_out.weight", "linear_attn.out_proj.weight", Shape::kHiddenInner},
             {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQGate},
             {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
             {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
             {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO}},
            qk_norms,
            experts,
            shared_expert,
            {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .layer_types = {"attention.recurrent_layers", "linear_attention", "full_attention"},
       .layer_groups = kQwenLinearOrFull,
       .mlx = {.defaults = kMlxSparseStep}});
  // Qwen3.5 (transformers 5.x): Qwen3-Next's layers with the projections unfused
  // (modeling_qwen3_5.py, Qwen3_5GatedDeltaNet: in_proj_qkv, in_proj_z, in_proj_b, in_proj_a).
  const std::vector<WeightEntry> qwen35_layer = {
      {"ssm_dt.bias", "linear_attn.dt_bias", Shape::kSsmHeads},
      {"ssm_a", "linear_attn.A_log", Shape::kSsmHeads},
      {"ssm_conv1d.weight", "linear_attn.conv1d.weight", Shape::kConvChannelsOneKernel},
      {"ssm_norm.weight", "linear_attn.norm.weight", Shape::kValueHeadDim},
      {"ssm_out.weight", "linear_attn.out_proj.weight", Shape::kHiddenInner},
      {"attn_qkv.weight", "linear_attn.in_proj_qkv.weight", Shape::kLinearQkv},
      {"attn_gate.weight", "linear_attn.in_proj_z.weight", Shape::kInnerHidden},
      {"ssm_beta.weight", "linear_attn.in_proj_b.weight", Shape::kRankHidden},
      {"ssm_alpha.weight", "linear_attn.in_proj_a.weight", Shape::kRankHidden},
      {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQGate},
      {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
      {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
      {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
      {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadDim},
      {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kHeadDim}};
  const std::vector<WeightEntry> qwen35_norms = {
      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
      {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}};
  add({.gguf_arch = "qwen35",
       .model_type = "qwen3_5_text",
       .class_name = "Qwen3_5ForCausalLM",
       .keys = kQwen35Keys,
       .defaults = {.kv_heads = 4, .head_dim = 256, .ff = 12288},
       .transforms = Transforms::kQwen35,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({qwen35_layer, gated_mlp, qwen35_norms}),
       .after = norm_head,
       .layer_types = {"attention.recurrent_layers", "linear_attention", "full_attention"},
       .layer_groups = kQwenLinearOrFull,
       .mlx = {.absent =
                   "mlx-lm 0.32.2 has no model of model_type qwen3_5_text (mlx_lm/models/)"}});
  add({.gguf_arch = "qwen35moe",
       .model_type = "qwen3_5_moe_text",
       .class_name = "Qwen3_5MoeForCausalLM",
       .keys = kQwen35MoeKeys,
       .defaults = {.kv_heads = 2,
                    .head_dim = 256,
                    .experts = 256,
                    .expert_ff = 512,
                    .shared_expert_ff = 512},
       .transforms = Transforms::kQwen35,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({qwen35_layer, experts, shared_expert, qwen35_norms}),
       .after = norm_head,
       .layer_types = {"attention.recurrent_layers", "linear_attention", "full_attention"},
       .layer_groups = kQwenLinearOrFull,
       .mlx = {.absent =
                   "mlx-lm 0.32.2 has no model of model_type qwen3_5_moe_text (mlx_lm/models/)"}});
}

}  // namespace ggufs::hf::table
