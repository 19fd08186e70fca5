// config.json and generation_config.json of a GGUF model as the config of the Hugging Face model
// llama.cpp's converter converted: each config field the converter wrote as a GGUF key
// (hf_architectures.cpp, one row per architecture) read back, the fields it does not write from
// the row or the class defaults. Where transformers' own GGUF import (4.57.6:
// modeling_gguf_pytorch_utils.py, load_gguf_checkpoint; integrations/ggml.py) reads the same file
// the same way, the output is that import's, key for key; tests/python/test_hf_config.py names
// each place where it is not. gguf-py 0.19.0's reader (gguf_reader.py, GGUFReader) bounds what
// transformers can read at all.
#include "ggufs/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "ggufs/names.h"
#include "hf_architectures.h"

namespace ggufs {
namespace {

using nlohmann::json;

constexpr std::string_view kTransformersVersion = "4.57.6";

// gguf-py 0.19.0's GGMLQuantizationType (constants.py): GGUFReader refuses other type ids.
bool gguf_py_knows_type(std::uint32_t id) {
  return id <= 3 || (id >= 6 && id <= 30) || id == 34 || id == 35 || (id >= 39 && id <= 41);
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Python's str.replace(old, new) for a non-empty `old`: every non-overlapping occurrence, left
// to right (on valid UTF-8 the same as on code points).
std::string replace_all(std::string_view s, std::string_view old, std::string_view repl) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t hit = s.find(old, at);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(at, hit - at));
    out.append(repl);
    at = hit + old.size();
  }
  out.append(s.substr(at));
  return out;
}

// Python's len() of a str: code points (s is valid UTF-8).
std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Where gguf-py or _gguf_parse_value fails on a value: a string that is not UTF-8 (strict
// decode) or a nested array. Empty when fine.
std::string unreadable(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v.data)) {
    return is_utf8(*s) ? "" : "is not valid UTF-8";
  }
  if (const auto* a = std::get_if<Array>(&v.data)) {
    if (a->elem_type() == ValueType::kArray) return "is a nested array";
    if (a->elem_type() == ValueType::kString) {
      for (std::size_t i = 0; i < a->size(); ++i) {
        if (!is_utf8(a->string_at(i))) return fmt::format("element {} is not valid UTF-8", i);
      }
    }
  }
  return "";
}

// The double whose shortest decimal is the shortest one that reads back as `x`: llama.cpp's
// converter stores every hyperparameter as float32 (gguf_writer.py, add_float32), so the
// original config's 1e-06 arrives as 9.999999974752427e-07; written this way it is 1e-06 again
// (and float(1e-06) in Python gives that float32 back). NaN and infinities pass unchanged (the
// caller refuses them).
double shortest_decimal(float x) {
  if (!std::isfinite(x)) return static_cast<double>(x);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest round-trip (C++17)
  double d = 0;
  std::from_chars(buf, r.ptr, d);
  return d;
}

// The shortest decimal x whose tenth the converter stores as `key` (float32(0.1 · x), the
// product in Python's double: deepseek.py, DeepseekV2Model.set_gguf_parameters): DeepSeek-V2's
// mscale_all_dim 0.707 comes back as 0.707, where 10 · key in float32 is 0.70699996.
double shortest_tenfold(float key) {
  const double approx = static_cast<double>(key) / 0.1;
  for (int digits = 1; digits <= 17 && std::isfinite(approx); ++digits) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, approx, std::chars_format::general, digits);
    double x = 0;
    std::from_chars(buf, r.ptr, x);
    if (static_cast<float>(0.1 * x) == key) return x;
  }
  return approx;
}

// The shortest decimal p whose Normal(0, 1).icdf is within one float32 ulp of `key`, the
// converter's float32 icdf(p) (gemma.py, Gemma3NModel.set_gguf_parameters: torch's
// Normal(0, 1).icdf, itself within an ulp or so of the exact value): Gemma 3n's
// activation_sparsity_pattern 0.95 comes back as 0.95. icdf(0) is -inf: 0.
double shortest_normal_cdf(float key) {
  if (std::isinf(key)) return key < 0 ? 0.0 : 1.0;
  const auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double p = cdf(key);
  const double below = cdf(std::nextafter(key, -std::numeric_limits<float>::infinity()));
  const double above = cdf(std::nextafter(key, std::numeric_limits<float>::infinity()));
  for (int digits = 1; digits <= 17; ++digits) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, p, std::chars_format::general, digits);
    double x = 0;
    std::from_chars(buf, r.ptr, x);
    if (below < x && x < above) return x;
  }
  return p;
}

// A scalar as _gguf_parse_value gives it (int, float, bool, str) in JSON; strings holding the
// architecture name get it replaced, as load_gguf_checkpoint does to every str value.
json scalar_json(const Value& v, std::string_view arch, std::string_view updated) {
  struct Visit {
    std::string_view arch, updated;
    json operator()(std::uint64_t x) const { return x; }
    json operator()(std::int64_t x) const { return x; }
    json operator()(float x) const { return shortest_decimal(x); }
    json operator()(double x) const { return x; }
    json operator()(bool x) const { return x; }
    json operator()(const std::string& s) const {
      return contains(s, arch) ? replace_all(s, arch, updated) : s;
    }
    json operator()(const Array&) const { return json::array(); }  // not reached
  };
  return std::visit(Visit{arch, updated}, v.data);
}

// A field's value as load_gguf_checkpoint holds it: a list of its parsed parts, unwrapped when
// there is exactly one (so a one-element array is its element, string replacement included).
// Longest array a config field takes (a value per layer; llama.cpp's largest models have a few
// hundred layers).
constexpr std::size_t kMaxConfigListElements = 65536;

json field_json(const Value& v, std::string_view arch, std::string_view updated) {
  const auto* a = std::get_if<Array>(&v.data);
  if (!a) return scalar_json(v, arch, updated);
  if (a->size() == 1) return scalar_json(a->at(0), arch, updated);
  json list = json::array();
  for (std::size_t i = 0; i < a->size(); ++i) {
    if (a->elem_type() == ValueType::kString) {
      list.push_back(std::string(a->string_at(i)));
    } else {
      list.push_back(scalar_json(a->at(i), arch, updated));
    }
  }
  return list;
}

// len() of the field's value as field_json holds it, without building it (a vocabulary can be
// 256 000 strings): a list's size, a str's code points; nullopt where len() fails (a number).
std::optional<std::size_t> python_len(const Value& v, std::string_view arch,
                                      std::string_view updated) {
  const auto* a = std::get_if<Array>(&v.data);
  if (a && a->size() != 1) return a->size();
  const json one = a ? scalar_json(a->at(0), arch, updated) : scalar_json(v, arch, updated);
  if (!one.is_string()) return std::nullopt;
  return code_points(one.get_ref<const std::string&>());
}

bool all_finite(const json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_array()) {
    for (const json& e : j) {
      if (!all_finite(e)) return false;
    }
  }
  return true;
}

bool is_integer(const json& j) { return j.is_number_integer(); }  // bool is not a number here
bool is_positive(const json& j) {
  return j.is_number_unsigned() ? j.get<std::uint64_t>() > 0
                                : j.is_number_integer() && j.get<std::int64_t>() > 0;
}
bool is_non_negative(const json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0);
}

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

HfConfigResult no_config(std::string reason) { return {std::nullopt, std::move(reason)}; }

// The offset and period whose layers (i % period == offset, offset < period: JambaConfig's
// layers_block_type and layers_num_experts) among `n` are exactly `layers` (ascending, distinct,
// each below n), or nullopt where no pair gives them. A pattern that one pair gives but another
// too (one layer, or none) gets the smallest period.
std::optional<std::pair<std::uint64_t, std::uint64_t>> offset_and_period(
    const std::vector<std::uint64_t>& layers, std::uint64_t n) {
  if (layers.empty()) {
    if (n == UINT64_MAX) return std::nullopt;
    return std::pair{n, n + 1};  // an offset past the last layer
  }
  const std::uint64_t first = layers.front();
  if (layers.size() == 1) return std::pair{first, std::max(first + 1, n - first)};
  const std::uint64_t period = layers[1] - first;
  if (first >= period) return std::nullopt;
  for (std::size_t i = 1; i < layers.size(); ++i) {
    if (layers[i] - layers[i - 1] != period) return std::nullopt;
  }
  if (n - layers.back() > period) return std::nullopt;  // a layer past the last one missing
  return std::pair{first, period};
}

// rope_scaling from the keys base.py (TextModel.set_gguf_parameters) writes for a linear or YaRN
// rope_parameters / rope_scaling: rope.scaling.type, .factor, and for YaRN
// .original_context_length and, where the original had them, .yarn_beta_fast, .yarn_beta_slow,
// .yarn_attn_factor (its attention_factor). Other types (llama3, longrope) live in tensors the
// config cannot restate and are left out. Both transformers lines read rope_scaling (5.x into
// rope_parameters). An error text for a key of the wrong kind, else "".
template <typename Find>
std::string add_rope_scaling(json& config, std::string_view arch, const Find& find) {
  const std::string prefix = fmt::format("{}.rope.scaling.", arch);
  // A row's constant rope_scaling: fields the file's scaling gets besides its keys' (none
  // without one).
  json scaling = config.value("rope_scaling", json::object());
  config.erase("rope_scaling");
  // A row's keys whose config field is "rope_scaling.<field>" (mistral3.py's YaRN fields): set
  // into the scaling, and without one dropped.
  constexpr std::string_view kNested = "rope_scaling.";
  json nested = json::object();
  for (auto it = config.begin(); it != config.end();) {
    if (!it.key().starts_with(kNested)) {
      ++it;
      continue;
    }
    if (!it->is_number() || !all_finite(*it)) {
      return fmt::format("the key of {} is not a finite number", printable(it.key()));
    }
    nested[it.key().substr(kNested.size())] = *it;
    it = config.erase(it);
  }
  const Value* type = find(prefix + "type");
  if (!type) return "";
  const auto* name = std::get_if<std::string>(&type->data);
  if (!name) return fmt::format("{}type is not a string", printable(prefix));
  if (*name != "linear" && *name != "yarn") return "";
  // A finite number as scalar_json gives it (a float32 as its shortest decimal), null when the
  // key is absent, nullopt for any other kind.
  auto number = [&](std::string_view key) -> std::optional<json> {
    const Value* v = find(prefix + std::string(key));
    if (!v) return json();
    json j = scalar_json(*v, arch, arch);
    if (!j.is_number() || !all_finite(j)) return std::nullopt;
    return j;
  };
  scaling["rope_type"] = *name;
  struct Field {
    std::string_view key, field;
    bool yarn_only;
  };
  constexpr Field kFields[] = {
      {"factor", "factor", false},
      {"original_context_length", "original_max_position_embeddings", true},
      {"yarn_beta_fast", "beta_fast", true},
      {"yarn_beta_slow", "beta_slow", true},
      {"yarn_attn_factor", "attention_factor", true}};
  for (const Field& f : kFields) {
    if (f.yarn_only && *name != "yarn") continue;
    const std::optional<json> v = number(f.key);
    if (!v) return fmt::format("{}{} is not a finite number", printable(prefix), f.key);
    if (!v->is_null()) scaling[std::string(f.field)] = *v;
  }
  if (!scaling.contains("factor")) return "";  // base.py writes none without a factor
  if (*name == "yarn" && !scaling.contains("original_max_position_embeddings")) {
    return fmt::format("{}original_context_length is missing for YaRN", printable(prefix));
  }
  scaling.update(nested);
  config["rope_scaling"] = std::move(scaling);
  return "";
}

// NemotronH's hybrid_override_pattern into `config` (render_hf_config: the layers' kinds from
// the per-layer head_count_kv and feed_forward_length arrays), or why the file is not a model
// NemotronHForCausalLM runs as the converter's input did.
template <typename Find>
std::string nemotron_h_pattern(json& config, const GgufFile& file, const std::string& arch,
                               const Find& find) {
  // The dense form (general.architecture nemotron_h: nemotron.py, NemotronHModel.__init__, for a
  // config without num_experts_per_tok, as Nemotron-H's and Nemotron Nano 2's config.json) has
  // dense MLP layers ('-', the relu² NemotronHMLP); the MoE form expert layers ('E') instead.
  const bool moe = arch == "nemotron_h_moe";
  // nemotron.py, NemotronHModel.set_gguf_parameters writes moe_latent_size for a latent MoE
  // (fc1_latent_proj, fc2_latent_proj) and nextn_predict_layers for the MTP block it appends;
  // neither is rendered.
  if (find(arch + ".moe_latent_size")) {
    return fmt::format(
        "{}.moe_latent_size: a latent MoE (fc1_latent_proj, fc2_latent_proj), which hf/ does "
        "not render",
        printable(arch));
  }
  if (find(arch + ".nextn_predict_layers")) {
    return fmt::format(
        "{}.nextn_predict_layers: an MTP block the converter appended as a layer, which hf/ "
        "does not render",
        printable(arch));
  }
  const std::uint64_t layers = config["num_hidden_layers"].get<std::uint64_t>();
  auto per_layer = [&](std::string_view suffix) -> std::optional<std::vector<std::uint64_t>> {
    const Value* v = find(fmt::format("{}.{}", arch, suffix));
    const auto* a = v ? std::get_if<Array>(&v->data) : nullptr;
    if (!a || a->size() != layers) return std::nullopt;
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const json e = scalar_json(a->at(i), arch, arch);
      if (!is_non_negative(e)) return std::nullopt;
      out.push_back(e.get<std::uint64_t>());
    }
    return out;
  };
  const auto kv = per_layer("attention.head_count_kv");
  const auto ff = per_layer("feed_forward_length");
  if (!kv || !ff) {
    return fmt::format(
        "{}.attention.head_count_kv and .feed_forward_length are not one count a layer",
        printable(arch));
  }
  const std::vector<std::uint64_t> experts = hf::layers_holding(file, "ffn_up_exps.weight", layers),
                                   mixers = hf::layers_holding(file, "ssm_in.weight", layers),
                                   mlps = hf::layers_holding(file, "ffn_up.weight", layers);
  auto holds = [](const std::vector<std::uint64_t>& having, std::uint64_t layer) {
    return std::binary_search(having.begin(), having.end(), layer);
  };
  std::string pattern;
  for (std::uint64_t i = 0; i < layers; ++i) {
    const char c = (*kv)[i] > 0 ? '*' : (*ff)[i] == 0 ? 'M' : moe ? 'E' : '-';
    // The converter's MoE form counts only the expert layers in feed_forward_length: a dense
    // MLP layer gets width 0 there, as a mamba layer does, and intermediate_size is not written
    // (NemotronHModel.set_gguf_parameters).
    if ((c == 'E' && !holds(experts, i)) || (c == 'M' && !holds(mixers, i))) {
      return fmt::format(
          "layer {} is a dense MLP (no attention, experts or mamba mixer): the converter writes "
          "no intermediate_size for nemotron_h_moe",
          i);
    }
    if (c == '-' && !holds(mlps, i)) {
      return fmt::format("layer {} has a feed-forward width but no ffn_up.weight", i);
    }
    pattern += c;
  }
  config["hybrid_override_pattern"] = pattern;
  return "";
}

}  // namespace

HfConfigResult render_hf_config(const GgufFile& file, std::string_view dtype) {
  // gguf-py's GGUFReader (READER_SUPPORTED_VERSIONS) reads versions 2 and 3 only.
  if (file.version < 2) {
    return no_config(
        fmt::format("GGUF version {}: transformers' reader (gguf-py) reads 2 and 3", file.version));
  }
  // GGUFReader and _gguf_parse_value decode every key, string and tensor name as strict UTF-8
  // and know a fixed set of tensor types: any failure fails transformers' whole import.
  for (const KeyValue& kv : file.kv) {
    if (!is_utf8(kv.key)) {
      return no_config(fmt::format("key '{}' is not valid UTF-8", printable(valid_utf8(kv.key))));
    }
    if (const std::string why = unreadable(kv.value); !why.empty()) {
      return no_config(fmt::format("key '{}': value {}", printable(kv.key), why));
    }
  }
  for (const TensorInfo& t : file.tensors) {
    if (!is_utf8(t.name)) {
      return no_config(
          fmt::format("tensor name '{}' is not valid UTF-8", printable(valid_utf8(t.name))));
    }
    if (!gguf_py_knows_type(t.type)) {
      return no_config(
          fmt::format("tensor '{}': type id {} is unknown to gguf-py", printable(t.name), t.type));
    }
  }

  auto find = [&](std::string_view key) -> const Value* {
    for (const KeyValue& kv : file.kv) {
      if (kv.key == key) return &kv.value;
    }
    return nullptr;
  };

  // architecture = read_field(reader, "general.architecture")[0].
  const Value* arch_value = find("general.architecture");
  if (!arch_value) return no_config("no general.architecture");
  const auto* arch_string = std::get_if<std::string>(&arch_value->data);
  if (!arch_string) return no_config("general.architecture is not a string");
  const std::string arch = *arch_string;
  if (arch.empty()) return no_config("general.architecture is empty");

  // The row of general.architecture (or of transformers' own model_type for it, "qwen3_moe").
  // A llama whose general.name is exactly "mistral" (read_field gives a list, and `in` tests its
  // elements) is a mistral, as transformers' import takes it (load_gguf_checkpoint,
  // updated_architecture).
  bool named_mistral = false;
  if (const Value* name = find("general.name")) {
    if (const auto* s = std::get_if<std::string>(&name->data)) {
      named_mistral = *s == "mistral";
    } else if (const auto* a = std::get_if<Array>(&name->data);
               a && a->elem_type() == ValueType::kString) {
      for (std::size_t i = 0; i < a->size(); ++i) named_mistral |= a->string_at(i) == "mistral";
    }
  }
  // Of general.architecture's rows, the first whose required key the file has (Mixtral's
  // expert_count), else the one that requires none (hf_architectures.h, required_key).
  const hf::Architecture* row = nullptr;
  for (const hf::Architecture& a : hf::architectures()) {
    if (a.gguf_arch != arch) continue;
    if (a.required_key.empty()) {
      if (!row) row = &a;
    } else if (find(fmt::format("{}.{}", arch, a.required_key))) {
      row = &a;
      break;
    }
  }
  // By model_type too ("qwen3_moe"), but not a row the converter writes under another row's
  // name (mixtral is only ever a llama with experts).
  if (!row) {
    row = hf::find_architecture(arch);
    if (row && !row->required_key.empty()) row = nullptr;
  }
  if (row && row->model_type == "llama" && named_mistral) row = hf::find_architecture("mistral");
  const hf::RowChoice proven = hf::with_layer_tensors(row, file);
  if (row && !proven.row) return no_config(proven.reason);
  row = proven.row;
  // The t5 rows' MLP is the gated one (T5 v1.1, Flan-T5, UMT5): the original T5's ReLU MLP (no
  // ffn_gate, DenseReluDense.wi) is another state_dict, not rendered.
  if (row && row->gguf_arch == "t5") {
    bool gated = false;
    for (const TensorInfo& t : file.tensors) gated |= t.name == "enc.blk.0.ffn_gate.weight";
    if (!gated) {
      return no_config("no enc.blk.0.ffn_gate.weight: T5's ReLU MLP, which hf/ does not render");
    }
  }
  if (!row) {
    return no_config(
        fmt::format("general.architecture '{}' is not one ggufs renders a transformers config for",
                    printable(arch)));
  }
  // The converter writes mamba for FalconMambaForCausalLM too, with ssm.dt_b_c_rms true (its
  // RMS norms of B, C and dt; mamba.py, MambaModel.set_gguf_parameters): not a MambaForCausalLM.
  if (row->model_type == "mamba") {
    const Value* rms = find(arch + ".ssm.dt_b_c_rms");
    const auto* on = rms ? std::get_if<bool>(&rms->data) : nullptr;
    if (on && *on) {
      return no_config(
          "mamba.ssm.dt_b_c_rms is true: a FalconMamba, which ggufs renders no "
          "transformers config for");
    }
  }
  // The converter writes granitehybrid for BambaForCausalLM too, with rope.scaling.finetuned
  // true (its rope; granite.py, GraniteHybridModel.set_gguf_parameters), false for a
  // GraniteMoeHybrid, which has none: not the model GraniteMoeHybridForCausalLM would run.
  if (row->model_type == "granitemoehybrid") {
    const Value* rope = find(arch + ".rope.scaling.finetuned");
    const auto* on = rope ? std::get_if<bool>(&rope->data) : nullptr;
    if (on && *on) {
      return no_config(
          "granitehybrid.rope.scaling.finetuned is true: a Bamba, which ggufs renders no "
          "transformers config for");
    }
  }
  // load_gguf_checkpoint replaces the architecture's name by its updated one in every string
  // value (general.name "qwen3moe tiny" becomes "qwen3_moe tiny"); gemma3 is renamed to
  // gemma3_text only after.
  const std::string updated(row->model_type == "gemma3_text" ? "gemma3" : row->model_type);

  json config = json::object();
  std::map<std::string, std::string> source;   // config key -> GGUF key that set it
  std::map<std::string, hf::ValueKind> kinds;  // config key -> what it must hold

  // stablelm: qkv bias and parallel residual from the tensor names (substring tests).
  if (contains(arch, "stablelm")) {
    bool qkv_bias = false, ffn_norm = false;
    for (const TensorInfo& t : file.tensors) {
      qkv_bias |= contains(t.name, "attn_q.bias") || contains(t.name, "attn_k.bias") ||
                  contains(t.name, "attn_v.bias");
      ffn_norm |= contains(t.name, "ffn_norm");
    }
    config["use_qkv_bias"] = qkv_bias;
    config["use_parallel_residual"] = !ffn_norm;
  }
  // Tied unless a tensor is named exactly output.weight.
  bool has_output = false;
  for (const TensorInfo& t : file.tensors) has_output |= t.name == "output.weight";
  config["tie_word_embeddings"] = !has_output;
  for (const hf::TensorFlag& f : row->tensor_flags) {
    bool present = false;
    for (const TensorInfo& t : file.tensors) {
      const auto blk = t.name.find('.', 4);
      present |= t.name.starts_with("blk.") && blk != std::string::npos &&
                 std::string_view(t.name).substr(blk + 1) == f.gguf;
    }
    config[std::string(f.config)] = present;
  }

  // Every key in file order: the row's keys under "<general.architecture>.", general.name and
  // the tokenizer's special token ids; a later key overwrites an earlier one. The tokens are kept
  // for the vocab_size fallback (len(tokenizer.ggml.tokens)).
  using hf::ValueKind;
  constexpr hf::ConfigKey kCommon[] = {
      {"general.name", "_model_name_or_path", ValueKind::kAny},
      {"tokenizer.ggml.bos_token_id", "bos_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.eos_token_id", "eos_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.unknown_token_id", "unk_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.padding_token_id", "pad_token_id", ValueKind::kTokenId}};
  std::optional<std::optional<std::size_t>> tokens_len;  // outer: present; inner: has a len()
  auto set = [&](const hf::ConfigKey& k, const KeyValue& kv) -> std::string {
    // A config field that is a list is one value per layer at most: a longer one is hostile,
    // and held as json values it would cost 16 bytes and more per element.
    const auto* list = std::get_if<Array>(&kv.value.data);
    if (list && list->size() > kMaxConfigListElements) {
      return fmt::format("{} has {} elements, more than the {} accepted", printable(kv.key),
                         list->size(), kMaxConfigListElements);
    }
    const std::string config_key(k.config);
    config[config_key] = field_json(kv.value, arch, updated);
    const bool max = k.kind == hf::ValueKind::kLayerMax, min = k.kind == hf::ValueKind::kLayerMin;
    if (json& v = config[config_key]; (max || min) && v.is_array()) {
      json chosen = max ? json(0) : json();
      for (const json& e : v) {
        if (!is_non_negative(e))
          return fmt::format("{} holds a value that is no count", printable(kv.key));
        const auto n = e.get<std::uint64_t>();
        if (chosen.is_null() ||
            (max ? n > chosen.get<std::uint64_t>() : n < chosen.get<std::uint64_t>())) {
          chosen = e;
        }
      }
      if (chosen.is_null()) return fmt::format("{} is an empty list", printable(kv.key));
      v = chosen;
    }
    if (json& v = config[config_key]; k.kind == hf::ValueKind::kTenth) {
      if (!v.is_number() || !all_finite(v) ||
          std::fabs(v.get<double>()) > std::numeric_limits<float>::max()) {
        return fmt::format("{} is not a finite float32", printable(kv.key));
      }
      v = shortest_tenfold(static_cast<float>(v.get<double>()));
    }
    if (json& v = config[config_key]; k.kind == hf::ValueKind::kNormalCdf) {
      // field_json gave each float32 element as its shortest decimal: read back exactly.
      if (!v.is_array()) v = json::array({v});
      for (json& e : v) {
        // A float64 array's element may lie past float32's range (its cast undefined).
        const double x = e.is_number_float() ? e.get<double>() : std::nan("");
        if (std::isnan(x) ||
            (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())) {
          return fmt::format("{} holds a value that is no float32", printable(kv.key));
        }
        e = shortest_normal_cdf(static_cast<float>(e.get<double>()));
      }
    }
    source[config_key] = kv.key;
    kinds[config_key] = k.kind;
    return "";
  };
  for (const KeyValue& kv : file.kv) {
    const std::string_view key = kv.key;
    if (key == "tokenizer.ggml.tokens") tokens_len = python_len(kv.value, arch, updated);
    for (const hf::ConfigKey& c : kCommon) {
      if (key != c.gguf) continue;
      if (std::string why = set(c, kv); !why.empty()) return no_config(why);
    }
    if (key.size() <= arch.size() || !key.starts_with(arch) || key[arch.size()] != '.') continue;
    const std::string_view suffix = key.substr(arch.size() + 1);
    for (const hf::ConfigKey& k : row->keys) {
      if (k.gguf != suffix) continue;
      if (std::string why = set(k, kv); !why.empty()) return no_config(why);
    }
  }
  config["model_type"] = row->model_type;
  // Gemma 2 and 3 scale queries by 1/sqrt(query_pre_attn_scalar), which the converter does not
  // write; llama.cpp computes the scale as 1/sqrt(head_dim), but for the 27B models (46 and 62
  // layers) as 1/sqrt(hidden / heads) (src/models/gemma2.cpp and gemma3.cpp,
  // load_arch_hparams), as those checkpoints' query_pre_attn_scalar say (the configs' defaults,
  // 256 and 256, are the 2B's and 9B's). The model llama.cpp runs is the one written here.
  if (config["model_type"] == "gemma2" || config["model_type"] == "gemma3_text") {
    const bool is_27b = config.value("num_hidden_layers", json()) ==
                        json(config["model_type"] == "gemma2" ? 46 : 62);
    const json& heads = config.value("num_attention_heads", json());
    const json& hidden = config.value("hidden_size", json());
    if (is_27b && is_positive(heads) && is_positive(hidden)) {
      config["query_pre_attn_scalar"] = hidden.get<std::uint64_t>() / heads.get<std::uint64_t>();
    } else if (is_positive(config.value("head_dim", json()))) {
      config["query_pre_attn_scalar"] = config["head_dim"];
    }
  }
  for (const hf::ConfigConstant& c : row->constants) {
    if (!source.contains(std::string(c.config)))
      config[std::string(c.config)] = json::parse(c.json);
  }
  if (std::string why = add_rope_scaling(config, arch, find); !why.empty()) return no_config(why);

  // vocab_size: the mapped key, else len(tokens) (a one-token list is its string: its length).
  if (!config.contains("vocab_size")) {
    if (!tokens_len) {
      return no_config(
          fmt::format("no {}.vocab_size and no tokenizer.ggml.tokens", printable(arch)));
    }
    if (!*tokens_len) return no_config("tokenizer.ggml.tokens is not a list of strings");
    config["vocab_size"] = **tokens_len;
    source["vocab_size"] = "tokenizer.ggml.tokens";
    kinds["vocab_size"] = ValueKind::kCount;
  }

  // The structural values llama.cpp needs too, under the architecture's own keys.
  constexpr std::string_view kRequired[] = {"block_count", "embedding_length",
                                            "attention.head_count", "context_length"};
  for (const std::string_view suffix : kRequired) {
    for (const hf::ConfigKey& k : row->keys) {
      if (k.gguf != suffix) continue;
      const std::string ck(k.config);
      if (!config.contains(ck)) {
        return no_config(fmt::format("no {}.{}", printable(arch), suffix));
      }
      if (!is_positive(config[ck])) {
        return no_config(fmt::format("{} is not a positive integer", printable(source[ck])));
      }
    }
  }
  if (!is_positive(config["vocab_size"])) {
    return no_config(
        fmt::format("{}: vocab size is not a positive integer", printable(source["vocab_size"])));
  }
  for (const auto& [ck, value] : config.items()) {
    const auto it = source.find(ck);
    if (it == source.end()) continue;  // set here, not from a key
    const std::string key = printable(it->second);
    if (!all_finite(value)) return no_config(fmt::format("{} is not finite", key));
    switch (kinds[ck]) {
      case ValueKind::kAny:
        break;
      case ValueKind::kCount:
      case ValueKind::kRotaryFraction:
      case ValueKind::kLayerMax:
      case ValueKind::kQuotient:
      case ValueKind::kLayerMin:
      case ValueKind::kDifference:
        if (!is_non_negative(value)) {
          return no_config(fmt::format("{} is not a non-negative integer", key));
        }
        break;
      case ValueKind::kNumber:
      case ValueKind::kTenth:
        if (!value.is_number()) return no_config(fmt::format("{} is not a number", key));
        break;
      case ValueKind::kLayerCounts:
      case ValueKind::kNormalCdf: {
        // A list of one value a layer (checked below), or one value for all (kLayerCounts).
        const bool counts = kinds[ck] == ValueKind::kLayerCounts;
        for (const json& e : value.is_array() ? value : json::array({value})) {
          if (counts ? !is_non_negative(e) : !e.is_number()) {
            return no_config(
                fmt::format("{} holds a value that is no {}", key, counts ? "count" : "number"));
          }
        }
        break;
      }
      case ValueKind::kTokenId:
        if (!is_integer(value)) return no_config(fmt::format("{} is not an integer", key));
        break;
    }
  }

  if (!row->eos_from.empty() && config.contains("eos_token_id")) {
    config[std::string(row->eos_from)] = config["eos_token_id"];
  }

  // The layers the converter appended (hf_architectures.h, appended_layers) are not the model's.
  if (!row->appended_layers.empty()) {
    std::string blocks, extra;
    for (const hf::ConfigKey& k : row->keys) {
      if (k.gguf == "block_count") blocks = k.config;
      if (k.gguf == row->appended_layers) extra = k.config;
    }
    if (config.contains(extra)) {
      const auto n = config[blocks].get<std::uint64_t>(), e = config[extra].get<std::uint64_t>();
      if (e >= n) {
        return no_config(fmt::format("{} leaves no layer of {}", printable(source[extra]),
                                     printable(source[blocks])));
      }
      config[blocks] = n - e;
    }
  }

  // The model's layers, for the per-layer keys below: no more than a per-layer list may hold
  // (kMaxConfigListElements), so that the lists built a layer at a time (layer_types, the
  // patterns) cost a bounded multiple of it whatever the key says. hf/ also needs each layer to
  // hold tensors (hf_weights.cpp).
  std::uint64_t layers = 0;
  for (const hf::ConfigKey& k : row->keys) {
    if (k.gguf != "block_count" && k.gguf != "decoder_block_count") continue;
    const std::string ck(k.config);
    if (!config.contains(ck)) continue;
    const auto n = config[ck].get<std::uint64_t>();
    if (n > kMaxConfigListElements) {
      return no_config(fmt::format("{} is {}, more than the {} layers accepted",
                                   printable(source[ck]), n, kMaxConfigListElements));
    }
    if (k.gguf == "block_count") layers = n;
  }
  // A per-layer list (ValueKind::kLayerCounts, kNormalCdf) has one value a layer.
  for (const hf::ConfigKey& k : row->keys) {
    const auto it = config.find(std::string(k.config));
    if ((k.kind == ValueKind::kLayerCounts || k.kind == ValueKind::kNormalCdf) &&
        it != config.end() && it->is_array() && it->size() != layers) {
      return no_config(fmt::format("{} has {} elements for {} layers",
                                   printable(source[std::string(k.config)]), it->size(), layers));
    }
  }
  // Counts a layer tensor's shape holds (hf_architectures.h, TensorDim).
  for (const hf::TensorDim& td : row->tensor_dims) {
    const std::vector<std::uint64_t> holding = hf::layers_holding(file, td.tensor, layers);
    if (holding.empty()) continue;
    const std::string name = fmt::format("blk.{}.{}", holding[0], td.tensor);
    for (const TensorInfo& t : file.tensors) {
      if (t.name != name) continue;
      if (td.axis >= t.n_dims || t.n_dims > 4) {
        return no_config(fmt::format("tensor '{}' has no axis {}", printable(name), td.axis));
      }
      config[std::string(td.config)] = t.ne[t.n_dims - 1 - td.axis];
    }
  }
  // The layers whose element of per-layer array `key` is true or non-zero, ascending, into
  // `out`; an error text where `key` is no such array.
  auto nonzero_layers = [&](const std::string& key, std::vector<std::uint64_t>& out) {
    const Value* v = find(key);
    const auto* a = v ? std::get_if<Array>(&v->data) : nullptr;
    if (!a || a->size() != layers) {
      return fmt::format("{} is not an array of one value per layer", printable(key));
    }
    for (std::uint64_t i = 0; i < layers; ++i) {
      const json e = scalar_json(a->at(i), arch, updated);
      if (!e.is_boolean() && !is_non_negative(e)) {
        return fmt::format("{} holds a value that is no flag or count", printable(key));
      }
      if (e.is_boolean() ? e.get<bool>() : e != json(0)) out.push_back(i);
    }
    return std::string();
  };
  // layer_types from the per-layer array (hf_architectures.h, LayerTypes): one element a layer.
  // Without the key every layer is `zero`.
  if (const hf::LayerTypes& lt = row->layer_types; !lt.gguf.empty()) {
    const std::string key = fmt::format("{}.{}", arch, lt.gguf);
    std::vector<std::uint64_t> set;
    if (find(key)) {
      if (std::string why = nonzero_layers(key, set); !why.empty()) return no_config(why);
    }
    json types = json::array();
    for (std::uint64_t i = 0, next = 0; i < layers; ++i) {
      const bool on = next < set.size() && set[next] == i;
      next += on;
      types.push_back(on ? lt.nonzero : lt.zero);
    }
    config["layer_types"] = std::move(types);
  }

  // NemotronH (configuration_nemotron_h.py, NemotronHConfig): hybrid_override_pattern, one
  // character a layer, as the Hub configs hold it and the converter reads it (nemotron.py,
  // NemotronHModel.__init__): '*' attention where the layer has KV heads, 'E' experts where it has
  // a feed-forward width and holds them, '-' the dense MLP where it has one without, 'M' the
  // Mamba-2 mixer otherwise (GraniteHybridModel.set_gguf_parameters writes head_count_kv so,
  // NemotronHModel.set_gguf_parameters feed_forward_length).
  if (row->model_type == "nemotron_h") {
    if (std::string why = nemotron_h_pattern(config, file, arch, find); !why.empty()) {
      return no_config(why);
    }
  }

  // Offsets and periods from the layers that have a part (hf_architectures.h, LayerPeriod).
  for (const hf::LayerPeriod& p : row->layer_periods) {
    std::vector<std::uint64_t> having;
    std::string what;
    if (!p.gguf.empty()) {
      const std::string key = fmt::format("{}.{}", arch, p.gguf);
      what = printable(key);
      if (std::string why = nonzero_layers(key, having); !why.empty()) return no_config(why);
    } else {
      what = fmt::format("the layers holding {}", p.tensor);
      having = hf::layers_holding(file, p.tensor, layers);
    }
    const auto pattern = offset_and_period(having, layers);
    if (!pattern) {
      return no_config(fmt::format(
          "{}: its {} of {} layers are not those of one {} below one {} (layer % period == "
          "offset)",
          what, having.size(), layers, p.offset, p.period));
    }
    config[std::string(p.offset)] = pattern->first;
    config[std::string(p.period)] = pattern->second;
  }

  // Gemma 3n (configuration_gemma3n.py, Gemma3nTextConfig): vocab_size_per_layer_input is not in
  // the file, and the converter pads embed_tokens_per_layer with zero rows up to vocab_size
  // (gemma.py, Gemma3NModel.modify_tensors). Rows other than vocab_size are it (nothing padded);
  // rows equal to it leave it open: the class default 262144 (every Gemma 3n checkpoint: 262144
  // of 262400), at most vocab_size.
  if (config["model_type"] == "gemma3n_text") {
    const auto vocab = config["vocab_size"].get<std::uint64_t>();
    std::uint64_t per_layer_vocab = std::min<std::uint64_t>(262144, vocab);
    for (const TensorInfo& t : file.tensors) {
      if (t.name == "per_layer_token_embd.weight" && t.n_dims == 2 && t.ne[1] != vocab) {
        per_layer_vocab = t.ne[1];
      }
    }
    config["vocab_size_per_layer_input"] = per_layer_vocab;
  }

  // Gemma 4 (configuration_gemma4.py, Gemma4TextConfig): the rope bases nested per layer type,
  // the full-attention layers' "proportional" rope with the class default partial_rotary_factor
  // (the converter asserts that type and writes the fraction only as rope_freqs.weight, gemma.py
  // Gemma4Model.generate_extra_tensors); their head_dim in per_layer_config, as __post_init__
  // builds it from global_head_dim; the per-layer inputs' vocabulary, not in the file, the
  // model's (as in every Gemma 4 checkpoint).
  if (config["model_type"] == "gemma4_text") {
    // The MoE block (enable_moe_block: router scales, per-expert scales) has no row here.
    if (find(fmt::format("{}.expert_count", arch))) {
      return no_config("Gemma 4's mixture-of-experts block is not rendered");
    }
    json full = {
        {"partial_rotary_factor", 0.25}, {"rope_theta", 1000000.0}, {"rope_type", "proportional"}};
    json sliding = {{"rope_theta", 10000.0}, {"rope_type", "default"}};
    if (config.contains("rope_theta")) full["rope_theta"] = config["rope_theta"];
    if (config.contains("rope_local_base_freq"))
      sliding["rope_theta"] = config["rope_local_base_freq"];
    config.erase("rope_theta");
    config.erase("rope_local_base_freq");
    config["rope_parameters"] = {{"full_attention", full}, {"sliding_attention", sliding}};
    if (config.contains("global_head_dim")) {
      json per_layer = json::object();
      const json& types = config.value("layer_types", json::array());
      for (std::size_t i = 0; i < types.size(); ++i) {
        if (types[i] == "full_attention") {
          per_layer[std::to_string(i)] = {{"head_dim", config["global_head_dim"]}};
        }
      }
      config["per_layer_config"] = std::move(per_layer);
      config.erase("global_head_dim");
    }
    config["vocab_size_per_layer_input"] = config["vocab_size"];
    // A per-layer feed_forward_length: intermediate_size, doubled for the layers that reuse
    // another's keys and values (use_double_wide_mlp; Gemma4Model.set_gguf_parameters writes
    // it so), anything else is no Gemma 4.
    const std::string ff_key = fmt::format("{}.feed_forward_length", arch);
    if (const Value* v = find(ff_key); v && std::holds_alternative<Array>(v->data)) {
      const json ff = field_json(*v, arch, updated);
      const auto n = config["num_hidden_layers"].get<std::uint64_t>();
      const std::uint64_t shared =
          config.value("num_kv_shared_layers", json(0)).get<std::uint64_t>();
      const std::uint64_t f = config["intermediate_size"].get<std::uint64_t>();
      bool fits = ff.size() == n && shared <= n;
      for (std::uint64_t i = 0; fits && i < n; ++i)
        fits = ff[i] == json(i < n - shared ? f : 2 * f);
      if (!fits) {
        return no_config(fmt::format(
            "{} is not intermediate_size for the layers of their own KV, twice it for the "
            "{} sharing layers",
            printable(ff_key), shared));
      }
      config["use_double_wide_mlp"] = true;
    }
  }

  // Rotary dimensions per head back to the fraction of hidden / heads they are.
  for (const hf::ConfigKey& k : row->keys) {
    const std::string ck(k.config);
    if (k.kind != ValueKind::kRotaryFraction || !config.contains(ck)) continue;
    std::uint64_t hidden = 0, heads = 0;
    for (const hf::ConfigKey& d : row->keys) {
      if (d.gguf == "embedding_length") hidden = config[std::string(d.config)].get<std::uint64_t>();
      if (d.gguf == "attention.head_count")
        heads = config[std::string(d.config)].get<std::uint64_t>();
    }
    if (heads == 0 || hidden / heads == 0) {
      return no_config(
          fmt::format("{}: no head size to take it as a fraction of", printable(source[ck])));
    }
    config[ck] =
        static_cast<double>(config[ck].get<std::uint64_t>()) / static_cast<double>(hidden / heads);
  }

  // A product back to its factor: the key's value over config field `over` (an integer where it
  // divides, as the original's expand and head_dim are).
  for (const hf::ConfigKey& k : row->keys) {
    const std::string ck(k.config);
    if (k.kind != ValueKind::kQuotient || !config.contains(ck)) continue;
    const std::string over(k.over);
    if (!config.contains(over) || !is_positive(config[over])) {
      return no_config(
          fmt::format("{}: no positive {} to divide it by", printable(source[ck]), over));
    }
    const auto n = config[ck].get<std::uint64_t>(), d = config[over].get<std::uint64_t>();
    if (n % d == 0) {
      config[ck] = n / d;
    } else {
      config[ck] = static_cast<double>(n) / static_cast<double>(d);
    }
  }
  // A sum back to its term: the key's value less config field `over`.
  for (const hf::ConfigKey& k : row->keys) {
    const std::string ck(k.config);
    if (k.kind != ValueKind::kDifference || !config.contains(ck)) continue;
    const std::string over(k.over);
    const auto n = config[ck].get<std::uint64_t>();
    if (!config.contains(over) || !is_non_negative(config[over]) ||
        config[over].get<std::uint64_t>() > n) {
      return no_config(
          fmt::format("{}: no {} at most it to take from it", printable(source[ck]), over));
    }
    config[ck] = n - config[over].get<std::uint64_t>();
  }

  // GPT2Attention refuses a hidden size its heads do not divide (modeling_gpt2.py,
  // GPT2Attention.__init__), though every weight shape would fit.
  if (config["model_type"] == "gpt2" &&
      config["n_embd"].get<std::uint64_t>() % config["n_head"].get<std::uint64_t>() != 0) {
    return no_config(fmt::format("{} does not divide {}: transformers' GPT2Attention refuses it",
                                 printable(source["n_head"]), printable(source["n_embd"])));
  }
  HfConfig out;
  out.model_type = row->model_type;
  // save_pretrained writes the model's class (transformers' own import writes none).
  config["architectures"] = json::array({std::string(row->class_name)});
  out.torch_dtype = "float32";

  // A special token id the file does not hold: llama.cpp's converter writes the original's
  // (gguf-py's vocab.py, SpecialVocab: its tokenizer's, else its config.json's *_token_id, one
  // inside the vocabulary), so the original had none. The class default (transformers'
  // configuration_<model>.py) would name a token all the same: Phi3Config's pad 32000 past a
  // smaller vocabulary, which from_pretrained refuses (nn.Embedding's padding_idx), CohereConfig's
  // pad 0, which generate masks out of a prompt (_prepare_attention_mask_for_generation). null
  // overrides it; the row's eos copy (eos_from, HunYuanDenseV1Config's eod_token_id 3) likewise.
  const hf::ClassDefaults& d = row->defaults;
  const std::pair<const char*, std::int64_t> ids[] = {{"bos_token_id", d.bos},
                                                      {"eos_token_id", d.eos},
                                                      {"pad_token_id", d.pad},
                                                      {"decoder_start_token_id", -1}};
  for (const auto& [name, class_default] : ids) {
    if (!config.contains(name) && class_default >= 0) config[name] = nullptr;
  }
  if (!row->eos_from.empty() && config.value("eos_token_id", json()).is_null()) {
    config[std::string(row->eos_from)] = nullptr;
  }
  // generation_config.json: the config's token ids that are not None; GenerationConfig's own
  // defaults for them are None.
  json generation = json::object();
  generation["_from_model_config"] = true;
  for (const auto& [name, class_default] : ids) {
    if (config.contains(name) && !config[name].is_null()) generation[name] = config[name];
  }
  generation["transformers_version"] = kTransformersVersion;
  config["transformers_version"] = kTransformersVersion;
  if (!dtype.empty()) config["dtype"] = dtype;

  out.config_json = dump(config);
  out.generation_config_json = dump(generation);
  return {std::move(out), ""};
}

}  // namespace ggufs
