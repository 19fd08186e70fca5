// The state_dict blocks several families share (table.h, Blocks).
#include "table.h"

namespace ggufs::hf::table {

const Blocks& blocks() {
  static const Blocks kBlocks = [] {
    const std::vector<WeightEntry> llama_attention = {
        {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
        {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
        {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
        {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
    };
    // qwen2, qwen2moe and stablelm: q, k and v with biases, o without.
    const std::vector<WeightEntry> biased_attention = {
        {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
        {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
        {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
        {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
        {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
        {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
        {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
    };
    const std::vector<WeightEntry> gated_mlp = {
        {"ffn_gate.weight", "mlp.gate_proj.weight", Shape::kFfHidden},
        {"ffn_up.weight", "mlp.up_proj.weight", Shape::kFfHidden},
        {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf},
    };
    // arcee's and nemotron's relu² MLP: no gate.
    const std::vector<WeightEntry> ungated_mlp = {
        {"ffn_up.weight", "mlp.up_proj.weight", Shape::kFfHidden},
        {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf},
    };
    // The router and the stacked experts (qwen.py, Qwen2MoeModel.modify_tensors stacks
    // mlp.experts.X.* into one tensor per projection).
    const std::vector<WeightEntry> experts = {
        {"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
        {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kExpertHiddenFf, true},
    };
    // The stacked experts alone, and the shared experts as one MLP moe_intermediate_size ·
    // their count wide (exaone-moe's and afmoe's, whose routers are named otherwise).
    const std::vector<WeightEntry> stacked_experts = {
        {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kExpertHiddenFf, true},
    };
    const std::vector<WeightEntry> shared_experts = {
        {"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight",
         Shape::kSharedExpertsFfHidden},
        {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight", Shape::kSharedExpertsFfHidden},
        {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight",
         Shape::kHiddenSharedExpertsFf},
    };
    // Mixtral's naming of the router and the stacked experts (w1 gate, w2 down, w3 up), each
    // expert intermediate_size wide; PhiMoE's too.
    const std::vector<WeightEntry> block_sparse_moe = {
        {"ffn_gate_inp.weight", "block_sparse_moe.gate.weight", Shape::kRouter},
        {"ffn_gate_exps.weight", "block_sparse_moe.experts.{}.w1.weight", Shape::kFfHidden, true},
        {"ffn_down_exps.weight", "block_sparse_moe.experts.{}.w2.weight", Shape::kHiddenFf, true},
        {"ffn_up_exps.weight", "block_sparse_moe.experts.{}.w3.weight", Shape::kFfHidden, true},
    };
    // dots1's and glm4moe's: the stacked experts, the router with its correction bias (a buffer),
    // and the shared experts as one MLP moe_intermediate_size · n_shared_experts wide.
    const std::vector<WeightEntry> scored_experts = {
        {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kExpertFfHidden, true},
        {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kExpertHiddenFf, true},
        {"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
        {"exp_probs_b.bias", "mlp.gate.e_score_correction_bias", Shape::kExperts},
        {"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight",
         Shape::kSharedExpertsFfHidden},
        {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight", Shape::kSharedExpertsFfHidden},
        {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight",
         Shape::kHiddenSharedExpertsFf},
    };
    const std::vector<WeightEntry> two_norms = {
        {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
        {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
    };
    const std::vector<WeightEntry> biased_norms = {
        {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
        {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
        {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
        {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden},
    };
    const std::vector<WeightEntry> qk_norms = {
        {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadDim},
        {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kHeadDim},
    };
    const std::vector<WeightEntry> embed = {
        {"token_embd.weight", "model.embed_tokens.weight", Shape::kVocabHidden}};
    const std::vector<WeightEntry> norm_head = {
        {"output_norm.weight", "model.norm.weight", Shape::kHidden},
        {"output.weight", "lm_head.weight", Shape::kVocabHidden},
    };
    const std::vector<WeightEntry> norm_bias_head = {
        {"output_norm.weight", "model.norm.weight", Shape::kHidden},
        {"output_norm.bias", "model.norm.bias", Shape::kHidden},
        {"output.weight", "lm_head.weight", Shape::kVocabHidden},
    };
    // A Mamba-2 mixer under "mamba." (mamba.py, Mamba2Model.filter_tensors renames dt_bias,
    // modify_tensors stores A = -exp(A_log), A, D and the gated norm reshaped, conv1d squeezed).
    const std::vector<WeightEntry> mamba2_mixer = {
        {"ssm_dt.bias", "mamba.dt_bias", Shape::kSsmHeads},
        {"ssm_a", "mamba.A_log", Shape::kSsmHeads},
        {"ssm_d", "mamba.D", Shape::kSsmHeads},
        {"ssm_conv1d.weight", "mamba.conv1d.weight", Shape::kConvChannelsOneKernel},
        {"ssm_conv1d.bias", "mamba.conv1d.bias", Shape::kConvChannels},
        {"ssm_in.weight", "mamba.in_proj.weight", Shape::kMamba2InProj},
        {"ssm_norm.weight", "mamba.norm.weight", Shape::kInner},
        {"ssm_out.weight", "mamba.out_proj.weight", Shape::kHiddenInner}};
    const std::vector<WeightEntry> mla_query_lora = {
        {"attn_q_a.weight", "self_attn.q_a_proj.weight", Shape::kQLoraHidden},
        {"attn_q_a_norm.weight", "self_attn.q_a_layernorm.weight", Shape::kQLora},
        {"attn_q_b.weight", "self_attn.q_b_proj.weight", Shape::kMlaQB}};
    const std::vector<WeightEntry> mla_kv_lora = {
        {"attn_kv_a_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight", Shape::kKvLoraRopeHidden},
        {"attn_kv_a_norm.weight", "self_attn.kv_a_layernorm.weight", Shape::kKvLora},
        {"attn_k_b.weight",
         "self_attn.kv_b_proj.weight",
         Shape::kMlaKvB,
         false,
         {"attn_v_b.weight"}},
        {"attn_output.weight", "self_attn.o_proj.weight", Shape::kMlaO}};
    const std::vector<WeightEntry> dsa_indexer = {
        {"indexer.attn_q_b.weight", "self_attn.indexer.wq_b.weight", Shape::kIndexerQB},
        {"indexer.attn_k.weight", "self_attn.indexer.wk.weight", Shape::kIndexerHeadHidden},
        {"indexer.k_norm.weight", "self_attn.indexer.k_norm.weight", Shape::kIndexerHead},
        {"indexer.k_norm.bias", "self_attn.indexer.k_norm.bias", Shape::kIndexerHead},
        {"indexer.proj.weight", "self_attn.indexer.weights_proj.weight",
         Shape::kIndexerHeadsHidden}};
    return Blocks{stacked_experts, shared_experts, llama_attention, biased_attention,
                  gated_mlp,       ungated_mlp,    experts,         block_sparse_moe,
                  scored_experts,  two_norms,      biased_norms,    qk_norms,
                  embed,           norm_head,      norm_bias_head,  mamba2_mixer,
                  mla_query_lora,  mla_kv_lora,    dsa_indexer};
  }();
  return kBlocks;
}

}  // namespace ggufs::hf::table
