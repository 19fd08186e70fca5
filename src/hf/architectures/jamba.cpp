// The rows of the classes llama.cpp's conversion/jamba.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

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

// jamba.py: feed_forward.switch_mlp.
constexpr std::pair<std::string_view, std::string_view> kMlxFeedForwardSwitch[] = {
    {"feed_forward.experts.{}.gate_proj.weight", "feed_forward.switch_mlp.gate_proj.weight"},
    {"feed_forward.experts.{}.up_proj.weight", "feed_forward.switch_mlp.up_proj.weight"},
    {"feed_forward.experts.{}.down_proj.weight", "feed_forward.switch_mlp.down_proj.weight"}};

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

}  // namespace

void jamba(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& embed = b.embed;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
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
}

}  // namespace ggufs::hf::table
