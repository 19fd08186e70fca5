// The rows of the classes llama.cpp's conversion/gemma.py converts (table.h).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "../config_fields.h"
#include "ggufs/names.h"
#include "table.h"

namespace ggufs::hf::table {
namespace {

using nlohmann::json;

// Gemma 2 and 3 scale queries by 1/sqrt(query_pre_attn_scalar), which the converter does not
// write; llama.cpp computes the scale as 1/sqrt(head_dim), but for the 27B models (46 and 62
// layers) as 1/sqrt(hidden / heads) (src/models/gemma2.cpp and gemma3.cpp, load_arch_hparams), as
// those checkpoints' query_pre_attn_scalar say. The model llama.cpp runs is the one written here.
template <std::uint64_t kLayersOf27b>
std::string query_scalar(ConfigFields& f) {
  json& config = f.config;
  const bool is_27b = config.value("num_hidden_layers", json()) == json(kLayersOf27b);
  const json& heads = config.value("num_attention_heads", json());
  const json& hidden = config.value("hidden_size", json());
  if (is_27b && is_positive(heads) && is_positive(hidden)) {
    config["query_pre_attn_scalar"] = hidden.get<std::uint64_t>() / heads.get<std::uint64_t>();
  } else if (is_positive(config.value("head_dim", json()))) {
    config["query_pre_attn_scalar"] = config["head_dim"];
  }
  return "";
}

// vocab_size_per_layer_input, a field the converter does not write: Gemma 3n's (gemma.py,
// Gemma3NModel.modify_tensors pads per_layer_token_embd.weight with zero rows up to vocab_size:
// rows other than vocab_size are it, else the class default 262144, at most vocab_size).
std::string padded_per_layer_vocab(ConfigFields& f) {
  const auto vocab = f.config["vocab_size"].get<std::uint64_t>();
  std::uint64_t out = std::min<std::uint64_t>(262144, vocab);
  for (const TensorInfo& t : f.file.tensors) {
    if (t.name == "per_layer_token_embd.weight" && t.n_dims == 2 && t.ne[1] != vocab) {
      out = t.ne[1];
    }
  }
  f.config["vocab_size_per_layer_input"] = out;
  return "";
}

// Gemma 4's vocab_size_per_layer_input: vocab_size, as in every Gemma 4 checkpoint.
std::string per_layer_vocab(ConfigFields& f) {
  f.config["vocab_size_per_layer_input"] = f.config["vocab_size"];
  return "";
}

// Gemma 4's rope bases nested per layer type (configuration_gemma4.py, Gemma4TextConfig): the
// full-attention layers' "proportional" rope with the class default partial_rotary_factor (the
// converter asserts that type and writes the fraction only as rope_freqs.weight, gemma.py
// Gemma4Model.generate_extra_tensors); their head_dim in per_layer_config, as __post_init__
// builds it from global_head_dim.
std::string layer_type_rope(ConfigFields& f) {
  json& config = f.config;
  json full = {
      {"partial_rotary_factor", 0.25}, {"rope_theta", 1000000.0}, {"rope_type", "proportional"}};
  json sliding = {{"rope_theta", 10000.0}, {"rope_type", "default"}};
  if (config.contains("rope_theta")) full["rope_theta"] = config["rope_theta"];
  if (config.contains("rope_local_base_freq"))
    sliding["rope_theta"] = config["rope_local_base_freq"];
  config.erase("rope_theta");
  config.erase("rope_local_base_freq");
  config["rope_parameters"] = {{"full_attention", full}, {"sliding_attention", sliding}};
  if (!config.contains("global_head_dim")) return "";
  json per_layer = json::object();
  const json& types = config.value("layer_types", json::array());
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "full_attention") {
      per_layer[std::to_string(i)] = {{"head_dim", config["global_head_dim"]}};
    }
  }
  config["per_layer_config"] = std::move(per_layer);
  config.erase("global_head_dim");
  return "";
}

// Gemma 4's per-layer feed_forward_length: intermediate_size, doubled for the layers that reuse
// another's keys and values (use_double_wide_mlp; Gemma4Model.set_gguf_parameters writes it so);
// anything else is no Gemma 4.
std::string double_wide_mlp(ConfigFields& f) {
  const std::string ff_key = fmt::format("{}.feed_forward_length", f.arch);
  const Value* v = f.find(ff_key);
  if (!v || !std::holds_alternative<Array>(v->data)) return "";
  const json ff = field_json(*v, f.arch, f.updated);
  const std::uint64_t n = f.layers;
  const std::uint64_t shared = f.config.value("num_kv_shared_layers", json(0)).get<std::uint64_t>();
  const std::uint64_t width = f.config["intermediate_size"].get<std::uint64_t>();
  bool fits = ff.size() == n && shared <= n;
  for (std::uint64_t i = 0; fits && i < n; ++i)
    fits = ff[i] == json(i < n - shared ? width : 2 * width);
  if (!fits) {
    return fmt::format(
        "{} is not intermediate_size for the layers of their own KV, twice it for the {} "
        "sharing layers",
        printable(ff_key), shared);
  }
  f.config["use_double_wide_mlp"] = true;
  return "";
}

constexpr ConfigQuirk kGemma2Quirks[] = {{QuirkStage::kAfterKeys, query_scalar<46>}};
constexpr ConfigQuirk kGemma3Quirks[] = {{QuirkStage::kAfterKeys, query_scalar<62>}};
constexpr ConfigQuirk kGemma4Quirks[] = {{QuirkStage::kLayerFields, per_layer_vocab},
                                         {QuirkStage::kLayerFields, layer_type_rope},
                                         {QuirkStage::kLayerFields, double_wide_mlp}};
constexpr ConfigQuirk kGemma3nQuirks[] = {{QuirkStage::kLayerFields, padded_per_layer_vocab}};

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

// Gemma 4's MoE block (enable_moe_block: router scales, per-expert scales) has no entries here.
constexpr Refusal kGemma4Refusals[] = {
    {RefuseWhen::kKeyPresent, "expert_count",
     "Gemma 4's mixture-of-experts block, which hf/ does not render"}};

// transformers 5's modeling_gemma4.py, Gemma4TextAttention, and modeling_gemma3n.py,
// Gemma3nTextAttention: the last num_kv_shared_layers reuse an earlier layer's keys and values
// and hold no k_proj, v_proj or k_norm (4.57.6's Gemma 3n holds them, unused).
constexpr std::string_view kKvSharingTensors[] = {"attn_k.weight", "attn_v.weight",
                                                  "attn_k_norm.weight"};

constexpr LayerGroup kKvSharing[] = {{kKvSharingTensors, 0, "unshared"}};

constexpr LeadingLayers kUnsharedKv{"unshared", "num_kv_shared_layers"};

}  // namespace

void gemma(Rows& rows) {
  const Blocks& b = blocks();
  const std::vector<WeightEntry>& llama_attention = b.llama_attention;
  const std::vector<WeightEntry>& gated_mlp = b.gated_mlp;
  const std::vector<WeightEntry>& qk_norms = b.qk_norms;
  const std::vector<WeightEntry>& embed = b.embed;
  const std::vector<WeightEntry>& norm_head = b.norm_head;
  auto add = [&rows](Architecture a) { rows.push_back(std::move(a)); };
  const std::vector<WeightEntry> gemma_norms = {
      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
      {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight", Shape::kHidden},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden},
  };
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
       .quirks = kGemma2Quirks});
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
       .quirks = kGemma3Quirks});
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
       .leading_layers = kUnsharedKv,
       .quirks = kGemma4Quirks});
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
       .leading_layers = kUnsharedKv,
       .quirks = kGemma3nQuirks,
       .mlx = {.absent =
                   "mlx-lm 0.32.2 has no model of model_type gemma3n_text (mlx_lm/models/)"}});
}

}  // namespace ggufs::hf::table
