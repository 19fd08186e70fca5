// The rows of the classes llama.cpp's conversion/hunyuan.py converts (table.h).
#include <string>

#include "../config_fields.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

// The converter writes eod_token_id as the eos id (hunyuan.py, HunYuanModel.set_vocab); the
// config's eod_token_id (HunYuanDenseV1Config's default 3) is the file's eos id, null without one.
std::string eod_is_eos(ConfigFields& f) {
  if (f.config.contains("eos_token_id")) f.config["eod_token_id"] = f.config["eos_token_id"];
  return "";
}
constexpr ConfigQuirk kHunyuanQuirks[] = {{QuirkStage::kTokenIds, eod_is_eos}};

// hunyuan.py, HYV3Model.set_gguf_parameters (after base.py's): the experts' width, the shared
// experts' as it times num_shared_experts, router_scaling_factor, and the MTP layers it appends
// to block_count (Architecture::appended_layers; none served). route_norm (a Hub config field
// the class does not have: it always normalises, modeling_hy_v3.py, HYV3TopKRouter) as
// expert_weights_norm: a file with it false is refused. The gating is sigmoid, the class's only.
constexpr auto kHyV3Keys = base_and({{"attention.key_length", "head_dim"},
                                     {"expert_count", "num_experts"},
                                     {"expert_used_count", "num_experts_per_tok"},
                                     {"expert_feed_forward_length", "moe_intermediate_size"},
                                     {"expert_shared_feed_forward_length", "num_shared_experts",
                                      ValueKind::kQuotient, "moe_intermediate_size"},
                                     {"expert_weights_scale", "router_scaling_factor", kNumber},
                                     {"nextn_predict_layers", "num_nextn_predict_layers"}});

constexpr Refusal kHyV3Refusals[] = {
    {RefuseWhen::kKeyFalse, "expert_weights_norm",
     "HYV3ForCausalLM always normalises the chosen experts' weights (modeling_hy_v3.py, "
     "HYV3TopKRouter)"}};

// The MLP of a layer: the dense one, or the router with its expert_bias (the converter keeps
// its name, blk.N.exp_probs_b, without a suffix), the stacked experts and the shared MLP.
constexpr std::string_view kHyV3MoeTensors[] = {"ffn_gate_inp.weight",  "exp_probs_b",
                                                "ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                "ffn_down_exps.weight", "ffn_gate_shexp.weight",
                                                "ffn_up_shexp.weight",  "ffn_down_shexp.weight"};
constexpr LayerGroup kHyV3Groups[] = {{kDenseMlpTensors, 1, "dense"},
                                      {kHyV3MoeTensors, 1, "sparse"}};

}  // namespace

void hunyuan(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  // Hunyuan dense: per-head q/k norms named query_layernorm and key_layernorm
  // (modeling_hunyuan_v1_dense.py); the converter renames only, writes eod_token_id as the eos
  // id (hunyuan.py, HunYuanModel.set_vocab) and head_dim as key_length (base.py).
  add({.gguf_arch = "hunyuan-dense",
       .model_type = "hunyuan_v1_dense",
       .class_name = "HunYuanDenseV1ForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.ff = 11008, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     {{"attn_q_norm.weight", "self_attn.query_layernorm.weight", Shape::kHeadDim},
                      {"attn_k_norm.weight", "self_attn.key_layernorm.weight", Shape::kHeadDim}},
                     gated_mlp,
                     two_norms}),
       .after = norm_head,
       .quirks = kHunyuanQuirks});
  // Hy3 (HYV3ForCausalLM): q/k norms, dense then MoE layers as mlp_layer_types says (written
  // from the tensors), the MoE's router, correction bias and shared MLP under the Hub names
  // transformers 5's conversion_mapping.py ("hy_v3") renames at load and back at save:
  // mlp.router.gate, mlp.expert_bias, mlp.shared_mlp.
  add({.gguf_arch = "hy_v3",
       .model_type = "hy_v3",
       .class_name = "HYV3ForCausalLM",
       .keys = kHyV3Keys,
       .defaults = {.kv_heads = 8,
                    .head_dim = 128,
                    .ff = 13312,
                    .experts = 192,
                    .expert_ff = 1536,
                    .shared_expert_ff = 1536},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            b.qk_norms,
            gated_mlp,
            {{"ffn_gate_inp.weight", "mlp.router.gate.weight", Shape::kRouter},
             {"exp_probs_b", "mlp.expert_bias", Shape::kExperts}},
            b.stacked_experts,
            {{"ffn_gate_shexp.weight", "mlp.shared_mlp.gate_proj.weight", Shape::kSharedFfHidden},
             {"ffn_up_shexp.weight", "mlp.shared_mlp.up_proj.weight", Shape::kSharedFfHidden},
             {"ffn_down_shexp.weight", "mlp.shared_mlp.down_proj.weight", Shape::kHiddenSharedFf}},
            two_norms}),
       .after = norm_head,
       // mlp_layer_types from the layers holding the router (HYV3Config's default is a dense
       // first layer, then sparse; a file says its own)
       .layer_types = {.nonzero = "sparse",
                       .zero = "dense",
                       .field = "mlp_layer_types",
                       .tensor = "ffn_gate_inp.weight"},
       .appended_layers = "nextn_predict_layers",
       .layer_groups = kHyV3Groups,
       .refusals = kHyV3Refusals,
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type hy_v3 (mlx_lm/models/)"}});
}

}  // namespace ggufs::hf::table
