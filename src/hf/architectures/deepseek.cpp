// The rows of the classes llama.cpp's conversion/deepseek.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// deepseek.py, DeepseekV2Model.set_gguf_parameters (after base.py's): head_count_kv forced to 1
// (MLA as MQA), num_key_value_heads from head_count (the converter's kv_b split views the
// tensor by it, the class builds it by num_attention_heads: both equal); the leading dense
// layers, the LoRA ranks, the rope part of a head and the value head (key_length and
// value_length, Lkv + dr and Lkv, have no field), the nope part as key_length_mla less the rope
// part; the routing (base.py writes the groups); norm_topk_prob only when true. YaRN (every
// DeepSeek-V2, -V3 and -R1 config.json): base.py writes the rope_scaling keys; mscale_all_dim
// as a tenth of it, mscale not at all. llama.cpp runs deepseek2 with mscale = mscale_all_dim
// (src/llama-context.cpp, the yarn_attn_factor's DeepSeek-V2 case; 1.0 stays 1.0), as those
// configs have them (0.707 and 0.707, 1.0 and 1.0): hf/ writes that model.
constexpr ConfigKey kDeepseek2Keys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", kNumber},
    {"vocab_size", "vocab_size"},
    {"leading_dense_block_count", "first_k_dense_replace"},
    {"attention.q_lora_rank", "q_lora_rank"},
    {"attention.kv_lora_rank", "kv_lora_rank"},
    {"rope.dimension_count", "qk_rope_head_dim"},
    {"attention.key_length_mla", "qk_nope_head_dim", ValueKind::kDifference, "qk_rope_head_dim"},
    {"attention.value_length_mla", "v_head_dim"},
    {"expert_feed_forward_length", "moe_intermediate_size"},
    {"expert_count", "n_routed_experts"},
    {"expert_used_count", "num_experts_per_tok"},
    {"expert_group_count", "n_group"},
    {"expert_group_used_count", "topk_group"},
    {"expert_shared_count", "n_shared_experts"},
    {"expert_weights_scale", "routed_scaling_factor", kNumber},
    {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny},
    {"rope.scaling.yarn_log_multiplier", "rope_scaling.mscale_all_dim", ValueKind::kTenth},
    {"rope.scaling.yarn_log_multiplier", "rope_scaling.mscale", ValueKind::kTenth}};

// No q_lora_rank key: q_proj, no query LoRA (DeepSeek-V2-Lite). V3's norm_topk_prob is written
// only when true; its class default is true.
constexpr ConfigConstant kDeepseekV2Constants[] = {{"q_lora_rank", "null"}};

constexpr ConfigConstant kDeepseekV3Constants[] = {{"q_lora_rank", "null"},
                                                   {"norm_topk_prob", "false"}};

}  // namespace

void deepseek(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& scored_experts = b.scored_experts;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // DeepSeek-V2 and V3 (Kimi K2 too): MLA (modeling_deepseek_v2.py, DeepseekV2Attention): q_proj,
  // or the query LoRA (q_a_proj, its norm, q_b_proj); kv_a_proj_with_mqa, its norm, kv_b_proj,
  // which the converter splits into attn_k_b and attn_v_b (deepseek.py,
  // DeepseekV2Model.modify_tensors); dense layers before first_k_dense_replace, then the stacked
  // experts, the router and the shared experts as one MLP (V3's router with its correction bias,
  // the tensor that tells V3 from V2: V2's softmax router has none). q_proj or the query LoRA by
  // q_lora_rank: either is the file's.
  const std::vector<WeightEntry> mla_attention = cat(
      {conditional({{"attn_q.weight", "self_attn.q_proj.weight", Shape::kMlaQ},
                    {"attn_q_a.weight", "self_attn.q_a_proj.weight", Shape::kQLoraHidden},
                    {"attn_q_a_norm.weight", "self_attn.q_a_layernorm.weight", Shape::kQLora},
                    {"attn_q_b.weight", "self_attn.q_b_proj.weight", Shape::kMlaQB}}),
       {{"attn_kv_a_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight", Shape::kKvLoraRopeHidden},
        {"attn_kv_a_norm.weight", "self_attn.kv_a_layernorm.weight", Shape::kKvLora},
        {"attn_k_b.weight",
         "self_attn.kv_b_proj.weight",
         Shape::kMlaKvB,
         false,
         {"attn_v_b.weight"}},
        {"attn_output.weight", "self_attn.o_proj.weight", Shape::kMlaO}}});
  add({.gguf_arch = "deepseek2",
       .model_type = "deepseek_v2",
       .class_name = "DeepseekV2ForCausalLM",
       .keys = kDeepseek2Keys,
       .constants = kDeepseekV2Constants,
       .defaults =
           {.ff = 11008, .experts = 64, .expert_ff = 1407, .shared_experts = 2, .bos = 1, .eos = 2},
       .transforms = Transforms::kMla,
       .layer_prefix = kModelLayer,
       .before = embed,
       // V2's softmax router has no correction bias (modeling_deepseek_v2.py, DeepseekV2MoE): a
       // file holding one is V3's (required_tensor below).
       .layer = cat({mla_attention, gated_mlp, conditional(scored_experts, {"exp_probs_b.bias"}),
                     two_norms}),
       .after = norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 0},
       .mlx = {.experts = kMlxSwitchMlp}});
  add({.gguf_arch = "deepseek2",
       .model_type = "deepseek_v3",
       .class_name = "DeepseekV3ForCausalLM",
       .keys = kDeepseek2Keys,
       .constants = kDeepseekV3Constants,
       .defaults = {.ff = 18432,
                    .experts = 256,
                    .expert_ff = 2048,
                    .shared_experts = 1,
                    .bos = 0,
                    .eos = 1},
       .transforms = Transforms::kMla,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({mla_attention, gated_mlp, scored_experts, two_norms}),
       .after = norm_head,
       .required_tensor = "exp_probs_b.bias",
       .required_with = "ffn_gate_inp.weight",
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 3},
       .mlx = {.experts = kMlxSwitchMlp}});
}

}  // namespace ggufs::hf::table
