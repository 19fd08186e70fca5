// The architecture table of hf/: one row per architecture, holding everything the inverse of
// llama.cpp's converter (convert_hf_to_gguf.py and its conversion/ package) needs for it: the
// transformers class, the config keys and the GGUF keys they became, what the file does not carry,
// the class defaults, and the state_dict with the transform of each tensor. hf_config.cpp and
// hf_weights.cpp read it; adding an architecture is adding a row (and a round-trip case in
// tests/python/test_hf_roundtrip.py). Internal to the hf layer.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_weights.h"

namespace ggufs::hf {

/// What a config field must hold: any value, a non-negative integer (a dimension or count), a
/// number (an epsilon, a rope base, a multiplier), an integer (a token id). kRotaryFraction: the
/// key holds the rotary dimensions of a head, a count, and the field their fraction of
/// hidden / heads (the converter's int(fraction · hidden) // heads, phi.py Phi2Model).
/// kLayerMax: the key holds a count a layer, 0 for layers without the part (lfm2.py writes
/// num_key_value_heads so), and the field the largest. kQuotient: the key holds a product, the
/// field its quotient by config field `over` (mamba2's expand and head_dim from ssm.inner_size:
/// mamba.py, Mamba2Model.set_gguf_parameters). kLayerMin: the key holds a count a layer, the
/// field the smallest (gemma.py, Gemma4Model.set_gguf_parameters writes a double-wide MLP's
/// intermediate_size doubled for the KV-sharing layers). kDifference: the key holds a sum, the
/// field it less config field `over` (MLA's qk_nope_head_dim from key_length_mla, nope + rope:
/// deepseek.py, DeepseekV2Model.set_gguf_parameters). kTenth: the key holds a tenth of the field,
/// a number (deepseek.py, DeepseekV2Model.set_gguf_parameters writes YaRN's mscale_all_dim as
/// yarn_log_multiplier = 0.1 · mscale_all_dim); the field is the shortest decimal whose tenth
/// the converter stores as the key (hf_config.cpp, shortest_tenfold). kLayerCounts: the key
/// holds a count a layer (or one for all), the field the list as it is (Gemma3nTextConfig's
/// per-layer intermediate_size). kNormalCdf: the key holds Normal(0, 1).icdf(p) in float32 a
/// layer (gemma.py, Gemma3NModel.set_gguf_parameters: activation_sparsity_scale), the field the
/// list of p, each the shortest decimal whose icdf is within one float32 ulp of the key
/// (hf_config.cpp, shortest_normal_cdf); -inf is 0.
enum class ValueKind : std::uint8_t {
  kAny,
  kCount,
  kNumber,
  kTokenId,
  kRotaryFraction,
  kLayerMax,
  kQuotient,
  kLayerMin,
  kDifference,
  kTenth,
  kLayerCounts,
  kNormalCdf
};

/// One config.json field the converter wrote as a GGUF key: `<general.architecture>.<gguf>`
/// holds the value of config field `config` (conversion/base.py,
/// TextModel.set_gguf_parameters, and each model's own set_gguf_parameters). A `config` of
/// "rope_scaling.<field>" is a field of the rope scaling the file's rope.scaling keys make
/// (mistral3.py's YaRN fields; hf_config.cpp, add_rope_scaling), dropped without one.
struct ConfigKey {
  std::string_view gguf;
  std::string_view config;
  ValueKind kind = ValueKind::kCount;
  std::string_view over{};  ///< kQuotient, kDifference: the field the key's value is divided by
                            ///< or less
};

/// A config field the converter does not write, set to the value the models of this
/// architecture use where the class default differs (JSON text, e.g. "true"); or the value a
/// field has when the key the converter writes it as is absent (exaone4's sliding_window null:
/// exaone.py writes none for a model without a window). A key in the file wins.
struct ConfigConstant {
  std::string_view config;
  std::string_view json;
};

/// The torch shape the model class gives a parameter, in terms of its config (hf_weights.cpp,
/// Dims): V vocab, P positions, H hidden, F feed-forward, Fm one expert's, Fs the shared
/// expert's, Ns shared experts, E experts, nh/nkv heads, hd head_dim; SSMs (mamba.py): I inner
/// size, N state size, R time-step rank (mamba2: its heads), G groups, K conv kernel. The
/// shapes marked "reshaped" are held by the converter in another shape of the same elements in
/// the same order (squeeze, reshape): only their element count must match.
enum class Shape {
  kVocabHidden,      // (V, H): embeddings, lm_head
  kPositionsHidden,  // (P, H): gpt2's wpe
  kHidden,           // (H): norms, output biases
  kQ,                // (nh·hd, H)
  kKv,               // (nkv·hd, H)
  kO,                // (H, nh·hd)
  kQBias,            // (nh·hd)
  kKvBias,           // (nkv·hd)
  kFfHidden,         // (F, H)
  kHiddenFf,         // (H, F)
  kFf,               // (F)
  kHeadDim,          // (hd): per-head q/k norms
  kRouter,           // (E, H)
  kExpertFfHidden,   // (Fm, H): one expert's gate/up
  kExpertHiddenFf,   // (H, Fm): one expert's down
  kSharedFfHidden,   // (Fs, H): the shared expert's gate/up
  kHiddenSharedFf,   // (H, Fs): the shared expert's down
  kOneHidden,        // (1, H): the shared expert's gate
  kExpertsGateUp,    // (E, 2F, H): granitemoe's stacked input_linear (F: its intermediate_size)
  kExpertsDown,      // (E, H, F): granitemoe's stacked output_linear
  kSharedGateUp,     // (2Fs, H): granitemoe's shared_mlp.input_linear
  kVocab,            // (V): phi's and phimoe's lm_head bias
  kSharedExpertsFfHidden,  // (Fm·Ns, H): Ns shared experts as one MLP (ernie4_5_moe) gate/up
  kHiddenSharedExpertsFf,  // (H, Fm·Ns): its down
  kOneExperts,             // (1, E): ernie4_5_moe's e_score_correction_bias
  kExperts,                // (E): dots1's e_score_correction_bias
  kFusedQkv,               // (nh·hd + 2·nkv·hd, H): phi3's qkv_proj
  kFusedQkvBias,           // (nh·hd + 2·nkv·hd): GPTBigCode's c_attn bias
  kFusedGateUp,            // (2F, H): phi3's gate_up_proj
  kConvQkv,                // (H, 3H): gpt2's Conv1D c_attn
  kThreeHidden,            // (3H)
  kHiddenHidden,           // (H, H)
  kHeadsHeadDim,           // (nh, hd): cohere's per-head q_norm
  kKvHeadsHeadDim,         // (nkv, hd): cohere's per-head k_norm
  kThreeHiddenHidden,      // (3H, H): lfm2's short convolution in_proj
  kHiddenOneConv,          // (H, 1, L): lfm2's depthwise Conv1d, L its conv_L_cache; the
                           // converter's squeeze(1) (lfm2.py) leaves (H, L), the same values
  kInnerState,             // (I, N): mamba's A_log
  kInner,                  // (I), reshaped: mamba's D and biases; mamba2's gated norm (G, I/G)
  kInnerOneKernel,         // (I, 1, K), reshaped: mamba's conv1d (squeezed to (I, K))
  kTwoInnerHidden,         // (2I, H): mamba's in_proj
  kRankStatesInner,        // (R + 2N, I): mamba's x_proj
  kInnerRank,              // (I, R): mamba's dt_proj
  kHiddenInner,            // (H, I): out_proj
  kSsmHeads,               // (R), reshaped: mamba2's A_log, D (as (R, 1)), dt_bias
  kConvChannelsOneKernel,  // (I + 2GN, 1, K), reshaped: mamba2's conv1d (squeezed)
  kConvChannels,           // (I + 2GN): mamba2's conv1d bias
  kMamba2InProj,           // (2I + 2GN + R, H): mamba2's in_proj
  kHeads,                  // (nh): gpt-oss's attention sinks
  kExpertsHiddenGateUp,    // (E, H, 2F): gpt-oss's gate_up_proj, gate and up columns interleaved
  kExpertsGateUpBias,      // (E, 2F): its bias
  kExpertsFfHiddenT,       // (E, F, H): gpt-oss's down_proj
  kExpertsHidden,          // (E, H): its bias
  // Gemma 4's per-layer inputs (PLE): Hp hidden_size_per_layer_input, Vp its vocabulary, L layers
  kOne,                      // (1): layer_scalar
  kPerLayerHidden,           // (Hp, H): per_layer_input_gate
  kHiddenPerLayer,           // (H, Hp): per_layer_projection
  kPerLayerEmbeddings,       // (Vp, L·Hp): embed_tokens_per_layer
  kPerLayerModelProjection,  // (L·Hp, H): per_layer_model_projection
  kPerLayerInput,            // (Hp): per_layer_projection_norm
  // MLA (modeling_deepseek_v2.py, DeepseekV2Attention): Lq/Lkv the query/KV LoRA ranks, dn/dr/dv
  // a head's nope, rope and value dims
  kQLoraHidden,       // (Lq, H): q_a_proj
  kQLora,             // (Lq): q_a_layernorm
  kMlaQ,              // (nh·(dn + dr), H): q_proj
  kMlaQB,             // (nh·(dn + dr), Lq): q_b_proj
  kKvLoraRopeHidden,  // (Lkv + dr, H): kv_a_proj_with_mqa
  kKvLora,            // (Lkv): kv_a_layernorm
  kMlaKvB,            // (nh·(dn + dv), Lkv): kv_b_proj
  kMlaO,              // (H, nh·dv): o_proj
  // DSA's indexer (modeling_deepseek_v32.py, DeepseekV32Indexer): nI its heads of dI
  kIndexerQB,           // (nI·dI, Lq): wq_b
  kIndexerHeadHidden,   // (dI, H): wk
  kIndexerHead,         // (dI): k_norm's weight and bias
  kIndexerHeadsHidden,  // (nI, H): weights_proj
  kQGate,               // (2·nh·hd, H): qwen3next's q_proj, queries and output gate
  kLinearQkvz,          // (2GN + 2I, H): qwen3next's in_proj_qkvz (G key heads of N)
  kTwoRankHidden,       // (2R, H): qwen3next's in_proj_ba (R value heads)
  kValueHeadDim,        // (I / R): qwen3next's gated norm, one value head's
  kLinearQkv,           // (2GN + I, H): qwen35's in_proj_qkv
  kInnerHidden,         // (I, H): qwen35's in_proj_z
  kRankHidden,          // (R, H): qwen35's in_proj_a, in_proj_b
  kBucketsHeads,        // (B, nh): t5's relative_attention_bias, B its buckets
  kStates,              // (N): jamba's b_layernorm, c_layernorm (its dt_layernorm: kSsmHeads)
  kTwoInner,            // (2I): jamba's in_proj bias (mamba_proj_bias)
  // Gemma 3n (modeling_gemma3n.py): A altup_num_inputs, Lr laurel_rank
  kAltupInputs,        // (A, A): altup.correction_coefs
  kAltupPredictions,   // (A², A): altup.prediction_coefs
  kAltupInputsHidden,  // (A, H): altup.modality_router
  kLaurelHidden,       // (Lr, H): laurel.linear_left
  kHiddenLaurel,       // (H, Lr): laurel.linear_right
};

/// The inverse of the converter's tensor transforms for an architecture (the closed set; see
/// ggufs::HfTransform for each one's arithmetic).
enum class Transforms {
  kNone,
  kLlama,  // q/k rows: the inverse of LlamaModel.permute (llama.py)
  kMoe,    // none, with transformers 4.57.6's Qwen2MoeTensorProcessor limits (hf_weights.cpp)
  kGpt2,   // Conv1D weights transposed back (gpt2.py)
  kGemma,  // norms: the converter's + 1 taken off (gemma.py, Gemma2Model.modify_tensors)
  // attn_qkv weight and bias: the converter's [all q; all k; all v] back to transformers'
  // rows per KV group (HfTransform::kRegroupQkv; gptneox.py, bloom.py, falcon.py)
  kRegroupQkv,
  kSsm,  // A_log = log(-A): the converter's A = -exp(A_log) (mamba.py) inverted
  // experts: gate/up interleaved again and transposed, down transposed (gpt_oss.py)
  kGptOss,
  // kLlama's q/k rows and kSsm's A_log both: hybrids whose converter class is a LlamaModel and
  // a Mamba2Model (granite.py, GraniteHybridModel)
  kLlamaSsm,
  // MLA's kv_b_proj from the converter's attn_k_b (per head, transposed) and attn_v_b
  // (HfTransform::kConcatTransposedRows; deepseek.py, DeepseekV2Model.modify_tensors)
  kMla,
  // qwen3next (qwen.py, Qwen3NextModel.modify_tensors): A_log = log(-A); norms minus the
  // converter's + 1 but linear_attn.norm's (ssm_norm); in_proj_qkvz from attn_qkv and
  // attn_gate (HfTransform::kRegroupQkvz)
  kQwen3Next,
  // qwen35, qwen35moe: kQwen3Next's, and with fewer key heads than value heads the value heads
  // grouped again (HfWeight::untile_run; qwen.py, _LinearAttentionVReorderBase.modify_tensors
  // tiles them)
  kQwen35,
};

/// One state_dict parameter: the GGUF tensor it became (after "blk.N." for a layer's; gguf-py's
/// tensor_mapping.py), its HF name (after the layer prefix for a layer's) and shape. `expert`:
/// one per expert of a stacked tensor ("{}" in `hf` is the expert), in every Transforms family
/// (qwen.py, Qwen2MoeModel.modify_tensors, and llama.py, LlamaModel.modify_tensors, stack them
/// with torch.stack). `then`: the GGUF tensors the
/// converter split off the same HF tensor, in order (granite.py, GraniteMoeModel.modify_tensors:
/// input_linear's gate half is `gguf`, its up half `then[0]`); their rows follow `gguf`'s in each
/// matrix, the inverse of the fused split. A global `expert` entry: one per matrix of a stack of
/// altup_num_inputs − 1 (gemma.py, Gemma3NModel.modify_tensors stacks Gemma 3n's
/// altup_projections and altup_unembed_projections with torch.stack). `optional`: a layer
/// parameter the class builds only under a config field the file may leave off (a bias under
/// attention_bias, q/k norms under use_qk_norm, the query LoRA under q_lora_rank); every other
/// layer entry is required: the class builds it in every layer (or, where the row lists it in
/// Architecture::layer_groups, in every layer of its kind), and a file whose layer 0 lacks it, and
/// no entry of the same `hf` name stands in for it, is refused (uneven_layer).
struct WeightEntry {
  std::string_view gguf;
  std::string_view hf;
  Shape shape;
  bool expert = false;
  std::array<std::string_view, 2> then{};
  bool optional = false;
};

/// The config class's __init__ defaults (transformers' configuration_<model>.py) that the shapes
/// and the generation config need when the file has no value. 0 in kv_heads / head_dim: the
/// head count / hidden // heads; 0 in ff: 4·hidden (gpt2's n_inner None). -1 token id: None; a
/// file without a token id whose class default is not None gets null (hf_config.cpp).
struct ClassDefaults {
  std::uint64_t kv_heads = 0, head_dim = 0, ff = 0;
  std::uint64_t experts = 0, expert_ff = 0, shared_expert_ff = 0, positions = 0;
  std::uint64_t shared_experts = 0;
  std::int64_t bos = -1, eos = -1, pad = -1;
};

/// A boolean config field the converter does not write but the tensors show: true when a
/// layer holds GGUF tensor `gguf` (cohere's use_qk_norm: attn_q_norm.weight).
struct TensorFlag {
  std::string_view gguf;
  std::string_view config;
};

/// config.json's layer_types (or `field`) from a per-layer GGUF array `<arch>.<gguf>`: a true or
/// non-zero element is `nonzero`, else `zero` (exaone.py writes the sliding layers as true; lfm2.py
/// the attention layers' KV heads, 0 for a convolution layer; glm.py, GlmMoeDsaModel, the layers
/// running their own DSA indexer as true in indexer_types). Without the key every layer is `zero`.
/// Where `gguf` is empty, the layers holding layer tensor `tensor` are `nonzero` (HYV3Config's
/// mlp_layer_types: the layers holding the router are "sparse"). None where both are empty.
struct LayerTypes {
  std::string_view gguf;
  std::string_view nonzero, zero;
  std::string_view field = "layer_types";
  std::string_view tensor{};
  bool empty() const { return gguf.empty() && tensor.empty(); }
};

/// A config offset and period whose layers (i % period == offset) have a part the converter
/// writes per layer instead (jamba.py, JambaModel: the attention layers as a non-zero
/// head_count_kv element, the expert layers as the layers holding experts): the layers of a
/// non-zero or true element of the per-layer array `<arch>.<gguf>`, else those holding layer
/// tensor `tensor`. hf_config.cpp derives the pair; a pattern no pair gives is refused. `kind`
/// is the kind (LayerKinds) of a layer the pair gives (JambaConfig.layers_block_type's
/// "attention"; "moe" where layers_num_experts is num_experts), `other` the rest's.
struct LayerPeriod {
  std::string_view offset, period;  ///< the config fields
  std::string_view gguf, tensor;
  std::string_view kind, other;
};

/// The leading layers a class gives kind `kind` (LayerKinds): where `count` is 0, all but the
/// last config field `field` (Gemma3nTextAttention and Gemma 4's: the layers before the last
/// num_kv_shared_layers compute their own keys and values); else the first `count`, `field` naming
/// the class that builds them so (modeling_t5.py, T5Stack: has_relative_attention_bias=bool(i ==
/// 0)). None where `kind` is empty.
struct LeadingLayers {
  std::string_view kind, field;
  std::uint64_t count = 0;
};

/// A config count the converter does not write but a layer tensor's shape holds: numpy axis
/// `axis` (0 outermost) of layer tensor `tensor` (after "blk.N.", the first layer holding it);
/// without the tensor, none (the class default). Gemma 3n's laurel_rank: laurel.linear_left's
/// rows (gemma.py writes no key for it).
struct TensorDim {
  std::string_view config, tensor;
  unsigned axis = 0;
};

/// When a file the row's class would not run as the converter's input did is refused: bool key
/// `<arch>.<name>` true (kKeyTrue), key `<arch>.<name>` present (kKeyPresent), tensor `name`
/// absent (kTensorAbsent). `why` says what the file is instead.
enum class RefuseWhen : std::uint8_t { kKeyTrue, kKeyFalse, kKeyPresent, kTensorAbsent };
struct Refusal {
  RefuseWhen when;
  std::string_view name, why;
};

/// Layer tensors (after "blk.N.", `then` parts too) that come together in the layers of one kind:
/// a layer holds every tensor of the group a required entry of the row names
/// (WeightEntry::optional), or no tensor of the group; a name no entry of the row has is no part
/// of it there, so rows share groups. Groups of one non-zero `choice` are alternatives, of which
/// each layer holds at least one (Lfm2DecoderLayer builds self_attn or the short convolution by
/// layer_types, DeepseekV2DecoderLayer the dense MLP or the MoE by first_k_dense_replace); a
/// group of choice 0 a layer holds or lacks (Gemma's KV-sharing layers lack keys and values).
/// `layer_type`: the kind the config gives a layer that holds the group (LayerKinds: its
/// layer_types element, or its character of the layer pattern); such a layer must hold it.
struct LayerGroup {
  std::span<const std::string_view> tensors;
  std::uint8_t choice = 0;
  std::string_view layer_type{};
};

/// The layers a dense-then-MoE class builds its MoE in, the kind "moe" (LayerKinds; the others
/// "dense"): layer n from config field `from` on where `every` is empty
/// (modeling_deepseek_v2.py, DeepseekV2DecoderLayer: layer_idx >= first_k_dense_replace), and
/// where n + 1 is a multiple of config field `every` (modeling_ernie4_5_moe.py,
/// Ernie4_5_MoeDecoderLayer: moe_layer_start_index, moe_layer_interval; moe_layer_end_index,
/// which the converter does not write, is the last layer by default). A field the config does
/// not hold is the class default `from_default`, `every_default`.
struct MoeLayers {
  std::string_view from, every;
  std::uint64_t from_default = 0, every_default = 1;
};

/// mlx/'s column of a row. mlx-lm 0.32.2 builds the model of config.json's model_type from
/// mlx_lm/models/<model_type>.py (mlx_lm/utils.py, _get_classes; its MODEL_REMAPPING takes
/// mistral as llama, minimax_m2 as minimax) and its ModelArgs.from_dict, whose fields without a
/// default must be in config.json.
struct MlxColumn {
  /// Why mlx-lm cannot load the model, mlx/ then not offered; empty where it can.
  std::string_view absent;
  /// ModelArgs fields the class (transformers' configuration_<model>.py) defaults and hf/'s
  /// config leaves out: the class default, as JSON text; mlx/'s config gets each the plan did not
  /// set.
  std::span<const ConfigConstant> defaults;
  /// ModelArgs fields read under another name than the class's: {mlx-lm's, the class's}, copied
  /// where the plan set the class's.
  std::span<const std::pair<std::string_view, std::string_view>> renamed;
  /// sliding_window_pattern as a string of 'L' (sliding) and 'G' (full) per layer, from
  /// layer_types, or null without a window: how exaone4.py reads it (EXAONE 4's own config.json
  /// files), where Exaone4Config holds an int.
  bool window_pattern = false;
  /// The expert stacks mlx/ serves whole under mlx-lm's names: {the row's per-expert name, "{}"
  /// the expert; mlx-lm's stacked module's weight}, both after the layer prefix. mlx-lm's
  /// sanitize stacks hf/'s per-expert weights into these (mlx_lm/models/qwen3_moe.py: only
  /// `.weight`, so experts could not keep their blocks under hf/'s names); given the stacked
  /// names it leaves them, and they keep ggml's blocks as a whole GGUF stack [E, out, in]. Empty
  /// where mlx-lm stacks nothing or its sanitize does more once it finds per-expert names
  /// (qwen3_next.py shifts the norms by 1 only then): hf/'s names, in float.
  std::span<const std::pair<std::string_view, std::string_view>> experts;
  /// hf/ weights mlx/ serves as their GGUF tensors under mlx-lm's names (MlxUnfused).
  std::span<const MlxUnfused> unfused;
};

struct ConfigFields;  // config_fields.h

/// Where a family's quirk runs in rendering config.json (hf_config.cpp, plan_config): once the
/// keys are read (kAfterKeys), with the per-layer fields (kLayerFields), after every check of the
/// fields (kChecks), once the special token ids are settled (kTokenIds).
enum class QuirkStage : std::uint8_t { kAfterKeys, kLayerFields, kChecks, kTokenIds };

/// A step of config.json that one family's rows alone take, defined in that family's file
/// (architectures/<family>.cpp): it sets fields the converter does not write, or refuses a file
/// the class would not run as the converter's input did; it returns why ("" when it holds).
struct ConfigQuirk {
  QuirkStage stage;
  std::string (*run)(ConfigFields& f);
};

/// One architecture.
struct Architecture {
  std::string_view gguf_arch;  ///< general.architecture as the converter writes it
  /// Where the converter writes one general.architecture for several classes (llama for
  /// MixtralForCausalLM too, granitemoe for GraniteMoeSharedForCausalLM): a GGUF key suffix
  /// (`<gguf_arch>.<required_key>`) only this class's files have. Of a gguf_arch's rows,
  /// hf_config.cpp takes the first whose required key the file has, else the one requiring none.
  std::string_view required_key;
  std::string_view model_type;  ///< config.json's model_type
  std::string_view class_name;  ///< config.json's architectures[0]
  std::span<const ConfigKey> keys;
  std::span<const ConfigConstant> constants;
  ClassDefaults defaults;
  Transforms transforms = Transforms::kNone;
  std::string_view layer_prefix;                  ///< state_dict prefix of layer N, "{}" = N
  std::vector<WeightEntry> before, layer, after;  ///< state_dict order
  /// Why no state_dict is offered, when `layer` is empty.
  std::string_view no_weights;
  std::span<const TensorFlag> tensor_flags;
  /// Where one class names a layer's tensors by its config (falcon's new decoder: ln_attn and
  /// ln_mlp with two norms, input_layernorm with one), or one general.architecture covers two
  /// classes (deepseek2: V3's router correction bias; t5: UMT5's relative attention bias past the
  /// first layer): a GGUF layer tensor (after "blk.N.", "enc.blk.N." or "dec.blk.N.") only this
  /// row's files have, in a layer N >= required_from_layer. Of a gguf_arch's rows, hf_config.cpp
  /// and hf_weights.cpp take the one whose required tensor a layer holds (with_layer_tensors),
  /// else the one they chose.
  /// A row chosen by its required_key (Mixtral, GraniteMoeShared) may name a required_tensor
  /// too: it is then kept only where every layer holds it (a llama that only carries
  /// llama.expert_count is no Mixtral). A row chosen by its tensor needs it in every layer from
  /// required_from_layer on, or, where `required_with` names another layer tensor, in every such
  /// layer that holds that one (DeepSeek-V3's exp_probs_b.bias: its MoE layers, those holding
  /// ffn_gate_inp.weight).
  std::string_view required_tensor;
  std::uint64_t required_from_layer = 0;
  std::string_view required_with;
  LayerTypes layer_types;  ///< none when `gguf` is empty
  std::span<const LayerPeriod> layer_periods;
  std::span<const TensorDim> tensor_dims;
  /// A key suffix whose count of layers the converter appended to block_count (glm.py,
  /// Glm4MoeModel.__init__: the MTP layers); the model's own layers are block_count less it.
  std::string_view appended_layers;
  /// An encoder-decoder (t5.py, T5Model): `layer` is the encoder's, its GGUF layers
  /// "enc.blk.N."; the decoder's layers are "dec.blk.N." (as many as the row's key
  /// decoder_block_count says), under `decoder_prefix`, with `decoder_layer`; `between` are the
  /// globals after the encoder's layers (its final norm). None when `decoder_prefix` is empty.
  std::string_view decoder_prefix;
  std::vector<WeightEntry> decoder_layer, between;
  /// The layer tensors one model's layers hold or lack by their kind (LayerGroup): a hybrid's
  /// attention and SSM or convolution mixers, a dense MLP or the experts, T5's relative
  /// attention bias in layer 0 only, Gemma's KV-sharing layers without keys and values. Every
  /// other tensor of the row is held by every layer, or, where WeightEntry::optional, by none
  /// (uneven_layer).
  std::span<const LayerGroup> layer_groups;
  std::span<const Refusal> refusals;
  /// A config field holding one character a layer from the per-layer head_count_kv and
  /// feed_forward_length arrays and the tensors (NemotronHConfig's hybrid_override_pattern;
  /// hf_config.cpp, hybrid_pattern), none when empty.
  std::string_view layer_pattern;
  MoeLayers moe_layers;  ///< none when `from` is empty
  LeadingLayers leading_layers;
  /// The family's own steps of config.json, in order within each stage.
  std::span<const ConfigQuirk> quirks;
  MlxColumn mlx;  ///< mlx/'s column
};

/// Every row.
const std::vector<Architecture>& architectures();

/// The row whose model_type is `model_type` and whose gguf_arch is `gguf_arch`, else the first
/// whose model_type is `model_type`, or nullptr.
const Architecture* find_architecture(std::string_view model_type, std::string_view gguf_arch = {});

/// "<prefix>N.<rest>" (prefix "blk.", "enc.blk." or "dec.blk.") with N as Python's str(int)
/// writes it, as the converter names a layer's tensors (gguf-py's tensor_mapping.py, "blk.{bid}"):
/// digits only, no leading zero, at most 19 of them. (N, rest), else nullopt.
std::optional<std::pair<std::uint64_t, std::string_view>> layer_of(std::string_view name,
                                                                   std::string_view prefix);

/// The layers below `count` under `prefix` ("blk.", "enc.blk.", "dec.blk.") that hold layer
/// tensor `tensor` (the name after "<prefix>N."), ascending and distinct: one pass over the tensor
/// infos, memory linear in the file whatever the block count says.
std::vector<std::uint64_t> layers_holding(const GgufFile& file, std::string_view tensor,
                                          std::uint64_t count, std::string_view prefix = "blk.");

/// The row a file's layer tensors prove, or why none is.
struct RowChoice {
  const Architecture* row = nullptr;
  std::string reason;  ///< when `row` is nullptr: one line naming the tensor at fault
};

/// Of `row`'s general.architecture's rows without a required_key, the one whose required_tensor
/// a layer of `file` below `<arch>.block_count` (from its required_from_layer on) holds, else
/// `row`; then the chosen row's required_tensor must stand in every layer that needs it
/// (Architecture::required_tensor), else no row and the first layer lacking it. nullptr stays
/// nullptr; a file without a block count keeps `row` (render_hf_config refuses it).
RowChoice with_layer_tensors(const Architecture* row, const GgufFile& file);

/// One layer's tensors (their indices into GgufFile::tensors) by name after "<prefix>N.", and
/// the layers under a prefix ("blk.", "enc.blk.", "dec.blk.") by N (hf_plan.h, TensorIndex;
/// layers 0..L−1, each present).
using LayerTensors = std::map<std::string_view, std::size_t>;
using Layers = std::map<std::uint64_t, LayerTensors>;

/// A row is proven by its tensors: layer 0 of `layers` holds each required tensor of `entries`
/// (WeightEntry::optional; their `then` parts too) of no group of `row`'s layer_groups ("layer 0 of
/// 4 has no 'blk.0.attn_k.weight', which LlamaForCausalLM builds in every layer"), and each such
/// tensor, required or not, is held by every layer if layer 0 holds it, by none if not (else
/// transformers would initialise it at random in the layers lacking it, or the layers holding it
/// would carry a part the config does not give them). The first layer at fault in one line, naming
/// the tensor ("layer 3 of 4 has no 'blk.3.attn_k.weight', which layer 0 holds"); and each layer
/// holds each group wholly or not at all, one of each set of alternatives, and the one of its kind
/// in `kinds` (LayerGroup: "layer 1 of 2 has no 'blk.1.attn_k.weight', which Lfm2ForCausalLM builds
/// in every layer holding 'blk.1.attn_q.weight'"). The first layer at fault, else "". Time linear
/// in the layers times the entries, no allocation beyond the entries' names. Each layer's kinds,
/// one per axis: the kind config field `field` gives it (layer_types, hybrid_override_pattern,
/// first_k_dense_replace, attn_layer_offset and _period, num_kv_shared_layers), one element a
/// layer, matched against LayerGroup::layer_type; none where no axis.
struct LayerKinds {
  struct Axis {
    std::string field;
    std::vector<std::string_view> of_layer;
  };
  std::vector<Axis> axes;
};

std::string uneven_layer(const Architecture& row, std::string_view prefix, const Layers& layers,
                         std::span<const WeightEntry> entries, const LayerKinds& kinds = {});

}  // namespace ggufs::hf
