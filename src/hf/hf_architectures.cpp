// The architecture table (hf_architectures.h). Sources, per row: the converter's keys and
// transforms from llama.cpp's convert_hf_to_gguf.py and conversion/ (base.py
// TextModel.set_gguf_parameters; llama.py, qwen.py, gemma.py, phi.py, gpt2.py, ...); GGUF tensor
// names from gguf-py's tensor_mapping.py; classes from transformers' modeling_auto.py
// (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES); defaults from configuration_<model>.py; state_dict order
// and shapes from modeling_<model>.py.
#include "hf_architectures.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <iterator>

namespace ggufs::hf {
namespace {

constexpr ValueKind kNumber = ValueKind::kNumber;

// The keys every decoder-only row shares (base.py writes each when the config has it).
constexpr ConfigKey kBaseKeys[] = {{"context_length", "max_position_embeddings"},
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
constexpr ConfigKey kLocalExperts[] = {{"expert_count", "num_local_experts"},
                                       {"expert_used_count", "num_experts_per_tok"}};

constexpr auto kLlamaKeys = base_and({{"rope.dimension_count", "head_dim"}});
// qwen.py, Qwen2MoeModel.set_gguf_parameters: the expert widths.
constexpr auto kQwen2MoeKeys =
    base_and({{"expert_count", "num_experts"},
              {"expert_used_count", "num_experts_per_tok"},
              {"expert_feed_forward_length", "moe_intermediate_size"},
              {"expert_shared_feed_forward_length", "shared_expert_intermediate_size"}});
// head_dim is written as attention.key_length (base.py); Qwen3Config's default 128 is not every
// model's.
constexpr auto kQwen3Keys = base_and({{"attention.key_length", "head_dim"}});
constexpr auto kQwen3MoeKeys = base_and({{"attention.key_length", "head_dim"},
                                         {"expert_count", "num_experts"},
                                         {"expert_used_count", "num_experts_per_tok"},
                                         {"expert_feed_forward_length", "moe_intermediate_size"}});
// gemma.py, Gemma2Model and Gemma3Model.set_gguf_parameters: the logit soft-caps, and Gemma 3's
// rope base of its sliding-window layers (rope_local_base_freq; 5.x reads it into
// rope_parameters["sliding_attention"]).
constexpr auto kGemma2Keys =
    base_and({{"attention.key_length", "head_dim"},
              {"attention.sliding_window", "sliding_window"},
              {"attn_logit_softcapping", "attn_logit_softcapping", kNumber},
              {"final_logit_softcapping", "final_logit_softcapping", kNumber}});
constexpr auto kGemma3Keys =
    base_and({{"attention.key_length", "head_dim"},
              {"attention.sliding_window", "sliding_window"},
              {"rope.freq_base_swa", "rope_local_base_freq", kNumber},
              {"attn_logit_softcapping", "attn_logit_softcapping", kNumber},
              {"final_logit_softcapping", "final_logit_softcapping", kNumber}});
// granite.py, GraniteModel.set_gguf_parameters: the four multipliers, each written only when
// not 0 (a truthiness test). head_dim is dropped there: Granite's is hidden / heads.
constexpr ConfigKey kGraniteScales[] = {{"attention.scale", "attention_multiplier", kNumber},
                                        {"embedding_scale", "embedding_multiplier", kNumber},
                                        {"residual_scale", "residual_multiplier", kNumber},
                                        {"logit_scale", "logits_scaling", kNumber}};
constexpr auto kGraniteKeys = join(kBaseKeys, kGraniteScales);
constexpr auto kGraniteMoeKeys = join(kBaseKeys, kGraniteScales, kLocalExperts);
// granite.py, GraniteMoeModel.set_gguf_parameters: the shared expert's width.
constexpr ConfigKey kGraniteShared[] = {
    {"expert_shared_feed_forward_length", "shared_intermediate_size"}};
constexpr auto kGraniteMoeSharedKeys =
    join(kBaseKeys, kGraniteScales, kLocalExperts, kGraniteShared);
// olmo.py, OlmoeModel.set_gguf_parameters: base.py's, the rms epsilon then overwritten by 1e-5.
constexpr auto kOlmoeKeys =
    base_and({{"expert_count", "num_experts"}, {"expert_used_count", "num_experts_per_tok"}});
// phi.py, PhiMoeModel.set_gguf_parameters: phi3's and the expert counts.
constexpr auto kPhiMoeKeys =
    base_and({{"rope.scaling.original_context_length", "original_max_position_embeddings"},
              {"expert_count", "num_local_experts"},
              {"expert_used_count", "num_experts_per_tok"}});
// Phi-3.5-MoE's config.json (the one PhiMoE model); the converter keeps the biases as tensors.
constexpr ConfigConstant kPhiMoeConstants[] = {
    {"attention_bias", "true"}, {"lm_head_bias", "true"}, {"input_jitter_noise", "0.01"}};
// ernie.py, Ernie4_5MoeModel.set_gguf_parameters. Its expert_shared_feed_forward_length is
// intermediate_size // num_key_value_heads, no config field: the shared experts are
// moe_intermediate_size · moe_num_shared_experts wide (modeling_ernie4_5_moe.py).
constexpr auto kErnie45MoeKeys = base_and({{"expert_count", "moe_num_experts"},
                                           {"expert_used_count", "moe_k"},
                                           {"interleave_moe_layer_step", "moe_layer_interval"},
                                           {"leading_dense_block_count", "moe_layer_start_index"},
                                           {"expert_feed_forward_length", "moe_intermediate_size"},
                                           {"expert_shared_count", "moe_num_shared_experts"}});
// dots1.py, Dots1Model.set_gguf_parameters (after qwen.py's Qwen2MoeModel and base.py's).
constexpr auto kDots1Keys = base_and({{"expert_count", "n_routed_experts"},
                                      {"expert_used_count", "num_experts_per_tok"},
                                      {"expert_group_count", "n_group"},
                                      {"expert_group_used_count", "topk_group"},
                                      {"expert_feed_forward_length", "moe_intermediate_size"},
                                      {"leading_dense_block_count", "first_k_dense_replace"},
                                      {"expert_shared_count", "n_shared_experts"},
                                      {"expert_weights_scale", "routed_scaling_factor", kNumber},
                                      {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny}});
// llama.py, LlamaModel.set_gguf_parameters, as llama; base.py adds the expert counts.
constexpr auto kMixtralKeys = base_and({{"rope.dimension_count", "head_dim"},
                                        {"expert_count", "num_local_experts"},
                                        {"expert_used_count", "num_experts_per_tok"}});
// phi.py, Phi3MiniModel.set_gguf_parameters.
constexpr auto kPhi3Keys =
    base_and({{"rope.scaling.original_context_length", "original_max_position_embeddings"}});
// gpt2.py writes context_length from n_ctx, which every GPT-2 checkpoint has equal to
// n_positions (the size of wpe); feed_forward_length (4·n_embd) has no GPT2Config field and is
// kept under its own name, as transformers' own import keeps it.
constexpr ConfigKey kGpt2Keys[] = {{"block_count", "n_layer"},
                                   {"context_length", "n_ctx"},
                                   {"context_length", "n_positions"},
                                   {"embedding_length", "n_embd"},
                                   {"feed_forward_length", "feed_forward_length"},
                                   {"attention.head_count", "n_head"},
                                   {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};
constexpr ConfigKey kStarcoder2Keys[] = {{"block_count", "num_hidden_layers"},
                                         {"context_length", "max_position_embeddings"},
                                         {"embedding_length", "hidden_size"},
                                         {"feed_forward_length", "intermediate_size"},
                                         {"attention.head_count", "num_attention_heads"},
                                         {"attention.head_count_kv", "num_key_value_heads"},
                                         {"attention.layer_norm_epsilon", "norm_epsilon", kNumber},
                                         {"rope.freq_base", "rope_theta", kNumber}};
constexpr ConfigKey kStablelmKeys[] = {{"context_length", "max_position_embeddings"},
                                       {"block_count", "num_hidden_layers"},
                                       {"feed_forward_length", "intermediate_size"},
                                       {"embedding_length", "hidden_size"},
                                       {"attention.head_count", "num_attention_heads"},
                                       {"attention.head_count_kv", "num_key_value_heads"},
                                       {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
                                       {"vocab_size", "vocab_size"}};
// olmo.py, OlmoModel.set_gguf_parameters: clip_qkv as clamp_kqv (its layer-norm epsilon is
// the fixed 1e-5 of OlmoLayerNorm, no config field).
constexpr auto kOlmoKeys = base_and({{"attention.clamp_kqv", "clip_qkv", kNumber}});
// phi.py, Phi2Model.set_gguf_parameters: its own keys, feed_forward_length as 4 · hidden (every
// Phi-1.5 and Phi-2 config's intermediate_size), head_count_kv as head_count, the rotary
// fraction as dimensions per head; no rope base (the class default).
constexpr ConfigKey kPhi2Keys[] = {
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"feed_forward_length", "intermediate_size"},
    {"block_count", "num_hidden_layers"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
    {"rope.dimension_count", "partial_rotary_factor", ValueKind::kRotaryFraction}};
// command_r.py, CommandR2Model: base.py's keys (layer norms with an epsilon, no RMS) and the
// logit scale; context_length is model_max_length where the config has one.
constexpr ConfigKey kCohereKeys[] = {{"context_length", "max_position_embeddings"},
                                     {"block_count", "num_hidden_layers"},
                                     {"feed_forward_length", "intermediate_size"},
                                     {"embedding_length", "hidden_size"},
                                     {"rope.freq_base", "rope_theta", kNumber},
                                     {"attention.head_count", "num_attention_heads"},
                                     {"attention.head_count_kv", "num_key_value_heads"},
                                     {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber},
                                     {"logit_scale", "logit_scale", kNumber}};
constexpr TensorFlag kCohereFlags[] = {{"attn_q_norm.weight", "use_qk_norm"}};
// command_r.py, Cohere2Model.set_gguf_parameters: the sliding window, the vocabulary size and
// rotary_pct (a field of the checkpoints' config.json that Cohere2Config keeps, unused) as
// rotary dimensions per head.
constexpr ConfigKey kCohere2Own[] = {
    {"attention.sliding_window", "sliding_window"},
    {"vocab_size", "vocab_size"},
    {"rope.dimension_count", "rotary_pct", ValueKind::kRotaryFraction}};
constexpr auto kCohere2Keys = join(kCohereKeys, kCohere2Own);
// gptneox.py, GPTNeoXModel.set_gguf_parameters: its own keys, rotary_pct as rotary dimensions
// per head, no rope base (rotary_emb_base is not written) and no vocabulary size.
constexpr ConfigKey kGptNeoXKeys[] = {
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"rope.dimension_count", "rotary_pct", ValueKind::kRotaryFraction},
    {"attention.head_count", "num_attention_heads"},
    {"use_parallel_residual", "use_parallel_residual", ValueKind::kAny},
    {"attention.layer_norm_epsilon", "layer_norm_eps", kNumber}};
constexpr TensorFlag kGptNeoXFlags[] = {{"attn_qkv.bias", "attention_bias"}};
// falcon.py, FalconModel.set_gguf_parameters: its own keys; context_length is the constant 2048
// and feed_forward_length 4 · hidden (the class's ffn_hidden_size), neither a config field.
constexpr ConfigKey kFalconKeys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_kv_heads"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};
// Every Falcon the converter converts has new_decoder_architecture's fused QKV per KV group:
// falcon.py reads the KV heads from num_kv_heads, which FalconConfig sets to the head count
// when absent, so a multi-query falcon-7b config (no num_kv_heads) fails its view. Falcon-40B
// and -180B have two norms (ln_attn, ln_mlp), Falcon2-11B one (num_ln_in_parallel_attn 1);
// with one KV head the layout is multi_query's, and the model the same (modeling_falcon.py).
// bloom.py, BloomModel.set_gguf_parameters: its own keys; context_length (seq_length, else the
// hidden size), feed_forward_length (4 · hidden) and head_count_kv (the head count) are no
// config fields.
constexpr ConfigKey kBloomKeys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "n_layer"},
    {"attention.head_count", "n_head"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber}};
constexpr ConfigConstant kFalconOneNorm[] = {{"new_decoder_architecture", "true"},
                                             {"num_ln_in_parallel_attn", "1"}};
constexpr ConfigConstant kFalconTwoNorms[] = {{"new_decoder_architecture", "true"},
                                              {"num_ln_in_parallel_attn", "2"}};
// nemotron.py, NemotronModel.set_gguf_parameters: norm_eps (base.py writes it as the RMS epsilon
// too), the rotary fraction as rotary dimensions of hidden / heads; head_dim as key_length
// (base.py).
constexpr ConfigKey kNemotronKeys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.layer_norm_epsilon", "norm_eps", kNumber},
    {"attention.key_length", "head_dim"},
    {"vocab_size", "vocab_size"},
    {"rope.dimension_count", "partial_rotary_factor", ValueKind::kRotaryFraction}};
// mamba.py, MambaModel.set_gguf_parameters: context_length (2^20), feed_forward_length and
// head_count (0) are placeholders, no config field. It asserts intermediate_size = 2 · hidden:
// expand is that quotient.
constexpr ConfigKey kMambaKeys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"ssm.conv_kernel", "conv_kernel"},
    {"ssm.inner_size", "intermediate_size"},
    {"ssm.inner_size", "expand", ValueKind::kQuotient, "hidden_size"},
    {"ssm.state_size", "state_size"},
    {"ssm.time_step_rank", "time_step_rank"},
    {"attention.layer_norm_rms_epsilon", "layer_norm_epsilon", kNumber}};
// mamba.py, Mamba2Model.set_gguf_parameters: the same placeholders; time_step_rank holds
// d_inner // head_dim, the head count, and inner_size expand · hidden (Mamba2Config has no
// intermediate_size).
constexpr ConfigKey kMamba2Keys[] = {
    {"embedding_length", "hidden_size"},
    {"block_count", "num_hidden_layers"},
    {"ssm.conv_kernel", "conv_kernel"},
    {"ssm.state_size", "state_size"},
    {"ssm.time_step_rank", "num_heads"},
    {"ssm.inner_size", "expand", ValueKind::kQuotient, "hidden_size"},
    {"ssm.inner_size", "head_dim", ValueKind::kQuotient, "num_heads"},
    {"ssm.group_count", "n_groups"},
    {"attention.layer_norm_rms_epsilon", "layer_norm_epsilon", kNumber}};
// gpt_oss.py, GptOssModel.set_gguf_parameters: base.py's (head_dim as attention.key_length,
// the expert counts, rope_scaling's YaRN keys), the sliding window, and intermediate_size (each
// expert's width) again as expert_feed_forward_length.
constexpr ConfigKey kGptOssOwn[] = {{"attention.key_length", "head_dim"},
                                    {"attention.sliding_window", "sliding_window"},
                                    {"expert_feed_forward_length", "intermediate_size"}};
constexpr auto kGptOssKeys = join(kBaseKeys, kLocalExperts, kGptOssOwn);
// gpt-oss-20b's and -120b's config.json: YaRN without truncation (rope_scaling.truncate false;
// transformers' YaRN default truncates), which base.py does not write.
constexpr ConfigConstant kGptOssConstants[] = {{"rope_scaling", R"({"truncate": false})"}};

// Qwen3MoeConfig.norm_topk_prob defaults to False; every Qwen3-MoE checkpoint (config.json of
// Qwen3-30B-A3B, Qwen3-235B-A22B) sets it True, as transformers 5.24.0's own GGUF import does
// (integrations/ggml.py). The converter does not write it.
constexpr ConfigConstant kQwen3MoeConstants[] = {{"norm_topk_prob", "true"}};

// mlx/'s columns (MlxColumn): the class defaults mlx-lm 0.32.2's ModelArgs requires, each from
// transformers 4.57.6's configuration_<model>.py, and the fields it reads under other names.
constexpr ConfigConstant kMlxNoBias[] = {{"use_bias", "false"}};  // Ernie4_5(Moe)Config
constexpr ConfigConstant kMlxExaone4[] = {{"rope_scaling", "null"}};
constexpr ConfigConstant kMlxGlm4[] = {{"attention_bias", "true"},
                                       {"partial_rotary_factor", "0.5"}};
constexpr ConfigConstant kMlxGlm4Moe[] = {{"rope_scaling", "null"},
                                          {"partial_rotary_factor", "0.5"}};
constexpr ConfigConstant kMlxGranite[] = {{"attention_bias", "false"}, {"mlp_bias", "false"}};
constexpr ConfigConstant kMlxNoAttentionBias[] = {{"attention_bias", "false"}};
constexpr ConfigConstant kMlxAttentionBias[] = {{"attention_bias", "true"}};  // SeedOssConfig
constexpr ConfigConstant kMlxGraniteMoeHybrid[] = {
    {"max_position_embeddings", "2048"}, {"attention_bias", "false"}, {"mamba_conv_bias", "true"}};
// FalconH1Config's multipliers, 1 where the converter folded them into the weights
// (falcon_h1.py's set_gguf_parameters and modify_tensors); falcon_h1.py of mlx-lm defaults them
// to the Falcon-H1 checkpoints' own values instead.
constexpr ConfigConstant kMlxFalconH1[] = {
    {"attention_in_multiplier", "1.0"}, {"attention_out_multiplier", "1.0"},
    {"embedding_multiplier", "1.0"},    {"key_multiplier", "1.0"},
    {"lm_head_multiplier", "1.0"},      {"mlp_multipliers", "[1.0, 1.0]"},
    {"ssm_in_multiplier", "1.0"},       {"ssm_multipliers", "[1.0, 1.0, 1.0, 1.0, 1.0]"},
    {"ssm_out_multiplier", "1.0"}};
constexpr ConfigConstant kMlxLfm2[] = {
    {"conv_bias", "false"}, {"block_multiple_of", "256"}, {"block_ffn_dim_multiplier", "1.0"}};
constexpr ConfigConstant kMlxMamba[] = {{"use_bias", "false"}, {"use_conv_bias", "true"}};
constexpr ConfigConstant kMlxNemotron[] = {{"hidden_act", "\"relu2\""}};
constexpr ConfigConstant kMlxSparseStep[] = {{"decoder_sparse_step", "1"},  // Qwen3(Moe|Next)
                                             {"mlp_only_layers", "[]"}};
constexpr ConfigConstant kMlxStableLm[] = {{"rope_theta", "10000"},
                                           {"partial_rotary_factor", "0.25"}};
// GPTNeoXConfig's rope_theta was rotary_emb_base; lfm2.py's block_dim is the Hub configs'
// hidden size (LFM2's own config.json files).
constexpr std::pair<std::string_view, std::string_view> kMlxGptNeoXRenamed[] = {
    {"rotary_emb_base", "rope_theta"}};
constexpr std::pair<std::string_view, std::string_view> kMlxLfm2Renamed[] = {
    {"block_dim", "hidden_size"}};
// exaone.py, Exaone4Model.set_gguf_parameters: the window, and its layer pattern as one flag a
// layer (Architecture::layer_types); head_dim as key_length (base.py). A model without a window
// gets neither key: sliding_window null (the class default 4096 with every layer global would
// be another model; Exaone4Config divides by the pattern 0 without layer_types).
constexpr auto kExaone4Keys = base_and(
    {{"attention.key_length", "head_dim"}, {"attention.sliding_window", "sliding_window"}});
constexpr ConfigConstant kExaone4Constants[] = {{"sliding_window", "null"}};
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
constexpr TensorFlag kGlm4MoeFlags[] = {{"attn_q_norm.weight", "use_qk_norm"},
                                        {"attn_q.bias", "attention_bias"}};
// minimax.py, MiniMaxM2Model.set_gguf_parameters (after base.py's): each expert's width
// (intermediate_size) and rotary_dim, the field MiniMax-M2's config.json has (transformers 5.24.0's
// MiniMaxM2Config reads it as partial_rotary_factor · head_dim); head_dim as key_length.
constexpr auto kMiniMaxM2Keys = base_and({{"attention.key_length", "head_dim"},
                                          {"rope.dimension_count", "rotary_dim"},
                                          {"expert_count", "num_local_experts"},
                                          {"expert_used_count", "num_experts_per_tok"}});
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
// granite.py, GraniteHybridModel.set_gguf_parameters: GraniteMoeModel's keys, but
// num_key_value_heads one count a layer (0 for a mamba layer: layer_types from it) and no
// context_length (the placeholder 2^20 for a model without rope); the mamba_-prefixed SSM
// sizes, inner_size as mamba_expand · hidden (find_hparam's prefixed keys).
constexpr ConfigKey kGraniteHybridBase[] = {
    {"block_count", "num_hidden_layers"},
    {"feed_forward_length", "intermediate_size"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads", ValueKind::kLayerMax},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", kNumber},
    {"vocab_size", "vocab_size"}};
constexpr ConfigKey kGraniteHybridSsm[] = {
    {"ssm.conv_kernel", "mamba_d_conv"},
    {"ssm.state_size", "mamba_d_state"},
    {"ssm.group_count", "mamba_n_groups"},
    {"ssm.time_step_rank", "mamba_n_heads"},
    {"ssm.inner_size", "mamba_expand", ValueKind::kQuotient, "hidden_size"},
    {"ssm.inner_size", "mamba_d_head", ValueKind::kQuotient, "mamba_n_heads"}};
constexpr auto kGraniteHybridKeys =
    join(kGraniteHybridBase, kGraniteScales, kLocalExperts, kGraniteShared, kGraniteHybridSsm);
// A dense model (num_local_experts 0) gets no expert_count (base.py writes it when truthy).
constexpr ConfigConstant kGraniteHybridConstants[] = {{"num_local_experts", "0"}};
// falcon_h1.py, FalconH1Model.set_gguf_parameters (after mamba.py's Mamba2Model's, whose
// placeholders it overwrites): base.py's keys, head_dim as key_length, the mamba_-prefixed SSM
// sizes (find_hparam's prefixed keys), inner_size as mamba_d_ssm and time_step_rank as
// mamba_d_ssm // mamba_d_head, the head count.
constexpr auto kFalconH1Keys =
    base_and({{"attention.key_length", "head_dim"},
              {"ssm.conv_kernel", "mamba_d_conv"},
              {"ssm.inner_size", "mamba_d_ssm"},
              {"ssm.inner_size", "mamba_d_head", ValueKind::kQuotient, "mamba_n_heads"},
              {"ssm.state_size", "mamba_d_state"},
              {"ssm.time_step_rank", "mamba_n_heads"},
              {"ssm.group_count", "mamba_n_groups"}});
// FalconH1Model.modify_tensors folds every µP multiplier into the weights it scales and stores
// none: the file is the model with each multiplier 1 (modeling_falcon_h1.py applies them as
// products with the activations, x · 1 exact). The gated norm: llama.cpp gates, then norms
// (src/models/mamba-base.cpp, build_mamba2_layer), as tiiuae/Falcon-H1-0.5B-Base's config.json
// (the converter's example) says: mamba_norm_before_gate false (the class default is true).
constexpr ConfigConstant kFalconH1Constants[] = {{"embedding_multiplier", "1.0"},
                                                 {"lm_head_multiplier", "1.0"},
                                                 {"attention_in_multiplier", "1.0"},
                                                 {"attention_out_multiplier", "1.0"},
                                                 {"key_multiplier", "1.0"},
                                                 {"ssm_in_multiplier", "1.0"},
                                                 {"ssm_out_multiplier", "1.0"},
                                                 {"mlp_multipliers", "[1.0, 1.0]"},
                                                 {"ssm_multipliers", "[1.0, 1.0, 1.0, 1.0, 1.0]"},
                                                 {"mamba_norm_before_gate", "false"}};
// The gated norm and the convolution's bias exist as the config says (FalconH1Mixer).
constexpr TensorFlag kFalconH1Flags[] = {{"ssm_norm.weight", "mamba_rms_norm"},
                                         {"ssm_conv1d.bias", "mamba_conv_bias"}};

// nemotron.py, NemotronHModel.set_gguf_parameters (after granite.py's GraniteHybridModel): the
// attention's num_key_value_heads one count a layer (0 elsewhere), head_dim as key_length; the
// mamba sizes, inner_size as mamba_num_heads · mamba_head_dim; layer_norm_epsilon as the
// layer-norm epsilon; the MoE form's routing and widths. No context_length (the placeholder 2^20)
// nor feed_forward_length (one width a layer: hf_config.cpp rebuilds hybrid_override_pattern from
// it and head_count_kv). The dense form: the MLP layers' width as feed_forward_length, 0 in the
// others (intermediate_size its largest).
constexpr ConfigKey kNemotronHBase[] = {
    {"block_count", "num_hidden_layers"},
    {"embedding_length", "hidden_size"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads", ValueKind::kLayerMax},
    {"attention.key_length", "head_dim"},
    {"attention.layer_norm_epsilon", "layer_norm_epsilon", kNumber},
    {"vocab_size", "vocab_size"},
    {"ssm.conv_kernel", "conv_kernel"},
    {"ssm.state_size", "ssm_state_size"},
    {"ssm.group_count", "n_groups"},
    {"ssm.time_step_rank", "mamba_num_heads"},
    {"ssm.inner_size", "mamba_head_dim", ValueKind::kQuotient, "mamba_num_heads"}};
constexpr ConfigKey kNemotronHMoe[] = {
    {"expert_count", "n_routed_experts"},
    {"expert_used_count", "num_experts_per_tok"},
    {"expert_group_count", "n_group"},
    {"expert_group_used_count", "topk_group"},
    {"expert_feed_forward_length", "moe_intermediate_size"},
    {"expert_shared_feed_forward_length", "moe_shared_expert_intermediate_size"},
    {"expert_shared_count", "n_shared_experts"},
    {"expert_weights_norm", "norm_topk_prob", ValueKind::kAny},
    {"expert_weights_scale", "routed_scaling_factor", kNumber}};
constexpr auto kNemotronHMoeKeys = join(kNemotronHBase, kNemotronHMoe);
constexpr ConfigKey kNemotronHDense[] = {
    {"feed_forward_length", "intermediate_size", ValueKind::kLayerMax}};
constexpr auto kNemotronHKeys = join(kNemotronHBase, kNemotronHDense);

// jamba.py, JambaModel.set_gguf_parameters (no base.py keys, no vocab_size): inner_size as
// mamba_expand · hidden, num_key_value_heads one count a layer (0 for a mamba layer), the
// expert counts from num_experts (find_hparam's second name).
constexpr ConfigKey kJambaKeys[] = {
    {"block_count", "num_hidden_layers"},
    {"context_length", "max_position_embeddings"},
    {"embedding_length", "hidden_size"},
    {"feed_forward_length", "intermediate_size"},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads", ValueKind::kLayerMax},
    {"ssm.conv_kernel", "mamba_d_conv"},
    {"ssm.inner_size", "mamba_expand", ValueKind::kQuotient, "hidden_size"},
    {"ssm.state_size", "mamba_d_state"},
    {"ssm.time_step_rank", "mamba_dt_rank"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", kNumber},
    {"expert_count", "num_experts"},
    {"expert_used_count", "num_experts_per_tok"}};
// The class default (True) needs mamba-ssm's CUDA kernels, which JambaMambaMixer refuses
// without (modeling_jamba.py); the same model runs without them.
constexpr ConfigConstant kJambaConstants[] = {{"use_mamba_kernels", "false"}};
// The mamba mixer's conv1d and in/out_proj biases (JambaMambaMixer: mamba_conv_bias,
// mamba_proj_bias), which the converter keeps as tensors.
constexpr TensorFlag kJambaFlags[] = {{"ssm_conv1d.bias", "mamba_conv_bias"},
                                      {"ssm_in.bias", "mamba_proj_bias"}};
// jamba.py, JambaModel: head_count_kv non-zero in the attention layers (from attn_layer_offset
// and _period); the expert layers' experts stacked, their router ffn_gate_inp (from
// expert_layer_offset and _period), neither pair written.
constexpr LayerPeriod kJambaPeriods[] = {
    {"attn_layer_offset", "attn_layer_period", "attention.head_count_kv", "", "attention", "mamba"},
    {"expert_layer_offset", "expert_layer_period", "", "ffn_gate_inp.weight", "moe", "dense"}};

// The keys Gemma 3n and Gemma 4 share (gemma.py, Gemma3NModel and Gemma4Model, both after
// Gemma3Model's set_gguf_parameters).
constexpr ConfigKey kGemmaPerLayerInputKeys[] = {
    {"context_length", "max_position_embeddings"},
    {"block_count", "num_hidden_layers"},
    {"embedding_length", "hidden_size"},
    {"rope.freq_base", "rope_theta", kNumber},
    {"attention.head_count", "num_attention_heads"},
    {"attention.head_count_kv", "num_key_value_heads"},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", kNumber},
    {"attention.sliding_window", "sliding_window"},
    {"rope.freq_base_swa", "rope_local_base_freq", kNumber},
    {"final_logit_softcapping", "final_logit_softcapping", kNumber},
    {"attention.shared_kv_layers", "num_kv_shared_layers"},
    {"embedding_length_per_layer_input", "hidden_size_per_layer_input"}};
// gemma.py, Gemma4Model.set_gguf_parameters (after Gemma3Model's): the sliding layers' head_dim
// as key_length_swa, the full layers' as key_length (hf_config.cpp moves it into
// per_layer_config, as Gemma4TextConfig.__post_init__ builds it from global_head_dim), both rope
// bases (hf_config.cpp nests them in rope_parameters), the per-layer input width, the shared KV
// layers, the smallest feed_forward_length (hf_config.cpp: a per-layer one is a double-wide MLP). A
// per-layer head_count_kv (num_global_key_value_heads) is no count: no config.
constexpr ConfigKey kGemma4Own[] = {
    {"feed_forward_length", "intermediate_size", ValueKind::kLayerMin},
    {"vocab_size", "vocab_size"},
    {"attention.key_length_swa", "head_dim"},
    {"attention.key_length", "global_head_dim"}};
constexpr auto kGemma4Keys = join(kGemmaPerLayerInputKeys, kGemma4Own);
// gemma.py, Gemma3NModel.set_gguf_parameters (after Gemma3Model's and base.py's): the
// per-layer intermediate_size as it is (Gemma3nTextConfig holds one a layer), the sliding
// layers' rope base, AltUp's inputs and active one, the per-layer input width, the shared KV
// layers, activation_sparsity_pattern as Normal(0, 1).icdf of each p, the sliding layers as
// true (Architecture::layer_types). Not written: laurel_rank (from laurel.linear_left's shape),
// vocab_size_per_layer_input (hf_config.cpp), altup_coef_clip and hidden_activation (the class
// defaults, every Gemma 3n's).
constexpr ConfigKey kGemma3nOwn[] = {
    {"feed_forward_length", "intermediate_size", ValueKind::kLayerCounts},
    {"attention.key_length", "head_dim"},
    {"altup.active_idx", "altup_active_idx"},
    {"altup.num_inputs", "altup_num_inputs"},
    {"activation_sparsity_scale", "activation_sparsity_pattern", ValueKind::kNormalCdf}};
constexpr auto kGemma3nKeys = join(kGemmaPerLayerInputKeys, kGemma3nOwn);
// AltUp's corrected output is scaled where the class says (Gemma3nTextAltUp:
// altup_correct_scale); the layer's tensor shows it.
constexpr TensorFlag kGemma3nFlags[] = {{"altup_correct_scale.weight", "altup_correct_scale"}};
constexpr TensorDim kGemma3nDims[] = {{"laurel_rank", "laurel_l.weight", 0}};
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
// mistral3.py, Ministral3Model.set_gguf_parameters: llama's keys (llama.py) and two of YaRN's
// rope_parameters fields base.py does not write, as fields of rope_scaling (hf_config.cpp,
// add_rope_scaling). Not written: mscale (1.0 in Ministral 3's config.json and the class's) and
// the legacy "type" beside rope_type (the class's default has it; the converter asserts yarn).
constexpr auto kMinistral3Keys =
    base_and({{"rope.dimension_count", "head_dim"},
              {"rope.scaling.yarn_log_multiplier", "rope_scaling.mscale_all_dim", kNumber},
              {"attention.temperature_scale", "rope_scaling.llama_4_scaling_beta", kNumber}});
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
// The converter writes mamba for FalconMambaForCausalLM too, with ssm.dt_b_c_rms true (its RMS
// norms of B, C and dt; mamba.py, MambaModel.set_gguf_parameters).
constexpr Refusal kFalconMambaRefusals[] = {
    {RefuseWhen::kKeyTrue, "ssm.dt_b_c_rms",
     "a FalconMamba, which ggufs renders no transformers config for"}};
// The converter writes granitehybrid for BambaForCausalLM too, with rope.scaling.finetuned true
// (its rope; granite.py, GraniteHybridModel.set_gguf_parameters), false for a GraniteMoeHybrid,
// which has none.
constexpr Refusal kBambaRefusals[] = {{RefuseWhen::kKeyTrue, "rope.scaling.finetuned",
                                       "a Bamba, which ggufs renders no transformers config for"}};
// nemotron.py, NemotronHModel.set_gguf_parameters writes moe_latent_size for a latent MoE
// (fc1_latent_proj, fc2_latent_proj) and nextn_predict_layers for the MTP block it appends.
constexpr Refusal kNemotronHRefusals[] = {
    {RefuseWhen::kKeyPresent, "moe_latent_size",
     "a latent MoE (fc1_latent_proj, fc2_latent_proj), which hf/ does not render"},
    {RefuseWhen::kKeyPresent, "nextn_predict_layers",
     "an MTP block the converter appended as a layer, which hf/ does not render"}};
// Gemma 4's MoE block (enable_moe_block: router scales, per-expert scales) has no entries here.
constexpr Refusal kGemma4Refusals[] = {
    {RefuseWhen::kKeyPresent, "expert_count",
     "Gemma 4's mixture-of-experts block, which hf/ does not render"}};
// The t5 rows' MLP is the gated one (T5 v1.1, Flan-T5, UMT5): the original T5's ReLU MLP (no
// ffn_gate, DenseReluDense.wi) is another state_dict.
constexpr Refusal kT5Refusals[] = {{RefuseWhen::kTensorAbsent, "enc.blk.0.ffn_gate.weight",
                                    "T5's ReLU MLP, which hf/ does not render"}};
constexpr ConfigConstant kMinistral3Constants[] = {
    {"rope_scaling", R"({"mscale": 1.0, "type": "yarn"})"}};
// Mistral Small 3.x's text model (Mistral3ForConditionalGeneration's text_config, model_type
// mistral): no sliding window (every Mistral 3 checkpoint's null; MistralConfig's default is
// 4096), which the converter does not write.
constexpr ConfigConstant kMistral3TextConstants[] = {{"sliding_window", "null"}};

// MlxColumn::experts: mlx-lm's stacked expert modules (mlx_lm/models/switch_layers.py, SwitchGLU
// and SwitchMLP), as each model's sanitize names what it stacks from hf/'s per-expert weights.
// qwen2_moe.py, qwen3_moe.py, olmoe.py, ernie4_5_moe.py, glm4_moe.py, deepseek_v2.py and
// deepseek_v3.py: mlp.switch_mlp.
constexpr std::pair<std::string_view, std::string_view> kMlxSwitchMlp[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.switch_mlp.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.switch_mlp.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.switch_mlp.down_proj.weight"}};
// dots1.py: mlp.experts itself is the SwitchGLU.
constexpr std::pair<std::string_view, std::string_view> kMlxDots1Experts[] = {
    {"mlp.experts.{}.gate_proj.weight", "mlp.experts.gate_proj.weight"},
    {"mlp.experts.{}.up_proj.weight", "mlp.experts.up_proj.weight"},
    {"mlp.experts.{}.down_proj.weight", "mlp.experts.down_proj.weight"}};
// mixtral.py, phimoe.py and minimax.py (minimax_m2's): w1, w2, w3 as gate, down and up.
constexpr std::pair<std::string_view, std::string_view> kMlxBlockSparseSwitch[] = {
    {"block_sparse_moe.experts.{}.w1.weight", "block_sparse_moe.switch_mlp.gate_proj.weight"},
    {"block_sparse_moe.experts.{}.w2.weight", "block_sparse_moe.switch_mlp.down_proj.weight"},
    {"block_sparse_moe.experts.{}.w3.weight", "block_sparse_moe.switch_mlp.up_proj.weight"}};
// nemotron_h.py: the SwitchMLP's fc1 (up_proj) and fc2 (down_proj).
constexpr std::pair<std::string_view, std::string_view> kMlxNemotronHSwitch[] = {
    {"mixer.experts.{}.up_proj.weight", "mixer.switch_mlp.fc1.weight"},
    {"mixer.experts.{}.down_proj.weight", "mixer.switch_mlp.fc2.weight"}};
// jamba.py: feed_forward.switch_mlp.
constexpr std::pair<std::string_view, std::string_view> kMlxFeedForwardSwitch[] = {
    {"feed_forward.experts.{}.gate_proj.weight", "feed_forward.switch_mlp.gate_proj.weight"},
    {"feed_forward.experts.{}.up_proj.weight", "feed_forward.switch_mlp.up_proj.weight"},
    {"feed_forward.experts.{}.down_proj.weight", "feed_forward.switch_mlp.down_proj.weight"}};

// gpt_oss.py: the experts as its sanitize leaves them (gate_up_proj's even and odd rows as
// gate_proj and up_proj, [E, F, H]; down_proj [E, H, F]; each with its bias), which the
// converter's ffn_{gate,up,down}_exps stacks are as stored (gpt_oss.py,
// GptOssModel.modify_tensors); MXFP4 stacks in mlx-lm's "mxfp4" form.
constexpr MlxUnfused kMlxGptOssExperts[] = {
    {"mlp.experts.gate_up_proj", {"mlp.experts.gate_proj.weight", "mlp.experts.up_proj.weight"}},
    {"mlp.experts.gate_up_proj_bias", {"mlp.experts.gate_proj.bias", "mlp.experts.up_proj.bias"}},
    {"mlp.experts.down_proj", {"mlp.experts.down_proj.weight", ""}},
    {"mlp.experts.down_proj_bias", {"mlp.experts.down_proj.bias", ""}}};
// Architecture::layer_groups: the layer tensors one model's layers hold by their kind, each group
// whole or not at all, one of each choice (LayerGroup). A name no entry of a row has changes
// nothing there, so rows share these lists.
// llama's attention (llama_attention below), in a hybrid's attention layers only.
constexpr std::string_view kAttentionTensors[] = {"attn_q.weight", "attn_k.weight", "attn_v.weight",
                                                  "attn_output.weight"};
constexpr std::string_view kQkNormTensors[] = {"attn_q_norm.weight", "attn_k_norm.weight"};
constexpr auto kNormedAttentionTensors = join(kAttentionTensors, kQkNormTensors);
// A Mamba-2 mixer (mamba2_mixer below), in a hybrid's Mamba layers only.
constexpr std::string_view kMamba2Tensors[] = {
    "ssm_dt.bias",     "ssm_a",         "ssm_d",           "ssm_conv1d.weight",
    "ssm_conv1d.bias", "ssm_in.weight", "ssm_norm.weight", "ssm_out.weight"};
// A dense MLP in some layers, the router, the experts and the shared experts in the others:
// modeling_deepseek_v2.py, DeepseekV2DecoderLayer (DeepseekV3's, Glm4MoeDecoderLayer and
// Dots1DecoderLayer likewise) builds the MoE from layer first_k_dense_replace on;
// modeling_ernie4_5_moe.py, Ernie4_5_MoeDecoderLayer, in the layers from moe_layer_start_index
// every moe_layer_interval; modeling_jamba.py, JambaDecoderLayer, where layers_num_experts (from
// expert_layer_offset and _period) is over 1; modeling_nemotron_h.py, NemotronHBlock, in its
// MLP or MoE layers (layers_block_type) only.
constexpr std::string_view kDenseMlpTensors[] = {"ffn_gate.weight", "ffn_up.weight",
                                                 "ffn_down.weight"};
constexpr std::string_view kMoeTensors[] = {
    "ffn_gate_inp.weight", "ffn_gate_exps.weight",  "ffn_up_exps.weight",  "ffn_down_exps.weight",
    "exp_probs_b.bias",    "ffn_gate_shexp.weight", "ffn_up_shexp.weight", "ffn_down_shexp.weight"};
constexpr LayerGroup kDenseOrMoe[] = {{kDenseMlpTensors, 1, "dense"}, {kMoeTensors, 1, "moe"}};
// modeling_lfm2.py, Lfm2DecoderLayer: self_attn (with q/k layernorms) where layer_types says
// "full_attention", the short convolution elsewhere.
constexpr std::string_view kShortConvTensors[] = {
    "shortconv.conv.weight", "shortconv.in_proj.weight", "shortconv.out_proj.weight"};
constexpr LayerGroup kLfm2Groups[] = {{kNormedAttentionTensors, 1, "full_attention"},
                                      {kShortConvTensors, 1, "conv"}};
// modeling_granitemoehybrid.py, GraniteMoeHybridDecoderLayer: a Mamba-2 mixer or attention by
// layers_block_type (the MoE and shared MLP in every layer).
constexpr LayerGroup kMambaOrAttention[] = {{kMamba2Tensors, 1, "mamba"},
                                            {kAttentionTensors, 1, "attention"}};
// modeling_nemotron_h.py, NemotronHBlock: one mixer a layer by layers_block_type (the
// converter's hybrid_override_pattern): Mamba-2, attention, MLP or MoE.
constexpr LayerGroup kNemotronHGroups[] = {{kMamba2Tensors, 1, "M"},
                                           {kAttentionTensors, 1, "*"},
                                           {kDenseMlpTensors, 1, "-"},
                                           {kMoeTensors, 1, "E"}};
// modeling_jamba.py, JambaAttentionDecoderLayer and JambaMambaDecoderLayer by layers_block_type
// (attn_layer_offset and _period), each with a dense MLP or the experts.
constexpr std::string_view kJambaMamba[] = {"ssm_conv1d.weight",
                                            "ssm_conv1d.bias",
                                            "ssm_in.weight",
                                            "ssm_in.bias",
                                            "ssm_x.weight",
                                            "ssm_dt.weight",
                                            "ssm_dt.bias",
                                            "ssm_a",
                                            "ssm_d",
                                            "ssm_out.weight",
                                            "ssm_out.bias",
                                            "ssm_dt_norm.weight",
                                            "ssm_b_norm.weight",
                                            "ssm_c_norm.weight"};
constexpr LayerGroup kJambaGroups[] = {{kAttentionTensors, 1, "attention"},
                                       {kJambaMamba, 1, "mamba"},
                                       {kDenseMlpTensors, 2, "dense"},
                                       {kMoeTensors, 2, "moe"}};
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
// transformers 5's modeling_gemma4.py, Gemma4TextAttention, and modeling_gemma3n.py,
// Gemma3nTextAttention: the last num_kv_shared_layers reuse an earlier layer's keys and values
// and hold no k_proj, v_proj or k_norm (4.57.6's Gemma 3n holds them, unused).
constexpr std::string_view kKvSharingTensors[] = {"attn_k.weight", "attn_v.weight",
                                                  "attn_k_norm.weight"};
constexpr LayerGroup kKvSharing[] = {{kKvSharingTensors, 0, "unshared"}};
constexpr LeadingLayers kUnsharedKv{"unshared", "num_kv_shared_layers"};
// modeling_t5.py, T5Stack: T5Block(has_relative_attention_bias=bool(i == 0)), in the encoder
// and the decoder (UMT5 holds it in every layer: its row lists none).
constexpr std::string_view kT5RelativeBiasTensors[] = {"attn_rel_b.weight"};
constexpr LayerGroup kT5RelativeBias[] = {
    {kT5RelativeBiasTensors, 0, "has_relative_attention_bias"}};

std::vector<WeightEntry> cat(std::initializer_list<std::vector<WeightEntry>> parts) {
  std::vector<WeightEntry> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// `entries` with those named (all, when none is) the class builds only under a config field
// (WeightEntry::optional).
std::vector<WeightEntry> conditional(std::vector<WeightEntry> entries,
                                     std::initializer_list<std::string_view> named = {}) {
  for (WeightEntry& e : entries) {
    e.optional |= named.size() == 0 || std::find(named.begin(), named.end(), e.gguf) != named.end();
  }
  return entries;
}

std::vector<Architecture> build() {
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
  // Qwen2MoeSparseMoeBlock's shared expert and its sigmoid gate.
  const std::vector<WeightEntry> shared_expert = {
      {"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight", Shape::kSharedFfHidden},
      {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight", Shape::kSharedFfHidden},
      {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight", Shape::kHiddenSharedFf},
      {"ffn_gate_inp_shexp.weight", "mlp.shared_expert_gate.weight", Shape::kOneHidden},
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
  const std::vector<WeightEntry> gemma_norms = {
      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
      {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight", Shape::kHidden},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden},
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
  constexpr std::string_view kModelLayer = "model.layers.{}.";

  std::vector<Architecture> rows;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };

  const Architecture llama{.gguf_arch = "llama",
                           .model_type = "llama",
                           .class_name = "LlamaForCausalLM",
                           .keys = kLlamaKeys,
                           .defaults = {.ff = 11008, .bos = 1, .eos = 2},
                           .transforms = Transforms::kLlama,
                           .layer_prefix = kModelLayer,
                           .before = embed,
                           .layer = cat({llama_attention, gated_mlp, two_norms}),
                           .after = norm_head};
  add(llama);
  // transformers' own import takes a llama whose general.name is "mistral" for a mistral
  // (load_gguf_checkpoint); gguf-py has no mistral tensor map, so that import loads no weights.
  add({.gguf_arch = "mistral",
       .model_type = "mistral",
       .class_name = "MistralForCausalLM",
       .keys = kLlamaKeys,
       .defaults = {.bos = 1, .eos = 2},
       .no_weights = "model_type 'mistral': gguf-py has no mistral tensor map, transformers' "
                     "import loads no tensors for it"});
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
  // gguf-py's GEMMA2 tensors have no OUTPUT (Gemma 2 ties its embeddings).
  add({.gguf_arch = "gemma2",
       .model_type = "gemma2",
       .class_name = "Gemma2ForCausalLM",
       .keys = kGemma2Keys,
       .defaults = {.kv_heads = 4, .head_dim = 256, .ff = 9216, .bos = 2, .eos = 1, .pad = 0},
       .transforms = Transforms::kGemma,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, gemma_norms}),
       .after = {{"output_norm.weight", "model.norm.weight", Shape::kHidden}},
       .query_scalar_layers = 46});
  add({.gguf_arch = "gemma3",
       .model_type = "gemma3_text",
       .class_name = "Gemma3ForCausalLM",
       .keys = kGemma3Keys,
       .defaults = {.kv_heads = 4, .head_dim = 256, .ff = 9216, .bos = 2, .eos = 1, .pad = 0},
       .transforms = Transforms::kGemma,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, qk_norms, gated_mlp, gemma_norms}),
       .after = norm_head,
       .query_scalar_layers = 62});
  // Phi3Attention registers o_proj before qkv_proj; the converter keeps both fusions.
  add({.gguf_arch = "phi3",
       .model_type = "phi3",
       .class_name = "Phi3ForCausalLM",
       .keys = kPhi3Keys,
       .defaults = {.ff = 8192, .bos = 1, .eos = 32000, .pad = 32000},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({{{"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
                      {"attn_qkv.weight", "self_attn.qkv_proj.weight", Shape::kFusedQkv},
                      {"ffn_up.weight", "mlp.gate_up_proj.weight", Shape::kFusedGateUp},
                      {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf}},
                     two_norms}),
       .after = norm_head});
  add({.gguf_arch = "granite",
       .model_type = "granite",
       .class_name = "GraniteForCausalLM",
       .keys = kGraniteKeys,
       .defaults = {.ff = 11008, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head,
       .mlx = {.defaults = kMlxGranite}});
  // GraniteMoe keeps its experts stacked, gate and up fused in input_linear (E, 2F, H) with F its
  // intermediate_size: the converter splits that into ffn_gate_exps and ffn_up_exps
  // (granite.py, GraniteMoeModel.modify_tensors).
  // transformers 5.x renames these names at load (conversion_mapping.py, "granitemoe").
  const std::vector<WeightEntry> granite_experts = {
      {"ffn_gate_exps.weight",
       "block_sparse_moe.input_linear.weight",
       Shape::kExpertsGateUp,
       false,
       {"ffn_up_exps.weight"}},
      {"ffn_down_exps.weight", "block_sparse_moe.output_linear.weight", Shape::kExpertsDown},
      {"ffn_gate_inp.weight", "block_sparse_moe.router.layer.weight", Shape::kRouter}};
  add({.gguf_arch = "granitemoe",
       .model_type = "granitemoe",
       .class_name = "GraniteMoeForCausalLM",
       .keys = kGraniteMoeKeys,
       .defaults = {.ff = 11008, .experts = 8, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, granite_experts, two_norms}),
       .after = norm_head,
       .mlx = {.defaults = kMlxNoAttentionBias}});
  // GraniteMoeShared is written as granitemoe plus the shared expert, whose input_linear
  // (2·Fs, H) the converter splits into ffn_gate_shexp and ffn_up_shexp (granite.py,
  // GraniteMoeModel.modify_tensors).
  add({.gguf_arch = "granitemoe",
       .required_key = "expert_shared_feed_forward_length",
       .model_type = "granitemoeshared",
       .class_name = "GraniteMoeSharedForCausalLM",
       .keys = kGraniteMoeSharedKeys,
       .defaults = {.ff = 11008, .experts = 8, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     granite_experts,
                     two_norms,
                     {{"ffn_gate_shexp.weight",
                       "shared_mlp.input_linear.weight",
                       Shape::kSharedGateUp,
                       false,
                       {"ffn_up_shexp.weight"}},
                      {"ffn_down_shexp.weight", "shared_mlp.output_linear.weight",
                       Shape::kHiddenSharedFf}}}),
       .after = norm_head,
       .required_tensor = "ffn_gate_shexp.weight",
       .mlx = {.absent =
                   "mlx-lm 0.32.2 has no model of model_type granitemoeshared (mlx_lm/models/)"}});
  // Mixtral is written as a llama with experts (llama.py, LlamaModel.modify_tensors stacks
  // block_sparse_moe.experts.X.w1/w2/w3); each expert is intermediate_size wide.
  add({.gguf_arch = "llama",
       .required_key = "expert_count",
       .model_type = "mixtral",
       .class_name = "MixtralForCausalLM",
       .keys = kMixtralKeys,
       .defaults = {.kv_heads = 8, .ff = 14336, .experts = 8, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, block_sparse_moe, two_norms}),
       .after = norm_head,
       .required_tensor = "ffn_gate_exps.weight",
       .mlx = {.experts = kMlxBlockSparseSwitch}});
  // OLMoE's experts are intermediate_size wide (olmo.py, OlmoeModel.modify_tensors stacks
  // mlp.experts.X.*); its q_norm spans every head, its k_norm the KV heads.
  add({.gguf_arch = "olmoe",
       .model_type = "olmoe",
       .class_name = "OlmoeForCausalLM",
       .keys = kOlmoeKeys,
       .defaults = {.ff = 2048, .experts = 64, .eos = 50279, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
             {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias},
             {"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
             {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kFfHidden, true},
             {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kFfHidden, true},
             {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kHiddenFf, true}},
            two_norms}),
       .after = norm_head,
       .mlx = {.experts = kMlxSwitchMlp}});
  // PhiMoE: phi3's file with split q/k/v, LayerNorms with biases, and Mixtral's experts
  // (phi.py, PhiMoeModel.modify_tensors stacks block_sparse_moe.experts.X.w1/w2/w3).
  add({.gguf_arch = "phimoe",
       .model_type = "phimoe",
       .class_name = "PhiMoEForCausalLM",
       .keys = kPhiMoeKeys,
       .constants = kPhiMoeConstants,
       .defaults = {.kv_heads = 8, .ff = 6400, .experts = 16, .bos = 1, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention,
                     {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden}},
                     block_sparse_moe,
                     biased_norms}),
       .after = {{"output_norm.weight", "model.norm.weight", Shape::kHidden},
                 {"output_norm.bias", "model.norm.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden},
                 {"output.bias", "lm_head.bias", Shape::kVocab}},
       .mlx = {.experts = kMlxBlockSparseSwitch}});
  // ERNIE 4.5 MoE: dense layers before moe_layer_start_index, then the router's correction
  // bias, the experts (ernie.py, Ernie4_5MoeModel.modify_tensors) and the shared experts as one
  // MLP; the MTP layers are dropped by the converter.
  add({.gguf_arch = "ernie4_5-moe",
       .model_type = "ernie4_5_moe",
       .class_name = "Ernie4_5_MoeForCausalLM",
       .keys = kErnie45MoeKeys,
       .defaults = {.kv_heads = 4,
                    .ff = 12288,
                    .experts = 64,
                    .expert_ff = 1536,
                    .shared_experts = 2,
                    .bos = 1,
                    .eos = 2,
                    .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            gated_mlp,
            {{"exp_probs_b.bias", "mlp.moe_statics.e_score_correction_bias", Shape::kOneExperts}},
            experts,
            // Where moe_num_shared_experts > 0 (modeling_ernie4_5_moe.py,
            // Ernie4_5_MoeSparseMoeBlock).
            conditional({{"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight",
                          Shape::kSharedExpertsFfHidden},
                         {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight",
                          Shape::kSharedExpertsFfHidden},
                         {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight",
                          Shape::kHiddenSharedExpertsFf}}),
            two_norms}),
       .after = norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"moe_layer_start_index", "moe_layer_interval", 1, 1},
       .mlx = {.defaults = kMlxNoBias, .experts = kMlxSwitchMlp}});
  // dots.llm1: dense layers before first_k_dense_replace, then the experts (qwen.py,
  // Qwen2MoeModel.modify_tensors), the router with its correction bias (a buffer), and the
  // shared experts as one MLP moe_intermediate_size · n_shared_experts wide.
  add({.gguf_arch = "dots1",
       .model_type = "dots1",
       .class_name = "Dots1ForCausalLM",
       .keys = kDots1Keys,
       .defaults = {.kv_heads = 32, .ff = 10944, .expert_ff = 1408},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, qk_norms, gated_mlp, scored_experts, two_norms}),
       .after = norm_head,
       .layer_groups = kDenseOrMoe,
       .moe_layers = {"first_k_dense_replace", "", 0},
       .mlx = {.experts = kMlxDots1Experts}});
  add({.gguf_arch = "gpt2",
       .model_type = "gpt2",
       .class_name = "GPT2LMHeadModel",
       .keys = kGpt2Keys,
       .defaults = {.positions = 1024, .bos = 50256, .eos = 50256},
       .transforms = Transforms::kGpt2,
       .layer_prefix = "transformer.h.{}.",
       .before = {{"token_embd.weight", "transformer.wte.weight", Shape::kVocabHidden},
                  {"position_embd.weight", "transformer.wpe.weight", Shape::kPositionsHidden}},
       .layer = {{"attn_norm.weight", "ln_1.weight", Shape::kHidden},
                 {"attn_norm.bias", "ln_1.bias", Shape::kHidden},
                 {"attn_qkv.weight", "attn.c_attn.weight", Shape::kConvQkv},
                 {"attn_qkv.bias", "attn.c_attn.bias", Shape::kThreeHidden},
                 {"attn_output.weight", "attn.c_proj.weight", Shape::kHiddenHidden},
                 {"attn_output.bias", "attn.c_proj.bias", Shape::kHidden},
                 {"ffn_norm.weight", "ln_2.weight", Shape::kHidden},
                 {"ffn_norm.bias", "ln_2.bias", Shape::kHidden},
                 {"ffn_up.weight", "mlp.c_fc.weight", Shape::kHiddenFf},
                 {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.c_proj.weight", Shape::kFfHidden},
                 {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
                 {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .heads_divide_hidden = true,
       .mlx = {.absent = "mlx-lm 0.32.2's gpt2.py takes the first GPT-2 checkpoint's names "
                         "(h.N.*), not save_pretrained's (transformer.h.N.*)"}});
  add({.gguf_arch = "starcoder2",
       .model_type = "starcoder2",
       .class_name = "Starcoder2ForCausalLM",
       .keys = kStarcoder2Keys,
       .defaults = {.kv_heads = 2, .ff = 12288, .bos = 50256, .eos = 50256},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({biased_attention,
                     {{"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
                      {"ffn_up.weight", "mlp.c_fc.weight", Shape::kFfHidden},
                      {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
                      {"ffn_down.weight", "mlp.c_proj.weight", Shape::kHiddenFf},
                      {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden}},
                     biased_norms}),
       .after = norm_bias_head});
  add({.gguf_arch = "stablelm",
       .model_type = "stablelm",
       .class_name = "StableLmForCausalLM",
       .keys = kStablelmKeys,
       .defaults = {.kv_heads = 32, .ff = 6912, .bos = 0, .eos = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       // The q/k/v biases under use_qkv_bias, post_attention_layernorm unless
       // use_parallel_residual (modeling_stablelm.py, StableLmAttention and
       // StableLmDecoderLayer), both of which the tensors set (hf_config.cpp, tensor_fields).
       .layer = conditional(
           cat({biased_attention, gated_mlp, biased_norms}),
           {"attn_q.bias", "attn_k.bias", "attn_v.bias", "ffn_norm.weight", "ffn_norm.bias"}),
       .after = norm_bias_head,
       .mlx = {.defaults = kMlxStableLm}});
  // Olmo2's q_norm and k_norm span all heads (nh·hd, nkv·hd), and its norms follow attention
  // and the MLP (modeling_olmo2.py, Olmo2Attention and Olmo2DecoderLayer); the converter renames
  // only (olmo.py, Olmo2Model).
  add({.gguf_arch = "olmo2",
       .model_type = "olmo2",
       .class_name = "Olmo2ForCausalLM",
       .keys = kBaseKeys,
       .defaults = {.ff = 11008, .eos = 50279, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
                 {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias}},
                gated_mlp,
                {{"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head});
  // SmolLM3 is a llama to the converter (llama.py, SmolLM3Model: LlamaModel's keys and q/k
  // permutation); its rope.dimension_count is hidden / heads, which SmolLM3Config has no field
  // for.
  add({.gguf_arch = "smollm3",
       .model_type = "smollm3",
       .class_name = "SmolLM3ForCausalLM",
       .keys = kBaseKeys,
       .defaults = {.kv_heads = 4, .ff = 11008, .bos = 128000, .eos = 128001, .pad = 128004},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head});
  // The converter renames only (olmo.py, SeedOssModel); head_dim is written as
  // attention.key_length (base.py), as qwen3's. gguf-py's SEED_OSS tensors have no FFN_NORM:
  // post_attention_layernorm is ATTN_POST_NORM.
  add({.gguf_arch = "seed_oss",
       .model_type = "seed_oss",
       .class_name = "SeedOssForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.kv_heads = 8, .head_dim = 128, .ff = 27648, .bos = 0, .eos = 2, .pad = 1},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {biased_attention,
            gated_mlp,
            {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .mlx = {.defaults = kMlxAttentionBias}});
  // Ernie4_5ForCausalLM's q/k/v and gate/up are separate (the converter's split of a fused
  // checkpoint's qkv_proj and up_gate_proj, ernie.py Ernie4_5Model.modify_tensors, is the same
  // tensors); head_dim is written as attention.key_length (base.py).
  add({.gguf_arch = "ernie4_5",
       .model_type = "ernie4_5",
       .class_name = "Ernie4_5ForCausalLM",
       .keys = kQwen3Keys,
       .defaults = {.kv_heads = 2, .head_dim = 128, .ff = 3072, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head,
       .mlx = {.defaults = kMlxNoBias}});
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
  // Arcee is a llama to the converter (llama.py, ArceeModel: LlamaModel's keys and q/k
  // permutation); its MLP has no gate (modeling_arcee.py, ArceeMLP).
  add({.gguf_arch = "arcee",
       .model_type = "arcee",
       .class_name = "ArceeForCausalLM",
       .keys = kLlamaKeys,
       .defaults = {.ff = 18432, .bos = 128000, .eos = 128001},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, ungated_mlp, two_norms}),
       .after = norm_head,
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type arcee (mlx_lm/models/)"}});
  // OLMo's layer norms have no parameters (modeling_olmo.py, OlmoLayerNorm); the converter
  // permutes the q/k weights as llama's (olmo.py, OlmoModel.modify_tensors).
  add({.gguf_arch = "olmo",
       .model_type = "olmo",
       .class_name = "OlmoForCausalLM",
       .keys = kOlmoKeys,
       .defaults = {.ff = 11008, .eos = 50279, .pad = 1},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp}),
       .after = {{"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .mlx = {.absent = "mlx-lm 0.32.2's olmo.py builds the original OLMo code's model (it "
                         "imports ai2-olmo's hf_olmo), not OlmoForCausalLM"}});
  // Phi-2: biased q/k/v and dense, fc1/fc2 MLP, one layer norm per layer (modeling_phi.py,
  // PhiDecoderLayer) and a biased lm_head; the converter renames only.
  add({.gguf_arch = "phi2",
       .model_type = "phi",
       .class_name = "PhiForCausalLM",
       .keys = kPhi2Keys,
       .defaults = {.ff = 8192, .bos = 1, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
                 {"attn_output.weight", "self_attn.dense.weight", Shape::kO},
                 {"attn_output.bias", "self_attn.dense.bias", Shape::kHidden},
                 {"ffn_up.weight", "mlp.fc1.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.fc1.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.fc2.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.fc2.bias", Shape::kHidden},
                 {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "model.final_layernorm.weight", Shape::kHidden},
                 {"output_norm.bias", "model.final_layernorm.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden},
                 {"output.bias", "lm_head.bias", Shape::kVocab}}});
  // Command R: one layer norm (weight only) before attention and MLP in parallel; per-head q/k
  // norms (nh, hd) where use_qk_norm, which the tensors show (modeling_cohere.py,
  // CohereAttention); the converter renames only (command_r.py, CommandR2Model).
  add({.gguf_arch = "command-r",
       .model_type = "cohere",
       .class_name = "CohereForCausalLM",
       .keys = kCohereKeys,
       .defaults = {.ff = 22528, .bos = 5, .eos = 255001, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                conditional(
                    {{"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadsHeadDim},
                     {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvHeadsHeadDim}}),
                gated_mlp,
                {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .tensor_flags = kCohereFlags});
  // Command R7B: Command R's tensors without q/k norms; the converter drops the biases, which
  // must be zero (command_r.py, Cohere2Model.modify_tensors), as the class has none. The layer
  // pattern is not written: llama.cpp's every 4th layer global (src/models/cohere2.cpp) is the
  // class default.
  add({.gguf_arch = "cohere2",
       .model_type = "cohere2",
       .class_name = "Cohere2ForCausalLM",
       .keys = kCohere2Keys,
       .defaults = {.ff = 22528, .bos = 5, .eos = 255001, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     gated_mlp,
                     {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head});
  // GPT-NeoX: LayerNorms with biases, the fused query_key_value per head [q, k, v] (regrouped
  // by the converter, gptneox.py GPTNeoXModel.modify_tensors), biased dense and MLP, untied
  // embed_out (modeling_gpt_neox.py); the attention's biases under attention_bias
  // (GPTNeoXAttention), which the tensors set (kGptNeoXFlags).
  add({.gguf_arch = "gptneox",
       .model_type = "gpt_neox",
       .class_name = "GPTNeoXForCausalLM",
       .keys = kGptNeoXKeys,
       .defaults = {.ff = 24576, .bos = 0, .eos = 2},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "gpt_neox.layers.{}.",
       .before = {{"token_embd.weight", "gpt_neox.embed_in.weight", Shape::kVocabHidden}},
       .layer = {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
                 {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden},
                 {"attn_qkv.weight", "attention.query_key_value.weight", Shape::kFusedQkv},
                 {.gguf = "attn_qkv.bias",
                  .hf = "attention.query_key_value.bias",
                  .shape = Shape::kThreeHidden,
                  .optional = true},
                 {"attn_output.weight", "attention.dense.weight", Shape::kHiddenHidden},
                 {.gguf = "attn_output.bias",
                  .hf = "attention.dense.bias",
                  .shape = Shape::kHidden,
                  .optional = true},
                 {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.dense_h_to_4h.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.dense_4h_to_h.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "gpt_neox.final_layer_norm.weight", Shape::kHidden},
                 {"output_norm.bias", "gpt_neox.final_layer_norm.bias", Shape::kHidden},
                 {"output.weight", "embed_out.weight", Shape::kVocabHidden}},
       .tensor_flags = kGptNeoXFlags,
       .mlx = {.renamed = kMlxGptNeoXRenamed}});
  // Falcon: the fused query_key_value per KV group [q × heads / kv, k, v] (regrouped by the
  // converter, falcon.py FalconModel.modify_tensors), no biases (its view of a bias fails),
  // parallel attention and MLP (gguf-py's FALCON tensors have no FFN_NORM).
  const std::vector<WeightEntry> falcon_attention_mlp = {
      {"attn_qkv.weight", "self_attention.query_key_value.weight", Shape::kFusedQkv},
      {"attn_output.weight", "self_attention.dense.weight", Shape::kHiddenHidden},
      {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
      {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf}};
  const std::vector<WeightEntry> falcon_embed = {
      {"token_embd.weight", "transformer.word_embeddings.weight", Shape::kVocabHidden}};
  const std::vector<WeightEntry> falcon_head = {
      {"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
      {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden}};
  add({.gguf_arch = "falcon",
       .model_type = "falcon",
       .class_name = "FalconForCausalLM",
       .keys = kFalconKeys,
       .constants = kFalconOneNorm,
       .defaults = {.bos = 11, .eos = 11},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = falcon_embed,
       .layer = cat({falcon_attention_mlp,
                     {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                      {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden}}}),
       .after = falcon_head,
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type falcon (mlx_lm/models/)"}});
  // gguf-py names ln_attn ATTN_NORM_2 and ln_mlp ATTN_NORM (tensor_mapping.py).
  add({.gguf_arch = "falcon",
       .model_type = "falcon",
       .class_name = "FalconForCausalLM",
       .keys = kFalconKeys,
       .constants = kFalconTwoNorms,
       .defaults = {.bos = 11, .eos = 11},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = falcon_embed,
       .layer = cat({falcon_attention_mlp,
                     {{"attn_norm_2.weight", "ln_attn.weight", Shape::kHidden},
                      {"attn_norm_2.bias", "ln_attn.bias", Shape::kHidden},
                      {"attn_norm.weight", "ln_mlp.weight", Shape::kHidden},
                      {"attn_norm.bias", "ln_mlp.bias", Shape::kHidden}}}),
       .after = falcon_head,
       .required_tensor = "attn_norm_2.weight",
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type falcon (mlx_lm/models/)"}});
  // BLOOM: the embedding's LayerNorm, the fused query_key_value per head [q, k, v] (regrouped by
  // the converter, bloom.py BloomModel.modify_tensors, which also drops "transformer."),
  // biased LayerNorms, dense and MLP; ALiBi, no rotary; tied lm_head (modeling_bloom.py).
  add({.gguf_arch = "bloom",
       .model_type = "bloom",
       .class_name = "BloomForCausalLM",
       .keys = kBloomKeys,
       .defaults = {.bos = 1, .eos = 2},
       .transforms = Transforms::kRegroupQkv,
       .layer_prefix = "transformer.h.{}.",
       .before = {{"token_embd.weight", "transformer.word_embeddings.weight", Shape::kVocabHidden},
                  {"token_embd_norm.weight", "transformer.word_embeddings_layernorm.weight",
                   Shape::kHidden},
                  {"token_embd_norm.bias", "transformer.word_embeddings_layernorm.bias",
                   Shape::kHidden}},
       .layer = {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
                 {"attn_qkv.weight", "self_attention.query_key_value.weight", Shape::kFusedQkv},
                 {"attn_qkv.bias", "self_attention.query_key_value.bias", Shape::kThreeHidden},
                 {"attn_output.weight", "self_attention.dense.weight", Shape::kHiddenHidden},
                 {"attn_output.bias", "self_attention.dense.bias", Shape::kHidden},
                 {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden},
                 {"ffn_up.weight", "mlp.dense_h_to_4h.weight", Shape::kFfHidden},
                 {"ffn_up.bias", "mlp.dense_h_to_4h.bias", Shape::kFf},
                 {"ffn_down.weight", "mlp.dense_4h_to_h.weight", Shape::kHiddenFf},
                 {"ffn_down.bias", "mlp.dense_4h_to_h.bias", Shape::kHidden}},
       .after = {{"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
                 {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type bloom (mlx_lm/models/)"}});
  // Nemotron: LayerNorm1P norms (weight and bias), stored by the converter as 1 + weight
  // (nemotron.py, NemotronModel.modify_tensors: every "norm.weight"), the bias as it is; relu²
  // MLP without a gate (modeling_nemotron.py, NemotronMLP).
  add({.gguf_arch = "nemotron",
       .model_type = "nemotron",
       .class_name = "NemotronForCausalLM",
       .keys = kNemotronKeys,
       .defaults = {.ff = 24576, .bos = 2, .eos = 3},
       .transforms = Transforms::kGemma,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, ungated_mlp, biased_norms}),
       .after = norm_bias_head,
       .mlx = {.defaults = kMlxNemotron}});
  // EXAONE 4: q/k norms, and norms after attention and the MLP only (modeling_exaone4.py,
  // Exaone4DecoderLayer); the converter renames only (exaone.py, Exaone4Model; rope_freqs, made
  // from a llama3 rope_scaling, has no parameter).
  add({.gguf_arch = "exaone4",
       .model_type = "exaone4",
       .class_name = "Exaone4ForCausalLM",
       .keys = kExaone4Keys,
       .constants = kExaone4Constants,
       .defaults = {.kv_heads = 32, .ff = 16384, .bos = 0, .eos = 2},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                qk_norms,
                gated_mlp,
                {{"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
                 {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden}}}),
       .after = norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .mlx = {.defaults = kMlxExaone4, .window_pattern = true}});
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
  // MiniMax-M2: q/k norms over all heads, Mixtral's expert names (the checkpoint's, which
  // transformers 5.24.0 fuses at load: conversion_mapping.py, "minimax_m2") stacked by the
  // converter (minimax.py, MiniMaxM2Model.modify_tensors), the routing's correction bias.
  add({.gguf_arch = "minimax-m2",
       .model_type = "minimax_m2",
       .class_name = "MiniMaxM2ForCausalLM",
       .keys = kMiniMaxM2Keys,
       .defaults = {.kv_heads = 8,
                    .head_dim = 128,
                    .ff = 1536,
                    .experts = 256,
                    .bos = 200034,
                    .eos = 200020},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({llama_attention,
                {
                    {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kQBias},
                    {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kKvBias},
                },
                block_sparse_moe,
                {{"exp_probs_b.bias", "block_sparse_moe.e_score_correction_bias", Shape::kExperts}},
                two_norms}),
       .after = norm_head,
       .mlx = {.experts = kMlxBlockSparseSwitch}});
  // LFM2: attention layers (q/k norms, out_proj) and short-convolution layers (lfm2.py
  // squeezes the Conv1d weight), each with the w1/w3/w2 MLP (modeling_lfm2.py,
  // Lfm2DecoderLayer); the final norm is embedding_norm.
  add({.gguf_arch = "lfm2",
       .model_type = "lfm2",
       .class_name = "Lfm2ForCausalLM",
       .keys = kLfm2Keys,
       .constants = kLfm2Constants,
       .defaults = {.kv_heads = 8, .ff = 12288, .bos = 1, .eos = 2, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_output.weight", "self_attn.out_proj.weight", Shape::kO},
                 {"attn_q_norm.weight", "self_attn.q_layernorm.weight", Shape::kHeadDim},
                 {"attn_k_norm.weight", "self_attn.k_layernorm.weight", Shape::kHeadDim},
                 {"shortconv.conv.weight", "conv.conv.weight", Shape::kHiddenOneConv},
                 {"shortconv.in_proj.weight", "conv.in_proj.weight", Shape::kThreeHiddenHidden},
                 {"shortconv.out_proj.weight", "conv.out_proj.weight", Shape::kHiddenHidden},
                 {"ffn_gate.weight", "feed_forward.w1.weight", Shape::kFfHidden},
                 {"ffn_up.weight", "feed_forward.w3.weight", Shape::kFfHidden},
                 {"ffn_down.weight", "feed_forward.w2.weight", Shape::kHiddenFf},
                 {"attn_norm.weight", "operator_norm.weight", Shape::kHidden},
                 {"ffn_norm.weight", "ffn_norm.weight", Shape::kHidden}},
       .after = {{"token_embd_norm.weight", "model.embedding_norm.weight", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .layer_types = {"attention.head_count_kv", "full_attention", "conv"},
       .layer_groups = kLfm2Groups,
       .mlx = {.defaults = kMlxLfm2, .renamed = kMlxLfm2Renamed}});
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
       .eos_from = "eod_token_id"});
  // Mamba: A_log stored as A = -exp(A_log), conv1d squeezed (mamba.py,
  // MambaModel.modify_tensors); the tied lm_head is dropped there.
  const std::vector<WeightEntry> mamba_head = {
      {"output_norm.weight", "backbone.norm_f.weight", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden}};
  add({.gguf_arch = "mamba",
       .model_type = "mamba",
       .class_name = "MambaForCausalLM",
       .keys = kMambaKeys,
       .defaults = {.bos = 0, .eos = 0, .pad = 0},
       .transforms = Transforms::kSsm,
       .layer_prefix = "backbone.layers.{}.",
       .before = {{"token_embd.weight", "backbone.embeddings.weight", Shape::kVocabHidden}},
       .layer = {{"attn_norm.weight", "norm.weight", Shape::kHidden},
                 {"ssm_a", "mixer.A_log", Shape::kInnerState},
                 {"ssm_d", "mixer.D", Shape::kInner},
                 {"ssm_conv1d.weight", "mixer.conv1d.weight", Shape::kInnerOneKernel},
                 {"ssm_conv1d.bias", "mixer.conv1d.bias", Shape::kInner},
                 {"ssm_in.weight", "mixer.in_proj.weight", Shape::kTwoInnerHidden},
                 {"ssm_x.weight", "mixer.x_proj.weight", Shape::kRankStatesInner},
                 {"ssm_dt.weight", "mixer.dt_proj.weight", Shape::kInnerRank},
                 {"ssm_dt.bias", "mixer.dt_proj.bias", Shape::kInner},
                 {"ssm_out.weight", "mixer.out_proj.weight", Shape::kHiddenInner}},
       .after = mamba_head,
       .refusals = kFalconMambaRefusals,
       .mlx = {.defaults = kMlxMamba}});
  // Mamba-2: A and D reshaped to (heads, 1), the gated norm to (G, I/G), dt_bias renamed
  // dt_proj.bias (mamba.py, Mamba2Model.filter_tensors and modify_tensors).
  add({.gguf_arch = "mamba2",
       .model_type = "mamba2",
       .class_name = "Mamba2ForCausalLM",
       .keys = kMamba2Keys,
       .defaults = {.bos = 0, .eos = 2, .pad = 1},
       .transforms = Transforms::kSsm,
       .layer_prefix = "backbone.layers.{}.",
       .before = {{"token_embd.weight", "backbone.embeddings.weight", Shape::kVocabHidden}},
       .layer = {{"attn_norm.weight", "norm.weight", Shape::kHidden},
                 {"ssm_dt.bias", "mixer.dt_bias", Shape::kSsmHeads},
                 {"ssm_a", "mixer.A_log", Shape::kSsmHeads},
                 {"ssm_d", "mixer.D", Shape::kSsmHeads},
                 {"ssm_conv1d.weight", "mixer.conv1d.weight", Shape::kConvChannelsOneKernel},
                 {"ssm_conv1d.bias", "mixer.conv1d.bias", Shape::kConvChannels},
                 {"ssm_in.weight", "mixer.in_proj.weight", Shape::kMamba2InProj},
                 {"ssm_norm.weight", "mixer.norm.weight", Shape::kInner},
                 {"ssm_out.weight", "mixer.out_proj.weight", Shape::kHiddenInner}},
       .after = mamba_head,
       .mlx = {.absent = "mlx-lm 0.32.2's mamba2.py requires intermediate_size, which Mamba2Config "
                         "does not have"}});
  // gpt-oss: biased attention with per-head sinks, a biased router, stacked experts with biases
  // (modeling_gpt_oss.py, GptOssAttention, GptOssTopKRouter, GptOssExperts). The converter
  // splits gate_up_proj (E, H, 2F) into its even and odd columns, transposed, and transposes
  // down_proj (gpt_oss.py, GptOssModel.modify_tensors); sinks become attn_sinks.weight
  // (GptOssModel.filter_tensors).
  add({.gguf_arch = "gpt-oss",
       .model_type = "gpt_oss",
       .class_name = "GptOssForCausalLM",
       .keys = kGptOssKeys,
       .constants = kGptOssConstants,
       .defaults = {.kv_heads = 8, .head_dim = 64, .ff = 2880, .experts = 128},
       .transforms = Transforms::kGptOss,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = {{"attn_sinks.weight", "self_attn.sinks", Shape::kHeads},
                 {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
                 {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
                 {"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
                 {"ffn_gate_inp.weight", "mlp.router.weight", Shape::kRouter},
                 {"ffn_gate_inp.bias", "mlp.router.bias", Shape::kExperts},
                 {"ffn_gate_exps.weight",
                  "mlp.experts.gate_up_proj",
                  Shape::kExpertsHiddenGateUp,
                  false,
                  {"ffn_up_exps.weight"}},
                 {"ffn_gate_exps.bias",
                  "mlp.experts.gate_up_proj_bias",
                  Shape::kExpertsGateUpBias,
                  false,
                  {"ffn_up_exps.bias"}},
                 {"ffn_down_exps.weight", "mlp.experts.down_proj", Shape::kExpertsFfHiddenT},
                 {"ffn_down_exps.bias", "mlp.experts.down_proj_bias", Shape::kExpertsHidden},
                 {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                 {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden}},
       .after = norm_head,
       .mlx = {.unfused = kMlxGptOssExperts}});
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
  // GraniteMoeHybrid: every layer holds granitemoe's experts (none when dense: the class builds
  // them where num_local_experts > 0, modeling_granitemoehybrid.py,
  // GraniteMoeHybridDecoderLayer), the shared MLP (its input_linear split into gate and up:
  // shexp with experts, the plain ffn without; either stands for the other) and
  // either a Mamba-2 mixer (mamba.py, Mamba2Model.modify_tensors: A = -exp(A_log), reshapes) or
  // llama's permuted attention (granite.py, GraniteHybridModel.modify_tensors).
  add({.gguf_arch = "granitehybrid",
       .model_type = "granitemoehybrid",
       .class_name = "GraniteMoeHybridForCausalLM",
       .keys = kGraniteHybridKeys,
       .constants = kGraniteHybridConstants,
       .defaults = {.ff = 11008, .experts = 8, .shared_expert_ff = 1024, .bos = 1, .eos = 2},
       .transforms = Transforms::kLlamaSsm,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {conditional(granite_experts),
            two_norms,
            {{"ffn_gate_shexp.weight",
              "shared_mlp.input_linear.weight",
              Shape::kSharedGateUp,
              false,
              {"ffn_up_shexp.weight"}},
             {"ffn_down_shexp.weight", "shared_mlp.output_linear.weight", Shape::kHiddenSharedFf},
             {"ffn_gate.weight",
              "shared_mlp.input_linear.weight",
              Shape::kSharedGateUp,
              false,
              {"ffn_up.weight"}},
             {"ffn_down.weight", "shared_mlp.output_linear.weight", Shape::kHiddenSharedFf}},
            mamba2_mixer,
            llama_attention}),
       .after = norm_head,
       .layer_types = {"attention.head_count_kv", "attention", "mamba"},
       .layer_groups = kMambaOrAttention,
       .refusals = kBambaRefusals,
       .mlx = {.defaults = kMlxGraniteMoeHybrid}});
  // NemotronH's MoE form, as the converter writes it from a transformers 5 config (whose
  // to_dict() always holds num_experts_per_tok: nemotron.py, NemotronHModel.__init__) and as the
  // Hub checkpoints name it (backbone.*, one tensor an expert; transformers 5 renames and stacks
  // them at load, conversion_mapping.py "nemotron_h"). Each layer one mixer after its norm
  // (modeling_nemotron_h.py, NemotronHBlock): a Mamba-2 mixer (A = -exp(A_log), reshapes, the dt
  // bias as ssm_dt.bias), llama's permuted attention (granite.py, GraniteHybridModel), or the MoE
  // (experts of up and down projections only, stacked; the router and its correction bias; the
  // shared expert).
  const std::vector<WeightEntry> nemotron_h_mixers = {
      {"attn_norm.weight", "norm.weight", Shape::kHidden},
      {"ssm_conv1d.weight", "mixer.conv1d.weight", Shape::kConvChannelsOneKernel},
      {"ssm_conv1d.bias", "mixer.conv1d.bias", Shape::kConvChannels},
      {"ssm_in.weight", "mixer.in_proj.weight", Shape::kMamba2InProj},
      {"ssm_dt.bias", "mixer.dt_bias", Shape::kSsmHeads},
      {"ssm_a", "mixer.A_log", Shape::kSsmHeads},
      {"ssm_norm.weight", "mixer.norm.weight", Shape::kInner},
      {"ssm_d", "mixer.D", Shape::kSsmHeads},
      {"ssm_out.weight", "mixer.out_proj.weight", Shape::kHiddenInner},
      {"attn_q.weight", "mixer.q_proj.weight", Shape::kQ},
      {"attn_k.weight", "mixer.k_proj.weight", Shape::kKv},
      {"attn_v.weight", "mixer.v_proj.weight", Shape::kKv},
      {"attn_output.weight", "mixer.o_proj.weight", Shape::kO}};
  const std::vector<WeightEntry> nemotron_h_embed = {
      {"token_embd.weight", "backbone.embeddings.weight", Shape::kVocabHidden}};
  const std::vector<WeightEntry> nemotron_h_head = {
      {"output_norm.weight", "backbone.norm_f.weight", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden}};
  add({.gguf_arch = "nemotron_h_moe",
       .model_type = "nemotron_h",
       .class_name = "NemotronHForCausalLM",
       .keys = kNemotronHMoeKeys,
       .defaults = {.kv_heads = 8,
                    .head_dim = 128,
                    .experts = 8,
                    .expert_ff = 7688,
                    .shared_expert_ff = 7688,
                    .bos = 1,
                    .eos = 2,
                    .pad = 0},
       .transforms = Transforms::kLlamaSsm,
       .layer_prefix = "backbone.layers.{}.",
       .before = nemotron_h_embed,
       .layer = cat(
           {nemotron_h_mixers,
            {{"ffn_up_exps.weight", "mixer.experts.{}.up_proj.weight", Shape::kExpertFfHidden,
              true},
             {"ffn_down_exps.weight", "mixer.experts.{}.down_proj.weight", Shape::kExpertHiddenFf,
              true},
             {"ffn_gate_inp.weight", "mixer.gate.weight", Shape::kRouter},
             {"exp_probs_b.bias", "mixer.gate.e_score_correction_bias", Shape::kExperts},
             {"ffn_up_shexp.weight", "mixer.shared_experts.up_proj.weight", Shape::kSharedFfHidden},
             {"ffn_down_shexp.weight", "mixer.shared_experts.down_proj.weight",
              Shape::kHiddenSharedFf}}}),
       .after = nemotron_h_head,
       .layer_groups = kNemotronHGroups,
       .refusals = kNemotronHRefusals,
       .layer_pattern = "hybrid_override_pattern",
       .mlx = {.experts = kMlxNemotronHSwitch}});
  // NemotronH's dense form (Nemotron-H, Nemotron Nano 2: a config.json without
  // num_experts_per_tok, nemotron.py NemotronHModel.__init__): the MLP layers' relu² MLP of up
  // and down projections (modeling_nemotron_h.py, NemotronHMLP) where the MoE form has experts.
  add({.gguf_arch = "nemotron_h",
       .model_type = "nemotron_h",
       .class_name = "NemotronHForCausalLM",
       .keys = kNemotronHKeys,
       .defaults = {.kv_heads = 8, .head_dim = 128, .ff = 21504, .bos = 1, .eos = 2, .pad = 0},
       .transforms = Transforms::kLlamaSsm,
       .layer_prefix = "backbone.layers.{}.",
       .before = nemotron_h_embed,
       .layer = cat({nemotron_h_mixers,
                     {{"ffn_up.weight", "mixer.up_proj.weight", Shape::kFfHidden},
                      {"ffn_down.weight", "mixer.down_proj.weight", Shape::kHiddenFf}}}),
       .after = nemotron_h_head,
       .layer_groups = kNemotronHGroups,
       .refusals = kNemotronHRefusals,
       .layer_pattern = "hybrid_override_pattern",
       .mlx = {.experts = kMlxNemotronHSwitch}});
  // Falcon-H1: every layer a Mamba-2 mixer (mamba.py, Mamba2Model.modify_tensors: A =
  // -exp(A_log), reshapes) beside unpermuted attention (Mamba2Model.modify_tensors calls no
  // LlamaModel.permute; the class rotates halves), then a gated MLP; pre_ff_layernorm.weight is
  // mapped whole to ffn_norm (tensor_mapping.py, FFN_PRE_NORM). The weights are the converter's
  // folded ones (kFalconH1Constants). The gated norm and the convolution's bias under
  // mamba_rms_norm and mamba_conv_bias (modeling_falcon_h1.py, FalconH1Mixer; kFalconH1Flags).
  add({.gguf_arch = "falcon-h1",
       .model_type = "falcon_h1",
       .class_name = "FalconH1ForCausalLM",
       .keys = kFalconH1Keys,
       .constants = kFalconH1Constants,
       .defaults = {.kv_heads = 8, .ff = 14336, .bos = 1, .eos = 2, .pad = 0},
       .transforms = Transforms::kSsm,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({{{"ffn_gate.weight", "feed_forward.gate_proj.weight", Shape::kFfHidden},
                      {"ffn_up.weight", "feed_forward.up_proj.weight", Shape::kFfHidden},
                      {"ffn_down.weight", "feed_forward.down_proj.weight", Shape::kHiddenFf}},
                     conditional(mamba2_mixer, {"ssm_norm.weight", "ssm_conv1d.bias"}),
                     llama_attention,
                     {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                      {"ffn_norm", "pre_ff_layernorm.weight", Shape::kHidden}}}),
       .after = {{"output_norm.weight", "model.final_layernorm.weight", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .tensor_flags = kFalconH1Flags,
       .mlx = {.defaults = kMlxFalconH1}});
  // Jamba: attention layers (no q/k permutation: JambaModel is no LlamaModel) or Mamba mixers
  // with RMS norms of dt, B and C, each with a dense MLP or routed experts (modeling_jamba.py,
  // JambaAttentionDecoderLayer, JambaMambaDecoderLayer). The converter stores A = -exp(A_log),
  // squeezes conv1d and stacks the experts (jamba.py, JambaModel.modify_tensors); D is as it is.
  // The convolution's bias under mamba_conv_bias, in_proj's and out_proj's under mamba_proj_bias
  // (JambaMambaMixer; kJambaFlags).
  add({.gguf_arch = "jamba",
       .model_type = "jamba",
       .class_name = "JambaForCausalLM",
       .keys = kJambaKeys,
       .constants = kJambaConstants,
       .defaults = {.kv_heads = 8, .ff = 14336, .experts = 16, .bos = 1, .eos = 2, .pad = 0},
       .transforms = Transforms::kSsm,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     {{"ssm_conv1d.weight", "mamba.conv1d.weight", Shape::kInnerOneKernel},
                      {.gguf = "ssm_conv1d.bias",
                       .hf = "mamba.conv1d.bias",
                       .shape = Shape::kInner,
                       .optional = true},
                      {"ssm_in.weight", "mamba.in_proj.weight", Shape::kTwoInnerHidden},
                      {.gguf = "ssm_in.bias",
                       .hf = "mamba.in_proj.bias",
                       .shape = Shape::kTwoInner,
                       .optional = true},
                      {"ssm_x.weight", "mamba.x_proj.weight", Shape::kRankStatesInner},
                      {"ssm_dt.weight", "mamba.dt_proj.weight", Shape::kInnerRank},
                      {"ssm_dt.bias", "mamba.dt_proj.bias", Shape::kInner},
                      {"ssm_a", "mamba.A_log", Shape::kInnerState},
                      {"ssm_d", "mamba.D", Shape::kInner},
                      {"ssm_out.weight", "mamba.out_proj.weight", Shape::kHiddenInner},
                      {.gguf = "ssm_out.bias",
                       .hf = "mamba.out_proj.bias",
                       .shape = Shape::kHidden,
                       .optional = true},
                      {"ssm_dt_norm.weight", "mamba.dt_layernorm.weight", Shape::kSsmHeads},
                      {"ssm_b_norm.weight", "mamba.b_layernorm.weight", Shape::kStates},
                      {"ssm_c_norm.weight", "mamba.c_layernorm.weight", Shape::kStates},
                      {"ffn_gate_inp.weight", "feed_forward.router.weight", Shape::kRouter},
                      {"ffn_gate_exps.weight", "feed_forward.experts.{}.gate_proj.weight",
                       Shape::kFfHidden, true},
                      {"ffn_up_exps.weight", "feed_forward.experts.{}.up_proj.weight",
                       Shape::kFfHidden, true},
                      {"ffn_down_exps.weight", "feed_forward.experts.{}.down_proj.weight",
                       Shape::kHiddenFf, true},
                      {"ffn_gate.weight", "feed_forward.gate_proj.weight", Shape::kFfHidden},
                      {"ffn_up.weight", "feed_forward.up_proj.weight", Shape::kFfHidden},
                      {"ffn_down.weight", "feed_forward.down_proj.weight", Shape::kHiddenFf},
                      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
                      {"ffn_norm.weight", "pre_ff_layernorm.weight", Shape::kHidden}}}),
       .after = {{"output_norm.weight", "model.final_layernorm.weight", Shape::kHidden},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .tensor_flags = kJambaFlags,
       .layer_periods = kJambaPeriods,
       .layer_groups = kJambaGroups,
       .mlx = {.experts = kMlxFeedForwardSwitch}});
  // Gemma4RMSNorm scales by w, not 1 + w: the converter adds nothing (gemma.py,
  // Gemma4Model.norm_shift). The full layers' attention has its own head_dim (hf_weights.cpp,
  // per_layer_config); the per-layer inputs (PLE) are added after each layer, scaled by its
  // layer_scalar (modeling_gemma4.py, Gemma4TextDecoderLayer).
  add({.gguf_arch = "gemma4",
       .model_type = "gemma4_text",
       .class_name = "Gemma4ForCausalLM",
       .keys = kGemma4Keys,
       .defaults = {.kv_heads = 4, .head_dim = 256, .ff = 9216, .bos = 2, .eos = 1, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer =
           cat({{{"layer_output_scale.weight", "layer_scalar", Shape::kOne}},
                {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
                 {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadDim},
                 {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kHeadDim},
                 {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
                 {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
                 {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO}},
                gated_mlp,
                gemma_norms,
                // Where hidden_size_per_layer_input is not 0 (Gemma4TextDecoderLayer).
                conditional(
                    {{"inp_gate.weight", "per_layer_input_gate.weight", Shape::kPerLayerHidden},
                     {"proj.weight", "per_layer_projection.weight", Shape::kHiddenPerLayer},
                     {"post_norm.weight", "post_per_layer_input_norm.weight", Shape::kHidden}})}),
       .after = {{"output_norm.weight", "model.norm.weight", Shape::kHidden},
                 {"per_layer_token_embd.weight", "model.embed_tokens_per_layer.weight",
                  Shape::kPerLayerEmbeddings},
                 {"per_layer_model_proj.weight", "model.per_layer_model_projection.weight",
                  Shape::kPerLayerModelProjection},
                 {"per_layer_proj_norm.weight", "model.per_layer_projection_norm.weight",
                  Shape::kPerLayerInput},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .layer_groups = kKvSharing,
       .refusals = kGemma4Refusals,
       .per_layer_vocab = PerLayerVocab::kVocab,
       .leading_layers = kUnsharedKv,
       .layer_type_config = true});
  // Gemma 3n (modeling_gemma3n.py, Gemma3nTextModel): Gemma3nRMSNorm scales by w (the converter
  // adds nothing: gemma.py, Gemma3NModel.norm_shift); each layer's AltUp (predict, correct), its
  // LAuReL block and its per-layer input; the KV-sharing layers hold no k/v weights under
  // transformers 5 (4.57.6's have them, unused: served where the file has them). The AltUp
  // projections are stacked by the converter (WeightEntry), its `_scale` named `_scale.weight`
  // (Gemma3NModel.filter_tensors); the per-layer embeddings' zero padding is dropped
  // (HfTransform::kFirstRows).
  add({.gguf_arch = "gemma3n",
       .model_type = "gemma3n_text",
       .class_name = "Gemma3nForCausalLM",
       .keys = kGemma3nKeys,
       .defaults = {.kv_heads = 2, .head_dim = 256, .ff = 16384, .bos = 2, .eos = 1, .pad = 0},
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat(
           {llama_attention,
            qk_norms,
            gated_mlp,
            gemma_norms,
            {{"altup_correct_coef.weight", "altup.correction_coefs.weight", Shape::kAltupInputs},
             // Built in every layer, read only under altup_correct_scale, which the tensor
             // sets (Gemma3nTextAltUp, Gemma3nTextDecoderLayer.forward; kGemma3nFlags).
             {.gguf = "altup_correct_scale.weight",
              .hf = "altup.correct_output_scale",
              .shape = Shape::kHidden,
              .optional = true},
             {"altup_predict_coef.weight", "altup.prediction_coefs.weight",
              Shape::kAltupPredictions},
             {"altup_router.weight", "altup.modality_router.weight", Shape::kAltupInputsHidden},
             {"altup_router_norm.weight", "altup.router_norm.weight", Shape::kHidden},
             {"laurel_l.weight", "laurel.linear_left.weight", Shape::kLaurelHidden},
             {"laurel_r.weight", "laurel.linear_right.weight", Shape::kHiddenLaurel},
             {"laurel_post_norm.weight", "laurel.post_laurel_norm.weight", Shape::kHidden},
             {"inp_gate.weight", "per_layer_input_gate.weight", Shape::kPerLayerHidden},
             {"proj.weight", "per_layer_projection.weight", Shape::kHiddenPerLayer},
             {"post_norm.weight", "post_per_layer_input_norm.weight", Shape::kHidden}}}),
       .after = {{"output_norm.weight", "model.norm.weight", Shape::kHidden},
                 {"altup_proj.weight", "model.altup_projections.{}.weight", Shape::kHiddenHidden,
                  true},
                 {"altup_unembd_proj.weight", "model.altup_unembed_projections.{}.weight",
                  Shape::kHiddenHidden, true},
                 {"per_layer_token_embd.weight", "model.embed_tokens_per_layer.weight",
                  Shape::kPerLayerEmbeddings},
                 {"per_layer_model_proj.weight", "model.per_layer_model_projection.weight",
                  Shape::kPerLayerModelProjection},
                 {"per_layer_proj_norm.weight", "model.per_layer_projection_norm.weight",
                  Shape::kPerLayerInput},
                 {"output.weight", "lm_head.weight", Shape::kVocabHidden}},
       .tensor_flags = kGemma3nFlags,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .tensor_dims = kGemma3nDims,
       .layer_groups = kKvSharing,
       .per_layer_vocab = PerLayerVocab::kPadded,
       .leading_layers = kUnsharedKv,
       .mlx = {.absent =
                   "mlx-lm 0.32.2 has no model of model_type gemma3n_text (mlx_lm/models/)"}});
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
  // Ministral 3's text model: a llama (mistral3.py, Ministral3Model is a LlamaModel) under its
  // own general.architecture, with YaRN (configuration_ministral3.py; transformers 5 only),
  // told from Mistral Small 3.x's by the YaRN key the converter writes only for ministral3
  // (Ministral3Model.set_gguf_parameters).
  add({.gguf_arch = "mistral3",
       .required_key = "rope.scaling.yarn_log_multiplier",
       .model_type = "ministral3",
       .class_name = "Ministral3ForCausalLM",
       .keys = kMinistral3Keys,
       .constants = kMinistral3Constants,
       .defaults = {.kv_heads = 8, .head_dim = 128, .ff = 14336, .bos = 1, .eos = 2, .pad = 11},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention, gated_mlp, two_norms}),
       .after = norm_head});
  // Mistral Small 3.x's text model (Mistral3ForConditionalGeneration with a mistral text_config:
  // the same Ministral3Model, llama's keys alone): a llama under mistral3, MistralForCausalLM
  // without a sliding window. hf/ of it with its Pixtral projector is the
  // Mistral3ForConditionalGeneration (hf_vision.cpp).
  Architecture mistral3 = llama;
  mistral3.gguf_arch = "mistral3";
  mistral3.model_type = "mistral";
  mistral3.class_name = "MistralForCausalLM";
  mistral3.constants = kMistral3TextConstants;
  mistral3.defaults = {.kv_heads = 8, .ff = 14336, .bos = 1, .eos = 2};
  add(std::move(mistral3));
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
  return rows;
}

}  // namespace

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> rows = build();
  return rows;
}

const Architecture* find_architecture(std::string_view model_type, std::string_view gguf_arch) {
  const Architecture* first = nullptr;
  for (const Architecture& a : architectures()) {
    if (a.model_type != model_type) continue;
    if (a.gguf_arch == gguf_arch) return &a;
    if (!first) first = &a;
  }
  return first;
}

std::optional<std::pair<std::uint64_t, std::string_view>> layer_of(std::string_view name,
                                                                   std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const std::size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 19) return std::nullopt;
  if (dot > 1 && name[0] == '0') return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(name[i] - '0');  // 19 digits fit in 64 bits
  }
  return std::pair{n, name.substr(dot + 1)};
}

std::vector<std::uint64_t> layers_holding(const GgufFile& file, std::string_view tensor,
                                          std::uint64_t count, std::string_view prefix) {
  std::vector<std::uint64_t> out;
  for (const TensorInfo& t : file.tensors) {
    const auto l = layer_of(t.name, prefix);
    if (l && l->first < count && l->second == tensor) out.push_back(l->first);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// A count key `<arch>.<suffix>` of the file (an unsigned or non-negative integer), or nullopt.
std::optional<std::uint64_t> count_key(const GgufFile& file, std::string_view arch,
                                       std::string_view suffix) {
  for (const KeyValue& kv : file.kv) {
    if (kv.key.size() != arch.size() + 1 + suffix.size() || !kv.key.starts_with(arch) ||
        kv.key[arch.size()] != '.' || !kv.key.ends_with(suffix)) {
      continue;
    }
    if (const auto* u = std::get_if<std::uint64_t>(&kv.value.data)) return *u;
    if (const auto* i = std::get_if<std::int64_t>(&kv.value.data); i && *i >= 0) {
      return static_cast<std::uint64_t>(*i);
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// The layers (below their count) of each layer prefix of `row`'s files: "blk." or, for an
// encoder-decoder, "enc.blk." and "dec.blk." (t5.py, T5Model).
struct LayerSet {
  std::string_view prefix;
  std::uint64_t count;
};
std::vector<LayerSet> layer_sets(const Architecture& row, std::uint64_t blocks,
                                 const GgufFile& file) {
  if (row.decoder_prefix.empty()) return {{"blk.", blocks}};
  return {{"enc.blk.", blocks},
          {"dec.blk.", count_key(file, row.gguf_arch, "decoder_block_count").value_or(blocks)}};
}

}  // namespace

RowChoice with_layer_tensors(const Architecture* row, const GgufFile& file) {
  if (!row) return {};
  const auto blocks = count_key(file, row->gguf_arch, "block_count");
  if (!blocks) return {row, ""};
  const Architecture* chosen = row;
  for (const Architecture& a : architectures()) {
    if (a.gguf_arch != row->gguf_arch || a.required_tensor.empty() || !a.required_key.empty()) {
      continue;
    }
    for (const LayerSet& set : layer_sets(a, *blocks, file)) {
      const std::vector<std::uint64_t> have =
          layers_holding(file, a.required_tensor, set.count, set.prefix);
      if (!have.empty() && have.back() >= a.required_from_layer) chosen = &a;
    }
    if (chosen != row) break;
  }
  if (chosen->required_tensor.empty()) return {chosen, ""};
  // The chosen row's tensor in every layer that needs it. Every layer from required_from_layer:
  // the first one lacking it lies within have.size() + 1 steps, whatever the block count says.
  for (const LayerSet& set : layer_sets(*chosen, *blocks, file)) {
    const std::vector<std::uint64_t> have =
        layers_holding(file, chosen->required_tensor, set.count, set.prefix);
    auto lacks = [&](std::uint64_t l) { return !std::binary_search(have.begin(), have.end(), l); };
    std::optional<std::uint64_t> missing;
    if (chosen->required_with.empty()) {
      for (std::uint64_t l = chosen->required_from_layer; l < set.count && !missing; ++l) {
        if (lacks(l)) missing = l;
      }
    } else {
      for (const std::uint64_t l :
           layers_holding(file, chosen->required_with, set.count, set.prefix)) {
        if (lacks(l)) {
          missing = l;
          break;
        }
      }
    }
    if (missing) {
      return {nullptr,
              fmt::format("no tensor '{}{}.{}': {} needs it in every layer{}{}", set.prefix,
                          *missing, chosen->required_tensor, chosen->class_name,
                          chosen->required_with.empty() ? "" : " holding ", chosen->required_with)};
    }
  }
  return {chosen, ""};
}

namespace {

// A layer group's tensors that the row's entries name, each with whether it is required
// (WeightEntry::optional).
struct GroupNames {
  std::uint8_t choice = 0;
  std::string_view layer_type;
  std::vector<std::pair<std::string_view, bool>> names;
  // The first required tensor (the first, where none is).
  std::string_view first() const {
    for (const auto& entry : names) {
      if (entry.second) return entry.first;
    }
    return names.front().first;
  }
};

std::vector<GroupNames> group_names(const Architecture& row, std::span<const WeightEntry> entries) {
  std::vector<GroupNames> out;
  for (const LayerGroup& g : row.layer_groups) {
    GroupNames group{g.choice, g.layer_type, {}};
    for (const std::string_view name : g.tensors) {
      const auto e = std::find_if(entries.begin(), entries.end(), [&](const WeightEntry& w) {
        return w.gguf == name || w.then[0] == name || w.then[1] == name;
      });
      if (e != entries.end()) group.names.emplace_back(name, !e->optional);
    }
    if (!group.names.empty()) out.push_back(std::move(group));
  }
  return out;
}

// The first tensor of `group` layer `tensors` holds, else nullptr.
const std::string_view* held_of(const GroupNames& group, const LayerTensors& tensors) {
  for (const auto& entry : group.names) {
    if (tensors.contains(entry.first)) return &entry.first;
  }
  return nullptr;
}

// Layer n's fault against the row's groups (LayerGroup): a group held in part, the group of the
// layer's kind in `kinds` not held, or no group of a choice held; else "".
std::string kind_fault(const Architecture& row, std::string_view prefix, std::uint64_t n,
                       std::size_t count, const LayerTensors& tensors,
                       const std::vector<GroupNames>& groups, const LayerKinds& kinds) {
  auto path = [&](std::string_view name) { return fmt::format("'{}{}.{}'", prefix, n, name); };
  for (const GroupNames& g : groups) {
    const std::string_view* held = held_of(g, tensors);
    for (const auto& [name, required] : g.names) {
      if (held && required && !tensors.contains(name)) {
        return fmt::format("layer {} of {} has no {}, which {} builds in every layer holding {}", n,
                           count, path(name), row.class_name, path(*held));
      }
    }
  }
  for (const LayerKinds::Axis& axis : kinds.axes) {
    if (n >= axis.of_layer.size()) continue;
    for (const GroupNames& g : groups) {
      if (g.layer_type.empty() || axis.of_layer[n] != g.layer_type || held_of(g, tensors)) continue;
      return fmt::format("layer {} of {} has no {}, which {} builds in every '{}' layer of {}", n,
                         count, path(g.first()), row.class_name, g.layer_type, axis.field);
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::uint8_t choice = groups[i].choice;
    auto of_choice = [&](const GroupNames& g) { return g.choice == choice; };
    if (choice == 0 || std::find_if(groups.begin(), groups.end(), of_choice) != groups.begin() + i)
      continue;  // a group a layer may lack, or a choice seen
    if (std::any_of(groups.begin() + i, groups.end(),
                    [&](const GroupNames& g) { return of_choice(g) && held_of(g, tensors); })) {
      continue;
    }
    std::string none;
    for (auto g = groups.begin() + i; g != groups.end(); ++g) {
      if (of_choice(*g)) none += fmt::format("{}{}", none.empty() ? "" : " nor ", path(g->first()));
    }
    return fmt::format("layer {} of {} has no {}: {} builds one of them in every layer", n, count,
                       none, row.class_name);
  }
  return "";
}

}  // namespace

std::string uneven_layer(const Architecture& row, std::string_view prefix, const Layers& layers,
                         std::span<const WeightEntry> entries, const LayerKinds& kinds) {
  if (layers.empty()) return "";
  // Not a structured binding: clang 14 does not capture one in a lambda.
  const std::uint64_t first = layers.begin()->first;
  const auto& first_tensors = layers.begin()->second;
  const std::vector<GroupNames> groups = group_names(row, entries);
  auto is_varying = [&](std::string_view name) {
    return std::any_of(row.layer_groups.begin(), row.layer_groups.end(), [&](const LayerGroup& g) {
      return std::find(g.tensors.begin(), g.tensors.end(), name) != g.tensors.end();
    });
  };
  // An entry of the same HF name held instead (granitehybrid's shared MLP: ffn_gate_shexp with
  // experts, ffn_gate without) stands in for a required one.
  auto stood_in = [&](const WeightEntry& e) {
    return std::any_of(entries.begin(), entries.end(), [&](const WeightEntry& other) {
      return other.hf == e.hf && first_tensors.contains(other.gguf);
    });
  };
  // Each name every layer must agree on, with whether the first layer holds it.
  std::vector<std::pair<std::string_view, bool>> names;
  for (const WeightEntry& e : entries) {
    for (const std::string_view name : {e.gguf, e.then[0], e.then[1]}) {
      if (name.empty() || is_varying(name)) continue;
      const bool held = first_tensors.contains(name);
      if (!held && !e.optional && !stood_in(e)) {
        return fmt::format("layer {} of {} has no '{}{}.{}', which {} builds in every layer", first,
                           layers.size(), prefix, first, name, row.class_name);
      }
      names.emplace_back(name, held);
    }
  }
  for (const auto& [n, tensors] : layers) {
    for (const auto& [name, first_holds] : names) {
      if (tensors.contains(name) == first_holds) continue;
      return first_holds ? fmt::format("layer {} of {} has no '{}{}.{}', which layer {} holds", n,
                                       layers.size(), prefix, n, name, first)
                         : fmt::format("layer {} of {} holds '{}{}.{}', which layer {} has not", n,
                                       layers.size(), prefix, n, name, first);
    }
    std::string why = kind_fault(row, prefix, n, layers.size(), tensors, groups, kinds);
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace ggufs::hf
