// The rows of the classes llama.cpp's conversion/deepseek.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// No q_lora_rank key: q_proj, no query LoRA (DeepSeek-V2-Lite). V3's norm_topk_prob is written
// only when true; its class default is true.
constexpr ConfigConstant kDeepseekV2Constants[] = {{"q_lora_rank", "null"}};

constexpr ConfigConstant kDeepseekV3Constants[] = {{"q_lora_rank", "null"},
                                                   {"norm_topk_prob", "false"}};

// DeepSeek-V3.2: V2's keys and the indexer's (table.h, kDsaKeys). The class always has the query
// LoRA: a file without q_lora_rank leaves the class default, which its tensors then refute.
constexpr auto kDeepseek32Keys = join(kDeepseek2Keys, kDsaKeys);

constexpr ConfigConstant kDeepseekV32Constants[] = {{"norm_topk_prob", "false"}};

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
  const std::vector<WeightEntry> mla_attention =
      cat({conditional(cat(
               {{{"attn_q.weight", "self_attn.q_proj.weight", Shape::kMlaQ}}, b.mla_query_lora})),
           b.mla_kv_lora});
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
  // DeepSeek-V3.2: V3's with the query LoRA always, and in every layer the DSA indexer
  // (modeling_deepseek_v32.py, DeepseekV32Indexer: wq_b from the query LoRA, wk, k_norm a
  // LayerNorm with its bias, weights_proj), each tensor renamed alone (gguf-py's INDEXER_*).
  add({.gguf_arch = "deepseek32",
       .model_type = "deepseek_v32",
       .class_name = "DeepseekV32ForCausalLM",
       .keys = kDeepseek32Keys,
       .constants = kDeepseekV32Constants,
       .defaults = {.ff = 18432,
                    .experts = 256,
                    .expert_ff = 2048,
                    .shared_experts = 1,
                    .bos = 0,
                    .eos = 1},
       .transforms = Transforms::kMla,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {b.mla_query_lora, b.mla_kv_lora, b.dsa_indexer, gated_mlp, scored_experts, two_norms}),
       .after = norm_head,
       .appended_layers = "nextn_predict_layers",
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 3},
       .mlx = {.experts = kMlxSwitchMlp}});
}

}  // namespace ggufs::hf::table
