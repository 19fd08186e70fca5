// The rows of the classes llama.cpp's conversion/glm.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

constexpr ConfigConstant kMlxGlm4[] = {{"attention_bias", "true"},
                                       {"partial_rotary_factor", "0.5"}};

constexpr ConfigConstant kMlxGlm4Moe[] = {{"rope_scaling", "null"},
                                          {"partial_rotary_factor", "0.5"}};

// glm.py, Glm4MoeModel.set_gguf_parameters (after base.py's): the experts, the leading dense
// layers, the routing, and the MTP layers it appends to block_count (Architecture::
// appended_layers); head_dim as key_length (base.py). rope.dimension_count is head_dim ·
// partial_rotary_factor: the factor is the class default (GLM-4.5's 0.5).
constexpr auto kGlm4MoeKeys = base_and({{"attention.key_length", "head_dim"},
                                        {"expert_count", "n_routed_experts"},
                                        {"expert_used_count", "num_experts_per_tok"},
                                        {"expert_group_count", "n_group"},
                                        {"expert_group_used_count", "topk_group"},
                                        {"expert_feed_forward_length", "moe_intermediate_size"},
                                        {"expert_shared_count", "n_shared_experts"},
                                        {"leading_dense_block_count", "first_k_dense_replace"},
                                        {"expert_weights_scale", "routed_scaling_factor", kNumber},
                                        {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny},
                                        {"nextn_predict_layers", "num_nextn_predict_layers"}});

// glm.py, GlmMoeDsaModel.set_gguf_parameters: DeepSeek-V2's keys (it is a DeepseekV2Model) and
// DSA's (kDsaKeys); rope.dimension_count the rope part · partial_rotary_factor, which
// GlmMoeDsaConfig does not have (1). The layers running their own indexer ("full") as true in
// attention.indexer.types, the others ("shared") reusing the previous full layer's top-k
// (modeling_glm_moe_dsa.py, GlmMoeDsaAttention: no indexer).
constexpr auto kGlmDsaKeys = join(kDeepseek2Keys, kDsaKeys);
constexpr ConfigConstant kGlmDsaConstants[] = {{"norm_topk_prob", "false"}};
constexpr LayerGroup kGlmDsaGroups[] = {
    {kDenseMlpTensors, 1, "dense"}, {kMoeTensors, 1, "moe"}, {kDsaIndexerTensors, 0, "full"}};

constexpr TensorFlag kGlm4MoeFlags[] = {{"attn_q_norm.weight", "use_qk_norm"},
                                        {"attn_q.bias", "attention_bias"}};

}  // namespace

void glm(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& biased_attention = b.biased_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& scored_experts = b.scored_experts;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // GLM-4-0414 keeps gate_up_proj fused, as ffn_up (gguf-py's FFN_UP); its sandwich norms are
  // ATTN_POST_NORM and FFN_POST_NORM (tensor_mapping.py). rope.dimension_count is
  // head_dim · partial_rotary_factor (glm.py, Glm4Model.set_gguf_parameters): the factor is the
  // class default. The converter always writes eos (Glm4Model.set_vocab); Glm4Config's is a list,
  // [151329, 151336, 151338], of which the first stands here (only whether it is None is read).
  add({.gguf_arch = "glm4",
       .model_type = "glm4",
       .class_name = "Glm4ForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.kv_heads = 2, .head_dim = 128, .ff = 13696, .eos = 151329, .pad = 151329},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({biased_attention,
                {{"ffn_up.weight", "mlp.gate_up_proj.weight", Shape::kFusedGateUp},
                 {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf},
                 {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_attention_norm.weight", "post_self_attn_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_mlp_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .mlx = {.defaults = kMlxGlm4}});
  // GLM-4.5: q/k/v biases and q/k norms where the tensors show them (attention_bias and
  // use_qk_norm, modeling_glm4_moe.py, Glm4MoeAttention; kGlm4MoeFlags), dense layers before
  // first_k_dense_replace, then the experts (glm.py, Glm4MoeModel.modify_tensors stacks
  // mlp.experts.X.*), the router with its correction bias (a buffer) and the shared experts as
  // one MLP moe_intermediate_size · n_shared_experts wide (modeling_glm4_moe.py, Glm4MoeMoE).
  // gguf-py's GLM4_MOE tensors name post_attention_layernorm ATTN_POST_NORM.
  // The MTP layers past num_hidden_layers, which the class does not load, are not served.
  add({.gguf_arch = "glm4moe",
       .model_type = "glm4_moe",
       .class_name = "Glm4MoeForCausalLM",
       .keys = kGlm4MoeKeys,
       .defaults =
           {.kv_heads = 8, .ff = 10944, .experts = 128, .expert_ff = 1408, .shared_experts = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {conditional(biased_attention, {"attn_q.bias", "attn_k.bias", "attn_v.bias"}),
            conditional(qk_norms),
            gated_mlp,
            scored_experts,
            {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .tensor_flags = kGlm4MoeFlags,
       .appended_layers = "nextn_predict_layers",
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 1},
       .mlx = {.defaults = kMlxGlm4Moe, .experts = kMlxSwitchMlp}});
  // GLM-5: DeepSeek-V3.2's model (MLA with the query LoRA, the DSA indexer, dense then
  // scored experts) with the indexer in the "full" layers only (indexer_types).
  add({.gguf_arch = "glm-dsa",
       .model_type = "glm_moe_dsa",
       .class_name = "GlmMoeDsaForCausalLM",
       .keys = kGlmDsaKeys,
       .constants = kGlmDsaConstants,
       .defaults = {.ff = 12288,
                    .experts = 256,
                    .expert_ff = 2048,
                    .shared_experts = 1,
                    .bos = 0,
                    .eos = 1},
       .transforms = Transforms::kMla,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({b.mla_query_lora, b.mla_kv_lora, b.dsa_indexer, gated_mlp, scored_experts,
                     b.two_norms}),
       .after = norm_head,
       .layer_types = {"attention.indexer.types", "full", "shared", "indexer_types"},
       .appended_layers = "nextn_predict_layers",
       .layer_groups = kGlmDsaGroups,
       .moe_layers = {"first_k_dense_replace", "", 3},
       .mlx = {.absent = "mlx-lm 0.32.2's glm_moe_dsa.py builds the indexer in every layer (it "
                         "has no indexer_types: a 'shared' layer reuses another's top-k)"}});
}

}  // namespace ggufs::hf::table
