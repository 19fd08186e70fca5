// The rows of the classes llama.cpp's conversion/mamba.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

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

constexpr ConfigConstant kMlxMamba[] = {{"use_bias", "false"}, {"use_conv_bias", "true"}};

// The converter writes mamba for FalconMambaForCausalLM too, with ssm.dt_b_c_rms true (its RMS
// norms of B, C and dt; mamba.py, MambaModel.set_gguf_parameters).
constexpr Refusal kFalconMambaRefusals[] = {
    {RefuseWhen::kKeyTrue, "ssm.dt_b_c_rms",
     "a FalconMamba, which ggufs renders no transformers config for"}};

}  // namespace

void mamba(Rows& rows) {
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
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
}

}  // namespace ggufs::hf::table
