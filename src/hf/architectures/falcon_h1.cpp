// The rows of the classes llama.cpp's conversion/falcon_h1.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

// FalconH1Config's multipliers, 1 where the converter folded them into the weights
// (falcon_h1.py's set_gguf_parameters and modify_tensors); falcon_h1.py of mlx-lm defaults them
// to the Falcon-H1 checkpoints' own values instead.
constexpr ConfigConstant kMlxFalconH1[] = {
    {"attention_in_multiplier", "1.0"}, {"attention_out_multiplier", "1.0"},
    {"embedding_multiplier", "1.0"},    {"key_multiplier", "1.0"},
    {"lm_head_multiplier", "1.0"},      {"mlp_multipliers", "[1.0, 1.0]"},
    {"ssm_in_multiplier", "1.0"},       {"ssm_multipliers", "[1.0, 1.0, 1.0, 1.0, 1.0]"},
    {"ssm_out_multiplier", "1.0"}};

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

}  // namespace

void falcon_h1(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& mamba2_mixer = b.mamba2_mixer;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
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
}

}  // namespace ggufs::hf::table
