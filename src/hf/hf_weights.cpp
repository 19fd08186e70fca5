// The Hugging Face state_dict of a GGUF model as transformers 4.57.6's GGUF import builds it.
// Facts restated from transformers 4.57.6: modeling_gguf_pytorch_utils.py (load_gguf_checkpoint,
// get_gguf_hf_weights_map, the TensorProcessor subclasses and TENSOR_PROCESSORS), the
// configuration_*.py defaults and modeling_*.py parameter shapes of each model; from gguf-py
// 0.19.0: gguf/tensor_mapping.py (the HF name each GGUF tensor kind has per architecture) and
// gguf/constants.py (MODEL_ARCH_NAMES, MODEL_TENSORS).
#include "ggufs/hf_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <variant>

#include "ggufs/hf_config.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxWeights = 10'000'000;

// The torch shape the model gives a parameter, in terms of its config (see Dims).
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
  kFusedQkv,         // (nh·hd + 2·nkv·hd, H): phi3's qkv_proj
  kFusedGateUp,      // (2F, H): phi3's gate_up_proj
  kConvQkv,          // (H, 3H): gpt2's Conv1D c_attn
  kThreeHidden,      // (3H)
  kHiddenHidden,     // (H, H)
};

// Which TensorProcessor TENSOR_PROCESSORS gives the GGUF architecture (none: the base class).
enum class Processor { kNone, kLlama, kMoe, kGpt2, kGemma };

// One state_dict parameter: the GGUF tensor name transformers maps it from (after "blk.N." for
// a layer's), its HF name (after the layer prefix for a layer's) and shape. `expert`: one per
// expert, from a stacked tensor (consecutive expert entries are emitted expert by expert).
struct Entry {
  std::string_view gguf;
  std::string_view hf;
  Shape shape;
  bool expert = false;
};

struct Arch {
  std::string_view gguf_arch;   // general.architecture
  std::string_view model_type;  // the config's model_type
  Processor processor;
  std::string_view layer_prefix;  // state_dict prefix of layer N, "{}" = N
  // Config class defaults where the GGUF gives no value (configuration_<model>.py __init__): 0 =
  // the attention head count (num_key_value_heads) or hidden_size // heads (head_dim).
  std::uint64_t default_kv_heads;
  std::uint64_t default_head_dim;
  std::uint64_t default_ff;   // 0: 4·H (gpt2's n_inner None; never mapped from GGUF)
  std::vector<Entry> before;  // state_dict order: what precedes the layers
  std::vector<Entry> layer;
  std::vector<Entry> after;
};

// The state_dict of each model class (<Model>ForCausalLM of transformers 4.57.6, in
// registration order), restricted to the parameters gguf-py 0.19.0's name map gives a GGUF name.
const std::vector<Arch>& arches() {
  static const std::vector<Entry> kLlamaAttention = {
      {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
      {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
      {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
      {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
  };
  // qwen2 and stablelm: q, k and v with biases, o without.
  static const std::vector<Entry> kBiasedAttention = {
      {"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
      {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
      {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
      {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
      {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
      {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
      {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
  };
  static const std::vector<Entry> kGatedMlp = {
      {"ffn_gate.weight", "mlp.gate_proj.weight", Shape::kFfHidden},
      {"ffn_up.weight", "mlp.up_proj.weight", Shape::kFfHidden},
      {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf},
  };
  static const std::vector<Entry> kTwoNorms = {
      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
      {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
  };
  static const std::vector<Entry> kQkNorms = {
      {"attn_q_norm.weight", "self_attn.q_norm.weight", Shape::kHeadDim},
      {"attn_k_norm.weight", "self_attn.k_norm.weight", Shape::kHeadDim},
  };
  static const std::vector<Entry> kGemmaNorms = {
      {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
      {"post_attention_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
      {"ffn_norm.weight", "pre_feedforward_layernorm.weight", Shape::kHidden},
      {"post_ffw_norm.weight", "post_feedforward_layernorm.weight", Shape::kHidden},
  };
  static const std::vector<Entry> kEmbed = {
      {"token_embd.weight", "model.embed_tokens.weight", Shape::kVocabHidden}};
  static const std::vector<Entry> kNormHead = {
      {"output_norm.weight", "model.norm.weight", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden},
  };
  static const std::vector<Entry> kNormBiasHead = {
      {"output_norm.weight", "model.norm.weight", Shape::kHidden},
      {"output_norm.bias", "model.norm.bias", Shape::kHidden},
      {"output.weight", "lm_head.weight", Shape::kVocabHidden},
  };
  auto cat = [](std::initializer_list<std::vector<Entry>> parts) {
    std::vector<Entry> out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  constexpr std::string_view kModelLayer = "model.layers.{}.";
  static const std::vector<Arch> kArches = {
      {"llama", "llama", Processor::kLlama, kModelLayer, 0, 0, 11008, kEmbed,
       cat({kLlamaAttention, kGatedMlp, kTwoNorms}), kNormHead},
      {"qwen2", "qwen2", Processor::kNone, kModelLayer, 32, 0, 22016, kEmbed,
       cat({kBiasedAttention, kGatedMlp, kTwoNorms}), kNormHead},
      {"qwen3", "qwen3", Processor::kNone, kModelLayer, 32, 128, 22016, kEmbed,
       cat({kLlamaAttention, kQkNorms, kGatedMlp, kTwoNorms}), kNormHead},
      {"qwen3moe", "qwen3_moe", Processor::kMoe, kModelLayer, 4, 0, 6144, kEmbed,
       cat({kLlamaAttention,
            kQkNorms,
            {{"ffn_gate_inp.weight", "mlp.gate.weight", Shape::kRouter},
             {"ffn_gate_exps.weight", "mlp.experts.{}.gate_proj.weight", Shape::kExpertFfHidden,
              true},
             {"ffn_up_exps.weight", "mlp.experts.{}.up_proj.weight", Shape::kExpertFfHidden, true},
             {"ffn_down_exps.weight", "mlp.experts.{}.down_proj.weight", Shape::kExpertHiddenFf,
              true}},
            kTwoNorms}),
       kNormHead},
      // gguf-py's GEMMA2 tensors have no OUTPUT: an output.weight is skipped.
      {"gemma2",
       "gemma2",
       Processor::kGemma,
       kModelLayer,
       4,
       256,
       9216,
       kEmbed,
       cat({kLlamaAttention, kGatedMlp, kGemmaNorms}),
       {{"output_norm.weight", "model.norm.weight", Shape::kHidden}}},
      {"gemma3", "gemma3_text", Processor::kGemma, kModelLayer, 4, 256, 9216, kEmbed,
       cat({kLlamaAttention, kQkNorms, kGatedMlp, kGemmaNorms}), kNormHead},
      // Phi3Attention registers o_proj before qkv_proj; transformers keeps both fusions.
      {"phi3", "phi3", Processor::kNone, kModelLayer, 0, 0, 8192, kEmbed,
       cat({{{"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
             {"attn_qkv.weight", "self_attn.qkv_proj.weight", Shape::kFusedQkv},
             {"ffn_up.weight", "mlp.gate_up_proj.weight", Shape::kFusedGateUp},
             {"ffn_down.weight", "mlp.down_proj.weight", Shape::kHiddenFf}},
            kTwoNorms}),
       kNormHead},
      {"gpt2",
       "gpt2",
       Processor::kGpt2,
       "transformer.h.{}.",
       0,
       0,
       0,
       {{"token_embd.weight", "transformer.wte.weight", Shape::kVocabHidden},
        {"position_embd.weight", "transformer.wpe.weight", Shape::kPositionsHidden}},
       {{"attn_norm.weight", "ln_1.weight", Shape::kHidden},
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
       {{"output_norm.weight", "transformer.ln_f.weight", Shape::kHidden},
        {"output_norm.bias", "transformer.ln_f.bias", Shape::kHidden},
        {"output.weight", "lm_head.weight", Shape::kVocabHidden}}},
      {"starcoder2",
       "starcoder2",
       Processor::kNone,
       kModelLayer,
       2,
       0,
       12288,
       kEmbed,
       {{"attn_q.weight", "self_attn.q_proj.weight", Shape::kQ},
        {"attn_q.bias", "self_attn.q_proj.bias", Shape::kQBias},
        {"attn_k.weight", "self_attn.k_proj.weight", Shape::kKv},
        {"attn_k.bias", "self_attn.k_proj.bias", Shape::kKvBias},
        {"attn_v.weight", "self_attn.v_proj.weight", Shape::kKv},
        {"attn_v.bias", "self_attn.v_proj.bias", Shape::kKvBias},
        {"attn_output.weight", "self_attn.o_proj.weight", Shape::kO},
        {"attn_output.bias", "self_attn.o_proj.bias", Shape::kHidden},
        {"ffn_up.weight", "mlp.c_fc.weight", Shape::kFfHidden},
        {"ffn_up.bias", "mlp.c_fc.bias", Shape::kFf},
        {"ffn_down.weight", "mlp.c_proj.weight", Shape::kHiddenFf},
        {"ffn_down.bias", "mlp.c_proj.bias", Shape::kHidden},
        {"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
        {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
        {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
        {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden}},
       kNormBiasHead},
      {"stablelm", "stablelm", Processor::kNone, kModelLayer, 32, 0, 6912, kEmbed,
       cat({kBiasedAttention,
            kGatedMlp,
            {{"attn_norm.weight", "input_layernorm.weight", Shape::kHidden},
             {"attn_norm.bias", "input_layernorm.bias", Shape::kHidden},
             {"ffn_norm.weight", "post_attention_layernorm.weight", Shape::kHidden},
             {"ffn_norm.bias", "post_attention_layernorm.bias", Shape::kHidden}}}),
       kNormBiasHead},
  };
  return kArches;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A count of the config, if it holds one (render_hf_config has checked every count is a
// non-negative integer).
std::optional<std::uint64_t> count(const json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  const std::int64_t v = it->get<std::int64_t>();
  if (v < 0) return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

// The dimensions the model class builds its parameters from.
struct Dims {
  std::uint64_t vocab = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0;
  std::uint64_t experts = 0, expert_ff = 0, positions = 0;
};

// a·b, or nullopt past 2⁶⁴.
std::optional<std::uint64_t> mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return std::nullopt;
  return a * b;
}

std::optional<std::vector<std::uint64_t>> expected_shape(Shape s, const Dims& d) {
  const auto q = mul(d.heads, d.head_dim);
  const auto kv = mul(d.kv_heads, d.head_dim);
  using V = std::vector<std::uint64_t>;
  auto two = [](std::optional<std::uint64_t> a,
                std::optional<std::uint64_t> b) -> std::optional<V> {
    if (!a || !b) return std::nullopt;
    return V{*a, *b};
  };
  auto one = [](std::optional<std::uint64_t> a) -> std::optional<V> {
    if (!a) return std::nullopt;
    return V{*a};
  };
  switch (s) {
    case Shape::kVocabHidden:
      return V{d.vocab, d.hidden};
    case Shape::kPositionsHidden:
      return V{d.positions, d.hidden};
    case Shape::kHidden:
      return V{d.hidden};
    case Shape::kQ:
      return two(q, d.hidden);
    case Shape::kKv:
      return two(kv, d.hidden);
    case Shape::kO:
      return two(d.hidden, q);
    case Shape::kQBias:
      return one(q);
    case Shape::kKvBias:
      return one(kv);
    case Shape::kFfHidden:
      return V{d.ff, d.hidden};
    case Shape::kHiddenFf:
      return V{d.hidden, d.ff};
    case Shape::kFf:
      return V{d.ff};
    case Shape::kHeadDim:
      return V{d.head_dim};
    case Shape::kRouter:
      return V{d.experts, d.hidden};
    case Shape::kExpertFfHidden:
      return V{d.expert_ff, d.hidden};
    case Shape::kExpertHiddenFf:
      return V{d.hidden, d.expert_ff};
    case Shape::kFusedQkv: {
      const auto kv2 = kv ? mul(*kv, 2) : std::nullopt;
      if (!q || !kv2 || *q > UINT64_MAX - *kv2) return std::nullopt;
      return V{*q + *kv2, d.hidden};
    }
    case Shape::kFusedGateUp:
      return two(mul(d.ff, 2), d.hidden);
    case Shape::kConvQkv:
      return two(d.hidden, mul(d.hidden, 3));
    case Shape::kThreeHidden:
      return one(mul(d.hidden, 3));
    case Shape::kHiddenHidden:
      return V{d.hidden, d.hidden};
  }
  return std::nullopt;
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// The numpy shape gguf-py gives a tensor: its n_dims dimensions, outermost first.
std::vector<std::uint64_t> numpy_shape(const TensorInfo& t) {
  std::vector<std::uint64_t> s;
  for (std::uint32_t i = t.n_dims; i > 0; --i) s.push_back(t.ne[std::min<std::uint32_t>(i, 4) - 1]);
  return s;
}

// "blk.N.rest" with N as Python's str(int) writes it: (N, rest).
std::optional<std::pair<std::uint64_t, std::string_view>> block_of(std::string_view name) {
  constexpr std::string_view kBlk = "blk.";
  if (!name.starts_with(kBlk)) return std::nullopt;
  name.remove_prefix(kBlk.size());
  const std::size_t dot = name.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 19) return std::nullopt;
  if (dot > 1 && name[0] == '0') return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + static_cast<std::uint64_t>(name[i] - '0');
  }
  return std::pair{n, name.substr(dot + 1)};
}

HfWeightsResult refuse(std::string reason) { return {std::nullopt, std::move(reason)}; }

HfWeightsResult build(const GgufFile& file) {
  const HfConfigResult rendered = render_hf_config(file);
  if (!rendered.config) return refuse(rendered.reason);
  const json config = json::parse(rendered.config->config_json);
  const std::string model_type = config.value("model_type", "");
  // get_gguf_hf_weights_map looks the model type up in gguf-py's MODEL_ARCH_NAMES.
  if (model_type == "mistral") {
    return refuse(
        "model_type 'mistral': gguf-py 0.19.0 has no mistral tensor map, transformers 4.57.6 "
        "loads no tensors for it");
  }
  if (model_type == "qwen2_moe") {
    return refuse(
        "qwen2moe: transformers 4.57.6 maps none of its qwen2moe.* keys, its model keeps "
        "Qwen2MoeConfig's default dimensions");
  }
  const Arch* arch = nullptr;
  for (const Arch& a : arches()) {
    if (a.model_type == model_type) arch = &a;
  }
  if (!arch) return refuse(fmt::format("model_type '{}' has no weight map", printable(model_type)));
  // TENSOR_PROCESSORS is keyed by general.architecture as written: a qwen3moe file named
  // "qwen3_moe" gets no expert split, and its stacked experts would match no parameter.
  std::string_view raw_arch;
  for (const KeyValue& kv : file.kv) {
    if (const auto* s = std::get_if<std::string>(&kv.value.data);
        s && kv.key == "general.architecture") {
      raw_arch = *s;
    }
  }
  if (raw_arch != arch->gguf_arch) {
    return refuse(fmt::format(
        "general.architecture '{}' is not '{}': transformers 4.57.6 processes its tensors as "
        "another architecture's",
        printable(raw_arch), arch->gguf_arch));
  }

  const bool gpt2 = arch->processor == Processor::kGpt2;
  Dims d;
  d.vocab = count(config, "vocab_size").value_or(0);
  d.hidden = count(config, gpt2 ? "n_embd" : "hidden_size").value_or(0);
  d.heads = count(config, gpt2 ? "n_head" : "num_attention_heads").value_or(0);
  const std::uint64_t layers = count(config, gpt2 ? "n_layer" : "num_hidden_layers").value_or(0);
  if (d.hidden == 0 || d.heads == 0) {
    return refuse("the config has no positive hidden size and head count");
  }
  const auto config_kv = count(config, "num_key_value_heads");
  d.kv_heads = config_kv.value_or(arch->default_kv_heads ? arch->default_kv_heads : d.heads);
  d.head_dim = count(config, "head_dim")
                   .value_or(arch->default_head_dim ? arch->default_head_dim : d.hidden / d.heads);
  if (arch->default_ff == 0) {
    const auto ff = mul(d.hidden, 4);
    if (!ff) return refuse("4 × hidden size overflows");
    d.ff = *ff;
  } else {
    d.ff = count(config, "intermediate_size").value_or(arch->default_ff);
  }
  d.experts = count(config, "num_experts").value_or(128);  // Qwen3MoeConfig's default
  // moe_intermediate_size: the file's expert_feed_forward_length (render_hf_config), else
  // Qwen3MoeConfig's default.
  d.expert_ff = count(config, "moe_intermediate_size").value_or(768);
  d.positions = count(config, "n_positions").value_or(1024);  // GPT2Config's default
  // Qwen2MoeTensorProcessor splits config.get("num_experts", 60) experts.
  const std::uint64_t split_experts = count(config, "num_experts").value_or(60);

  // The GGUF tensors by name: globals, and "blk.N.*" of the model's layers.
  std::map<std::string_view, std::size_t> globals;
  std::map<std::uint64_t, std::map<std::string_view, std::size_t>> blocks;
  for (std::size_t i = 0; i < file.tensors.size(); ++i) {
    const std::string_view name = file.tensors[i].name;
    const auto blk = block_of(name);
    if (blk && blk->first < layers) {
      blocks[blk->first][blk->second] = i;
    } else if (!blk) {
      globals[name] = i;
    }
    // Qwen2MoeTensorProcessor looks every "_exp" tensor up in the name map: a KeyError if absent.
    if (arch->processor == Processor::kMoe && contains(name, "_exp")) {
      bool known = blk && blk->first < layers;
      if (known) {
        known = false;
        for (const Entry& e : arch->layer) known |= e.expert && e.gguf == blk->second;
      }
      if (!known) {
        return refuse(fmt::format(
            "tensor '{}': transformers 4.57.6 splits it as experts but maps it to no layer",
            printable(name)));
      }
    }
  }

  std::vector<HfWeight> out;
  // Appends the parameter `hf_name` from tensor `source` with the processor's transform.
  auto add = [&](std::string hf_name, const Entry& entry, std::size_t source,
                 std::uint64_t expert) -> std::string {
    const TensorInfo& t = file.tensors[source];
    const std::string_view name = t.name;
    HfWeight w;
    w.hf_name = std::move(hf_name);
    w.source = source;
    w.shape = numpy_shape(t);
    switch (arch->processor) {
      case Processor::kNone:
        break;
      case Processor::kLlama: {
        // LlamaTensorProcessor: only when the config holds both head counts.
        const bool q = contains(name, ".attn_q."), k = contains(name, ".attn_k.");
        if ((q || k) && config_kv) {
          const std::uint64_t n = (k && *config_kv != d.heads) ? *config_kv : d.heads;
          const std::uint64_t rows = w.shape.empty() ? 0 : w.shape[0];
          if (n == 0 || rows % 2 != 0 || (rows / 2) % n != 0) {  // 2·n may overflow
            return fmt::format("tensor '{}': {} rows are not a multiple of 2 × {} heads",
                               printable(name), rows, n);
          }
          w.transform = HfTransform::kReversePermute;
          w.n_head = n;
        }
        break;
      }
      case Processor::kMoe:
        if (entry.expert) {
          if (w.shape.empty() || w.shape[0] < split_experts) {
            return fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                               printable(name), split_experts);
          }
          w.shape.erase(w.shape.begin());
          w.transform = HfTransform::kSelect;
          w.index = expert;
        }
        break;
      case Processor::kGpt2:
        if (contains(name, "attn_qkv.weight") || contains(name, "ffn_down.weight") ||
            contains(name, "ffn_up.weight") || contains(name, "attn_output.weight")) {
          if (w.shape.size() != 2) {
            return fmt::format("tensor '{}' is not 2-D", printable(name));
          }
          std::swap(w.shape[0], w.shape[1]);
          w.transform = HfTransform::kTranspose;
        }
        break;
      case Processor::kGemma:
        if (contains(name, "norm.weight")) {
          w.transform = HfTransform::kAddConstant;
          w.constant = -1.0f;
        }
        break;
    }
    const auto expected = expected_shape(entry.shape, d);
    if (!expected) return fmt::format("tensor '{}': the config's shape overflows", printable(name));
    if (w.shape != *expected) {
      return fmt::format("tensor '{}': {} has shape {}, the config gives {}", printable(name),
                         w.hf_name, shape_text(w.shape), shape_text(*expected));
    }
    if (out.size() >= kMaxWeights) return fmt::format("more than {} tensors", kMaxWeights);
    out.push_back(std::move(w));
    return "";
  };
  auto add_globals = [&](const std::vector<Entry>& entries) -> std::string {
    for (const Entry& e : entries) {
      const auto it = globals.find(e.gguf);
      if (it == globals.end()) continue;
      if (std::string why = add(std::string(e.hf), e, it->second, 0); !why.empty()) return why;
    }
    return "";
  };

  if (std::string why = add_globals(arch->before); !why.empty()) return refuse(why);
  for (const auto& [n, tensors] : blocks) {
    const std::string prefix = fmt::format(fmt::runtime(arch->layer_prefix), n);
    for (std::size_t i = 0; i < arch->layer.size();) {
      if (!arch->layer[i].expert) {
        const Entry& e = arch->layer[i++];
        const auto it = tensors.find(e.gguf);
        if (it == tensors.end()) continue;
        if (std::string why = add(prefix + std::string(e.hf), e, it->second, 0); !why.empty()) {
          return refuse(why);
        }
        continue;
      }
      // A run of expert entries: expert by expert, each expert's parameters in entry order.
      // Only the stacks this layer holds, each checked to hold the experts before any is
      // emitted: the loop then runs at most once per stacked expert, whatever expert_count says.
      std::size_t end = i;
      std::vector<std::pair<const Entry*, std::size_t>> stacks;
      for (; end < arch->layer.size() && arch->layer[end].expert; ++end) {
        const auto it = tensors.find(arch->layer[end].gguf);
        if (it == tensors.end()) continue;
        const TensorInfo& t = file.tensors[it->second];
        // numpy_shape's first dimension: the stack's.
        if (t.n_dims == 0 || t.ne[std::min<std::uint32_t>(t.n_dims, 4) - 1] < split_experts) {
          return refuse(fmt::format("tensor '{}': fewer than the {} experts transformers splits",
                                    printable(t.name), split_experts));
        }
        stacks.emplace_back(&arch->layer[end], it->second);
      }
      if (!stacks.empty() && split_experts > kMaxWeights) {
        return refuse(fmt::format("more than {} tensors", kMaxWeights));
      }
      for (std::uint64_t x = 0; !stacks.empty() && x < split_experts; ++x) {
        for (const auto& [e, source] : stacks) {
          const std::string hf = prefix + fmt::format(fmt::runtime(e->hf), x);
          if (std::string why = add(hf, *e, source, x); !why.empty()) return refuse(why);
        }
      }
      i = end;
    }
  }
  if (std::string why = add_globals(arch->after); !why.empty()) return refuse(why);
  return {std::move(out), ""};
}

}  // namespace

std::uint64_t hf_permuted_row(std::uint64_t hf_row, std::uint64_t rows, std::uint64_t n_head) {
  // numpy: w.reshape(n, d, 2, …).swapaxes(2, 1).reshape(rows, …): HF row (h, j, i) in the
  // (n, 2, d) layout holds GGUF row (h, i, j) in the (n, d, 2) layout.
  const std::uint64_t d = rows / n_head / 2;
  const std::uint64_t h = hf_row / (2 * d);
  const std::uint64_t j = (hf_row % (2 * d)) / d;
  const std::uint64_t i = hf_row % d;
  return h * 2 * d + 2 * i + j;
}

HfWeightsResult hf_weight_map(const GgufFile& file) {
  try {
    return build(file);
  } catch (const std::exception& e) {  // bad_alloc, a malformed rendered config
    return refuse(fmt::format("no weight map: {}", e.what()));
  }
}

}  // namespace ggufs
