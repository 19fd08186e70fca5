// The rows of the classes llama.cpp's conversion/granite.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

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

// granite.py, GraniteSWAModel.set_gguf_parameters: Granite's keys, the window and its layer
// pattern as one flag a layer (layer_types). Not written: layer_rope_theta (the class default,
// rope_theta in every layer, as llama.cpp runs the model), a pattern of NoPE layers where the
// config has none (rope_pattern, from no_rope_layers).
constexpr ConfigKey kGraniteWindow[] = {{"attention.sliding_window", "sliding_window"}};
constexpr auto kGraniteSwaKeys = join(kBaseKeys, kGraniteScales, kGraniteWindow);

constexpr ConfigConstant kMlxGranite[] = {{"attention_bias", "false"}, {"mlp_bias", "false"}};

constexpr ConfigConstant kMlxNoAttentionBias[] = {{"attention_bias", "false"}};

constexpr ConfigConstant kMlxGraniteMoeHybrid[] = {
    {"max_position_embeddings", "2048"}, {"attention_bias", "false"}, {"mamba_conv_bias", "true"}};

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

// The converter writes granitehybrid for BambaForCausalLM too, with rope.scaling.finetuned true
// (its rope; granite.py, GraniteHybridModel.set_gguf_parameters), false for a GraniteMoeHybrid,
// which has none.
constexpr Refusal kBambaRefusals[] = {{RefuseWhen::kKeyTrue, "rope.scaling.finetuned",
                                       "a Bamba, which ggufs renders no transformers config for"}};

// modeling_granitemoehybrid.py, GraniteMoeHybridDecoderLayer: a Mamba-2 mixer or attention by
// layers_block_type (the MoE and shared MLP in every layer).
constexpr LayerGroup kMambaOrAttention[] = {{kMamba2Tensors, 1, "mamba"},
                                            {kAttentionTensors, 1, "attention"}};

}  // namespace

void granite(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& two_norms = b.two_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  const std::vector<WeightEntry>& mamba2_mixer = b.mamba2_mixer;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
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
  // Granite with interleaved sliding-window attention (modeling_granite_swa.py): Granite's
  // layers and per-head attention sinks (granite.py, GraniteSWAModel.filter_tensors names them
  // sinks.weight); q/k rows are LlamaModel's permutation, undone.
  add({.gguf_arch = "granite_swa",
       .model_type = "granite_swa",
       .class_name = "GraniteSWAForCausalLM",
       .keys = kGraniteSwaKeys,
       .defaults = {.kv_heads = 4, .ff = 8192, .bos = 100257, .eos = 100257},
       .transforms = Transforms::kLlama,
       .layer_prefix = kModelLayer,
       .before = embed,
       .layer = cat({llama_attention,
                     {{"attn_sinks.weight", "self_attn.sinks", Shape::kHeads}},
                     gated_mlp,
                     two_norms}),
       .after = norm_head,
       .layer_types = {"attention.sliding_window_pattern", "sliding_attention", "full_attention"},
       .mlx = {.absent = "mlx-lm 0.32.2 has no model of model_type granite_swa (mlx_lm/models/)"}});
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
}

}  // namespace ggufs::hf::table
