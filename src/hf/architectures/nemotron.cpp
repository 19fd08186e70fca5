// The rows of the classes llama.cpp's conversion/nemotron.py converts (table.h).
#include "table.h"

namespace ggufs::hf::table {
namespace {

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

constexpr ConfigConstant kMlxNemotron[] = {{"hidden_act", "\"relu2\""}};

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

// nemotron.py, NemotronHModel.set_gguf_parameters writes moe_latent_size for a latent MoE
// (fc1_latent_proj, fc2_latent_proj) and nextn_predict_layers for the MTP block it appends.
constexpr Refusal kNemotronHRefusals[] = {
    {RefuseWhen::kKeyPresent, "moe_latent_size",
     "a latent MoE (fc1_latent_proj, fc2_latent_proj), which hf/ does not render"},
    {RefuseWhen::kKeyPresent, "nextn_predict_layers",
     "an MTP block the converter appended as a layer, which hf/ does not render"}};

// nemotron_h.py: the SwitchMLP's fc1 (up_proj) and fc2 (down_proj).
constexpr std::pair<std::string_view, std::string_view> kMlxNemotronHSwitch[] = {
    {"mixer.experts.{}.up_proj.weight", "mixer.switch_mlp.fc1.weight"},
    {"mixer.experts.{}.down_proj.weight", "mixer.switch_mlp.fc2.weight"}};

// modeling_nemotron_h.py, NemotronHBlock: one mixer a layer by layers_block_type (the
// converter's hybrid_override_pattern): Mamba-2, attention, MLP or MoE.
constexpr LayerGroup kNemotronHGroups[] = {{kMamba2Tensors, 1, "M"},
                                           {kAttentionTensors, 1, "*"},
                                           {kDenseMlpTensors, 1, "-"},
                                           {kMoeTensors, 1, "E"}};

}  // namespace

void nemotron(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& ungated_mlp = b.ungated_mlp;
  const std::vector<WeightEntry>& biased_norms = b.biased_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_bias_head = b.norm_bias_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
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
}

}  // namespace ggufs::hf::table
