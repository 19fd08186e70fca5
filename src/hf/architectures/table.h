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
