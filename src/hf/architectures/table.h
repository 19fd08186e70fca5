// The architecture table's shared parts (hf_architectures.h): the config keys, layer groups and
// state_dict blocks more than one family's rows use, and each family's function adding its rows.
// A family is one file here, named after llama.cpp's conversion/<family>.py whose classes it
// inverts; a part only one family uses lives in that family's file. Sources, per row: the
// converter's keys and transforms (convert_hf_to_gguf.py and conversion/: base.py
// TextModel.set_gguf_parameters and each model's own); GGUF tensor names from gguf-py's
// tensor_mapping.py; classes from transformers' modeling_auto.py
// (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES); defaults from configuration_<model>.py; state_dict order
// and shapes from modeling_<model>.py. Internal to the hf layer.
#pragma once

#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

#include "../hf_architectures.h"

namespace ggufs::hf::table {

using Rows = std::vector<Architecture>;

inline constexpr ValueKind kNumber = ValueKind::kNumber;

// The keys every decoder-only row shares (base.py writes each when the config has it).
inline constexpr ConfigKey kBaseKeys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", kNumber},
    {"vocab_size", "vocab_size"}};

// Key lists (or name lists) joined, in order.
template <typename T, std::size_t... N>
constexpr std::array<T, (N + ...)> join(const T (&... parts)[N]) {
  std::array<T, (N + ...)> out{};
  std::size_t i = 0;
  ((std::copy(std::begin(parts), std::end(parts), out.begin() + i), i += N), ...);
  return out;
}

// kBaseKeys followed by a row's own keys.
template <std::size_t N>
constexpr std::array<ConfigKey, std::size(kBaseKeys) + N> base_and(const ConfigKey (&own)[N]) {
  return join(kBaseKeys, own);
}

// base.py: expert_count from num_local_experts / num_experts, expert_used_count from
// num_experts_per_tok.
inline constexpr ConfigKey kLocalExperts[] = {{"expert_count", "num_local_experts"},
                                              {"expert_used_count", "num_experts_per_tok"}};

// head_dim is written as attention.key_length (base.py); Qwen3Config's default 128 is not every
// model's.
inline constexpr auto kQwen3Keys = base_and({{"attention.key_length", "head_dim"}});

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
inline constexpr ConfigKey kDeepseek2Keys[] = {
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

// DeepSeek-V3.2's indexer (deepseek.py, DeepseekV32Model.set_gguf_parameters; glm.py's
// GlmMoeDsaModel alike): its heads, head dims and top-k, and the MTP layers the converter
// appends to block_count (Architecture::appended_layers; none served).
inline constexpr ConfigKey kDsaKeys[] = {{"attention.indexer.head_count", "index_n_heads"},
                                         {"attention.indexer.key_length", "index_head_dim"},
                                         {"attention.indexer.top_k", "index_topk"},
                                         {"nextn_predict_layers", "num_nextn_predict_layers"}};

// MlxColumn::experts: mlx-lm's stacked expert modules (mlx_lm/models/switch_layers.py, SwitchGLU
// and SwitchMLP), as each model's sanitize names what it stacks from hf/'s per-expert weights.
// qwen2_moe.py, qwen3_moe.py, olmoe.py, ernie4_5_moe.py, glm4_moe.py, deepseek_v2.py and
// deepseek_v3.py: mlp.switch_mlp.
inline constexpr std::pair<std::string_view, std::string_view> kMlxSwitchMlp[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.switch_mlp.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.switch_mlp.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.switch_mlp.down_proj.weight"}};

// mixtral.py, phimoe.py and minimax.py (minimax_m2's): w1, w2, w3 as gate, down and up.
inline constexpr std::pair<std::string_view, std::string_view> kMlxBlockSparseSwitch[] = {
    {"block_sparse_moe.experts.{}.w1.weight", "block_sparse_moe.switch_mlp.gate_proj.weight"},
    {"block_sparse_moe.experts.{}.w2.weight", "block_sparse_moe.switch_mlp.down_proj.weight"},
    {"block_sparse_moe.experts.{}.w3.weight", "block_sparse_moe.switch_mlp.up_proj.weight"}};

// Architecture::layer_groups: the layer tensors one model's layers hold by their kind, each group
// whole or not at all, one of each choice (LayerGroup). A name no entry of a row has changes
// nothing there, so rows share these lists.
// llama's attention (llama_attention below), in a hybrid's attention layers only.
inline constexpr std::string_view kAttentionTensors[] = {"attn_q.weight", "attn_k.weight",
                                                         "attn_v.weight", "attn_output.weight"};

inline constexpr std::string_view kQkNormTensors[] = {"attn_q_norm.weight", "attn_k_norm.weight"};

inline constexpr auto kNormedAttentionTensors = join(kAttentionTensors, kQkNormTensors);

// A Mamba-2 mixer (mamba2_mixer below), in a hybrid's Mamba layers only.
inline constexpr std::string_view kMamba2Tensors[] = {
    "ssm_dt.bias",     "ssm_a",         "ssm_d",           "ssm_conv1d.weight",
    "ssm_conv1d.bias", "ssm_in.weight", "ssm_norm.weight", "ssm_out.weight"};

// A dense MLP in some layers, the router, the experts and the shared experts in the others:
// modeling_deepseek_v2.py, DeepseekV2DecoderLayer (DeepseekV3's, Glm4MoeDecoderLayer and
// Dots1DecoderLayer likewise) builds the MoE from layer first_k_dense_replace on;
// modeling_ernie4_5_moe.py, Ernie4_5_MoeDecoderLayer, in the layers from moe_layer_start_index
// every moe_layer_interval; modeling_jamba.py, JambaDecoderLayer, where layers_num_experts (from
// expert_layer_offset and _period) is over 1; modeling_nemotron_h.py, NemotronHBlock, in its
// MLP or MoE layers (layers_block_type) only.
inline constexpr std::string_view kDenseMlpTensors[] = {"ffn_gate.weight", "ffn_up.weight",
                                                        "ffn_down.weight"};

inline constexpr std::string_view kMoeTensors[] = {
    "ffn_gate_inp.weight", "ffn_gate_exps.weight",  "ffn_up_exps.weight",  "ffn_down_exps.weight",
    "exp_probs_b.bias",    "ffn_gate_shexp.weight", "ffn_up_shexp.weight", "ffn_down_shexp.weight"};

inline constexpr LayerGroup kDenseOrMoe[] = {{kDenseMlpTensors, 1, "dense"},
                                             {kMoeTensors, 1, "moe"}};

// DSA's indexer tensors (Blocks::dsa_indexer).
inline constexpr std::string_view kDsaIndexerTensors[] = {
    "indexer.attn_q_b.weight", "indexer.attn_k.weight", "indexer.k_norm.weight",
    "indexer.k_norm.bias", "indexer.proj.weight"};

inline std::vector<WeightEntry> cat(std::initializer_list<std::vector<WeightEntry>> parts) {
  std::vector<WeightEntry> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// `entries` with those named (all, when none is) the class builds only under a config field
// (WeightEntry::optional).
inline std::vector<WeightEntry> conditional(std::vector<WeightEntry> entries,
                                            std::initializer_list<std::string_view> named = {}) {
  for (WeightEntry& e : entries) {
    e.optional |= named.size() == 0 || std::find(named.begin(), named.end(), e.gguf) != named.end();
  }
  return entries;
}

// The layer prefix of most decoders' state_dict ("{}" = N).
inline constexpr std::string_view kModelLayer = "model.layers.{}.";

/// The state_dict blocks several families' layers are made of (architectures/common.cpp).
struct Blocks {
  std::vector<WeightEntry> stacked_experts, shared_experts, llama_attention, biased_attention,
      gated_mlp, ungated_mlp, experts, block_sparse_moe, scored_experts, two_norms, biased_norms,
      qk_norms, embed, norm_head, norm_bias_head, mamba2_mixer;
  /// MLA's query LoRA, and its KV LoRA with o_proj (modeling_deepseek_v2.py,
  /// DeepseekV2Attention; kv_b_proj from the converter's attn_k_b and attn_v_b, Transforms::kMla).
  std::vector<WeightEntry> mla_query_lora, mla_kv_lora;
  /// DSA's indexer after o_proj (modeling_deepseek_v32.py, DeepseekV32Indexer: wq_b from the
  /// query LoRA, wk, k_norm a LayerNorm with its bias, weights_proj; gguf-py's INDEXER_*).
  std::vector<WeightEntry> dsa_indexer;
};
const Blocks& blocks();

/// GPT-2's state_dict names (modeling_gpt2.py), which GPTBigCode keeps: wte and wpe; a layer's
/// ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc and mlp.c_proj; ln_f and lm_head. The shapes of
/// c_attn, its bias, mlp.c_fc and mlp.c_proj are the class's (gpt2.cpp).
struct Gpt2Layout {
  std::vector<WeightEntry> before, layer, after;
};
Gpt2Layout gpt2_layout(Shape qkv, Shape qkv_bias, Shape fc, Shape proj);

/// Each family's rows, appended to `rows` in the order hf_config.cpp prefers among a
/// general.architecture's rows (Architecture::required_key, required_tensor).
void llama(Rows& rows);
void qwen(Rows& rows);
void gemma(Rows& rows);
void phi(Rows& rows);
void granite(Rows& rows);
void olmo(Rows& rows);
void chatglm(Rows& rows);
void afmoe(Rows& rows);
void mellum(Rows& rows);
void ernie(Rows& rows);
void dots1(Rows& rows);
void gpt2(Rows& rows);
void starcoder(Rows& rows);
void stablelm(Rows& rows);
void glm(Rows& rows);
void command_r(Rows& rows);
void gptneox(Rows& rows);
void falcon(Rows& rows);
void bloom(Rows& rows);
void nemotron(Rows& rows);
void exaone(Rows& rows);
void minimax(Rows& rows);
void lfm2(Rows& rows);
void hunyuan(Rows& rows);
void mamba(Rows& rows);
void gpt_oss(Rows& rows);
void falcon_h1(Rows& rows);
void jamba(Rows& rows);
void deepseek(Rows& rows);
void t5(Rows& rows);

/// Every family, in the table's order.
inline constexpr void (*kFamilies[])(Rows&) = {
    llama,    qwen,  gemma,     phi,       granite, olmo,     ernie,    dots1,   gpt2,    starcoder,
    stablelm, glm,   command_r, gptneox,   falcon,  bloom,    nemotron, exaone,  minimax, lfm2,
    hunyuan,  mamba, gpt_oss,   falcon_h1, jamba,   deepseek, t5,       chatglm, afmoe,   mellum};

}  // namespace ggufs::hf::table
