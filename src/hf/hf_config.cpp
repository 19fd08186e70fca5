// config.json and generation_config.json of a GGUF model as the config of the Hugging Face model
// llama.cpp's converter converted: each config field the converter wrote as a GGUF key
// (architectures/, one row per architecture) read back, the fields it does not write from
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
#include <locale>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <variant>
#include <vector>
#include <version>

#include "config_fields.h"
#include "ggufs/names.h"
#include "hf_architectures.h"
#include "hf_plan.h"

namespace ggufs {

using hf::count_field;
using hf::field_for;
using hf::field_json;
using hf::is_positive;

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

}  // namespace

namespace {

// A decimal that std::to_chars wrote, read back: with from_chars where the C++ library has the
// floating-point overloads (__cpp_lib_to_chars: libstdc++ from GCC 11; LLVM's libc++ 14, Debian
// 12's, lacks them), else by a stream in the classic locale (correctly rounded as strtod).
double read_decimal(const char* first, const char* last) {
  double d = 0;
#if defined(__cpp_lib_to_chars)
  std::from_chars(first, last, d);
#else
  std::istringstream in(std::string(first, last));
  in.imbue(std::locale::classic());
  in >> d;
#endif
  return d;
}

}  // namespace

// The double whose shortest decimal is the shortest one that reads back as `x`: llama.cpp's
// converter stores every hyperparameter as float32 (gguf_writer.py, add_float32), so the
// original config's 1e-06 arrives as 9.999999974752427e-07; written this way it is 1e-06 again
// (and float(1e-06) in Python gives that float32 back). NaN and infinities pass unchanged (the
// caller refuses them).
double hf::shortest_decimal(float x) {
  if (!std::isfinite(x)) return static_cast<double>(x);
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);  // shortest round-trip (C++17)
  return read_decimal(buf, r.ptr);
}

namespace {

using hf::shortest_decimal;

// The shortest decimal x whose tenth the converter stores as `key` (float32(0.1 · x), the
// product in Python's double: deepseek.py, DeepseekV2Model.set_gguf_parameters): DeepSeek-V2's
// mscale_all_dim 0.707 comes back as 0.707, where 10 · key in float32 is 0.70699996.
double shortest_tenfold(float key) {
  const double approx = static_cast<double>(key) / 0.1;
  for (int digits = 1; digits <= 17 && std::isfinite(approx); ++digits) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, approx, std::chars_format::general, digits);
    const double x = read_decimal(buf, r.ptr);
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
    const double x = read_decimal(buf, r.ptr);
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

}  // namespace

json hf::field_json(const Value& v, std::string_view arch, std::string_view updated) {
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

namespace {

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
}  // namespace

bool hf::is_positive(const json& j) {
  return j.is_number_unsigned() ? j.get<std::uint64_t>() > 0
                                : j.is_number_integer() && j.get<std::int64_t>() > 0;
}

namespace {

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

}  // namespace

// The value of key `key` (the first where a key repeats), or nullptr.
const Value* hf::find_key(const GgufFile& file, std::string_view key) {
  for (const KeyValue& kv : file.kv) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

namespace {

using hf::find_key;

using Fields = hf::ConfigFields;

// NemotronH's hybrid_override_pattern (hf_architectures.h, layer_pattern), one character a layer,
// as the Hub configs hold it and the converter reads it (nemotron.py, NemotronHModel.__init__):
// '*' attention where the layer has KV heads, 'E' experts where it has a feed-forward width and
// holds them, '-' the dense MLP where it has one without, 'M' the Mamba-2 mixer otherwise
// (GraniteHybridModel.set_gguf_parameters writes head_count_kv so,
// NemotronHModel.set_gguf_parameters feed_forward_length). Or why the file is not a model
// NemotronHForCausalLM runs as the converter's input did.
std::string hybrid_pattern(Fields& f) {
  // The dense form (general.architecture nemotron_h: nemotron.py, NemotronHModel.__init__, for a
  // config without num_experts_per_tok) has dense MLP layers ('-', the relu² NemotronHMLP); the
  // MoE form expert layers ('E') instead.
  const bool moe = f.arch == "nemotron_h_moe";
  auto per_layer = [&](std::string_view suffix) -> std::optional<std::vector<std::uint64_t>> {
    const Value* v = f.find_arch(suffix);
    const auto* a = v ? std::get_if<Array>(&v->data) : nullptr;
    if (!a || a->size() != f.layers) return std::nullopt;
    std::vector<std::uint64_t> out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const json e = scalar_json(a->at(i), f.arch, f.arch);
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
        printable(f.arch));
  }
  const std::uint64_t layers = f.layers;
  const std::vector<std::uint64_t> experts =
                                       hf::layers_holding(f.file, "ffn_up_exps.weight", layers),
                                   mixers = hf::layers_holding(f.file, "ssm_in.weight", layers),
                                   mlps = hf::layers_holding(f.file, "ffn_up.weight", layers);
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
  f.config[std::string(f.row.layer_pattern)] = pattern;
  return "";
}

}  // namespace

// gguf-py's READER_SUPPORTED_VERSIONS, its strict UTF-8 decode and its GGMLQuantizationType.
std::string hf::unreadable_file(const GgufFile& file) {
  if (file.version < 2) {
    return fmt::format("GGUF version {}: transformers' reader (gguf-py) reads 2 and 3",
                       file.version);
  }
  for (const KeyValue& kv : file.kv) {
    if (!is_utf8(kv.key)) {
      return fmt::format("key '{}' is not valid UTF-8", printable(valid_utf8(kv.key)));
    }
    if (const std::string why = unreadable(kv.value); !why.empty()) {
      return fmt::format("key '{}': value {}", printable(kv.key), why);
    }
  }
  for (const TensorInfo& t : file.tensors) {
    if (!is_utf8(t.name)) {
      return fmt::format("tensor name '{}' is not valid UTF-8", printable(valid_utf8(t.name)));
    }
    if (!gguf_py_knows_type(t.type)) {
      return fmt::format("tensor '{}': type id {} is unknown to gguf-py", printable(t.name),
                         t.type);
    }
  }
  return "";
}

namespace {

using hf::unreadable_file;

// A llama whose general.name is exactly "mistral" (read_field gives a list, and `in` tests its
// elements) is a mistral, as transformers' import takes it (load_gguf_checkpoint,
// updated_architecture).
bool named_mistral(const Value* name) {
  if (!name) return false;
  if (const auto* s = std::get_if<std::string>(&name->data)) return *s == "mistral";
  bool named = false;
  if (const auto* a = std::get_if<Array>(&name->data); a && a->elem_type() == ValueType::kString) {
    for (std::size_t i = 0; i < a->size(); ++i) named |= a->string_at(i) == "mistral";
  }
  return named;
}

// The row of general.architecture `arch` (or of transformers' own model_type for it,
// "qwen3_moe") before its tensors are seen: the first whose required key the file has
// (Mixtral's expert_count), else the one that requires none (hf_architectures.h, required_key).
template <typename Find>
const hf::Architecture* row_of_keys(const std::string& arch, const Find& find) {
  const hf::Architecture* row = nullptr;
  for (const hf::Architecture& a : hf::architectures()) {
    if (a.gguf_arch != arch) continue;
    if (a.required_key.empty()) {
      if (!row) row = &a;
    } else if (find(fmt::format("{}.{}", arch, a.required_key))) {
      return &a;
    }
  }
  // By model_type too ("qwen3_moe"), but not a row the converter writes under another row's
  // name (mixtral is only ever a llama with experts).
  if (!row) {
    row = hf::find_architecture(arch);
    if (row && !row->required_key.empty()) row = nullptr;
  }
  if (row && row->model_type == "llama" && named_mistral(find("general.name"))) {
    row = hf::find_architecture("mistral");
  }
  return row;
}

// The first of the row's refusals (hf_architectures.h, Refusal) the file meets, else "".
template <typename Find>
std::string refused(const hf::Architecture& row, const GgufFile& file, const std::string& arch,
                    const Find& find) {
  for (const hf::Refusal& r : row.refusals) {
    const Value* v = r.when == hf::RefuseWhen::kTensorAbsent
                         ? nullptr
                         : find(fmt::format("{}.{}", arch, r.name));
    const auto* on = v ? std::get_if<bool>(&v->data) : nullptr;
    bool absent = r.when == hf::RefuseWhen::kTensorAbsent;
    for (const TensorInfo& t : file.tensors) absent &= t.name != r.name;
    if (r.when == hf::RefuseWhen::kKeyTrue && on && *on) {
      return fmt::format("{}.{} is true: {}", printable(arch), r.name, r.why);
    }
    if (r.when == hf::RefuseWhen::kKeyFalse && on && !*on) {
      return fmt::format("{}.{} is false: {}", printable(arch), r.name, r.why);
    }
    if (r.when == hf::RefuseWhen::kKeyPresent && v) {
      return fmt::format("{}.{}: {}", printable(arch), r.name, r.why);
    }
    if (absent) return fmt::format("no {}: {}", r.name, r.why);
  }
  return "";
}

// The row a file is proven to be (its keys, then its layer tensors: with_layer_tensors), into
// `row`, or why it has none.
std::string choose_row(const GgufFile& file, std::string& arch, const hf::Architecture*& row) {
  auto find = [&](std::string_view key) { return find_key(file, key); };
  // architecture = read_field(reader, "general.architecture")[0].
  const Value* arch_value = find("general.architecture");
  if (!arch_value) return "no general.architecture";
  const auto* arch_string = std::get_if<std::string>(&arch_value->data);
  if (!arch_string) return "general.architecture is not a string";
  arch = *arch_string;
  if (arch.empty()) return "general.architecture is empty";
  row = row_of_keys(arch, find);
  const hf::RowChoice proven = hf::with_layer_tensors(row, file);
  if (row && !proven.row) return proven.reason;
  row = proven.row;
  if (!row) {
    return fmt::format(
        "general.architecture '{}' is not one ggufs renders a transformers config for",
        printable(arch));
  }
  return refused(*row, file, arch, find);
}

// The fields the tensors show: stablelm's qkv bias and parallel residual (substring tests of
// the names, as transformers' import makes them), tie_word_embeddings (unless a tensor is named
// exactly output.weight), the row's tensor flags.
void tensor_fields(Fields& f) {
  const std::vector<TensorInfo>& tensors = f.file.tensors;
  if (contains(f.arch, "stablelm")) {
    bool qkv_bias = false, ffn_norm = false;
    for (const TensorInfo& t : tensors) {
      qkv_bias |= contains(t.name, "attn_q.bias") || contains(t.name, "attn_k.bias") ||
                  contains(t.name, "attn_v.bias");
      ffn_norm |= contains(t.name, "ffn_norm");
    }
    f.config["use_qkv_bias"] = qkv_bias;
    f.config["use_parallel_residual"] = !ffn_norm;
  }
  bool has_output = false;
  for (const TensorInfo& t : tensors) has_output |= t.name == "output.weight";
  f.config["tie_word_embeddings"] = !has_output;
  for (const hf::TensorFlag& flag : f.row.tensor_flags) {
    bool present = false;
    for (const TensorInfo& t : tensors) {
      const auto layer = hf::layer_of(t.name, "blk.");
      present |= layer && layer->second == flag.gguf;
    }
    f.config[std::string(flag.config)] = present;
  }
}

// A kLayerMax or kLayerMin field's per-layer list to its largest or smallest element.
std::string layer_extreme(json& v, hf::ValueKind kind, std::string_view key) {
  if (!v.is_array()) return "";
  const bool max = kind == hf::ValueKind::kLayerMax;
  json chosen = max ? json(0) : json();
  for (const json& e : v) {
    if (!is_non_negative(e))
      return fmt::format("{} holds a value that is no count", printable(key));
    const auto n = e.get<std::uint64_t>();
    if (chosen.is_null() ||
        (max ? n > chosen.get<std::uint64_t>() : n < chosen.get<std::uint64_t>())) {
      chosen = e;
    }
  }
  if (chosen.is_null()) return fmt::format("{} is an empty list", printable(key));
  v = chosen;
  return "";
}

// A kTenth or kNormalCdf field's value back to the original's (shortest_tenfold,
// shortest_normal_cdf).
std::string undo_float_transform(json& v, hf::ValueKind kind, std::string_view key) {
  if (kind == hf::ValueKind::kTenth) {
    if (!v.is_number() || !all_finite(v) ||
        std::fabs(v.get<double>()) > std::numeric_limits<float>::max()) {
      return fmt::format("{} is not a finite float32", printable(key));
    }
    v = shortest_tenfold(static_cast<float>(v.get<double>()));
    return "";
  }
  // field_json gave each float32 element as its shortest decimal: read back exactly.
  if (!v.is_array()) v = json::array({v});
  for (json& e : v) {
    // A float64 array's element may lie past float32's range (its cast undefined).
    const double x = e.is_number_float() ? e.get<double>() : std::nan("");
    if (std::isnan(x) || (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())) {
      return fmt::format("{} holds a value that is no float32", printable(key));
    }
    e = shortest_normal_cdf(static_cast<float>(x));
  }
  return "";
}

// Config field k.config from key `kv`, as load_gguf_checkpoint reads it, then as the row's
// ValueKind says the converter wrote it.
std::string set_field(Fields& f, const hf::ConfigKey& k, const KeyValue& kv) {
  // A config field that is a list is one value per layer at most: a longer one is hostile, and
  // held as json values it would cost 16 bytes and more per element.
  const auto* list = std::get_if<Array>(&kv.value.data);
  if (list && list->size() > kMaxConfigListElements) {
    return fmt::format("{} has {} elements, more than the {} accepted", printable(kv.key),
                       list->size(), kMaxConfigListElements);
  }
  const std::string config_key(k.config);
  json& v = f.config[config_key] = field_json(kv.value, f.arch, f.updated);
  using hf::ValueKind;
  std::string why;
  if (k.kind == ValueKind::kLayerMax || k.kind == ValueKind::kLayerMin) {
    why = layer_extreme(v, k.kind, kv.key);
  } else if (k.kind == ValueKind::kTenth || k.kind == ValueKind::kNormalCdf) {
    why = undo_float_transform(v, k.kind, kv.key);
  }
  f.source[config_key] = kv.key;
  f.kinds[config_key] = k.kind;
  return why;
}

// Every key in file order: the row's keys under "<general.architecture>.", general.name and the
// tokenizer's special token ids; a later key overwrites an earlier one. `tokens_len` gets
// len(tokenizer.ggml.tokens) for the vocab_size fallback (outer: present; inner: has a len()).
std::string key_fields(Fields& f, std::optional<std::optional<std::size_t>>& tokens_len) {
  using hf::ValueKind;
  constexpr hf::ConfigKey kCommon[] = {
      {"general.name", "_model_name_or_path", ValueKind::kAny},
      {"tokenizer.ggml.bos_token_id", "bos_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.eos_token_id", "eos_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.unknown_token_id", "unk_token_id", ValueKind::kTokenId},
      {"tokenizer.ggml.padding_token_id", "pad_token_id", ValueKind::kTokenId}};
  const std::string& arch = f.arch;
  for (const KeyValue& kv : f.file.kv) {
    const std::string_view key = kv.key;
    if (key == "tokenizer.ggml.tokens") tokens_len = python_len(kv.value, arch, f.updated);
    for (const hf::ConfigKey& c : kCommon) {
      if (key != c.gguf) continue;
      if (std::string why = set_field(f, c, kv); !why.empty()) return why;
    }
    if (key.size() <= arch.size() || !key.starts_with(arch) || key[arch.size()] != '.') continue;
    const std::string_view suffix = key.substr(arch.size() + 1);
    for (const hf::ConfigKey& k : f.row.keys) {
      if (k.gguf != suffix) continue;
      if (std::string why = set_field(f, k, kv); !why.empty()) return why;
    }
  }
  return "";
}

// The row's constants (where no key set the field), rope_scaling, and vocab_size: the mapped
// key, else len(tokens) (a one-token list is its string: its length).
std::string constant_fields(Fields& f,
                            const std::optional<std::optional<std::size_t>>& tokens_len) {
  for (const hf::ConfigConstant& c : f.row.constants) {
    if (!f.source.contains(std::string(c.config)))
      f.config[std::string(c.config)] = json::parse(c.json);
  }
  if (std::string why = add_rope_scaling(f.config, f.arch, f.finder()); !why.empty()) return why;
  if (f.config.contains("vocab_size")) return "";
  if (!tokens_len) {
    return fmt::format("no {}.vocab_size and no tokenizer.ggml.tokens", printable(f.arch));
  }
  if (!*tokens_len) return "tokenizer.ggml.tokens is not a list of strings";
  f.config["vocab_size"] = **tokens_len;
  f.source["vocab_size"] = "tokenizer.ggml.tokens";
  f.kinds["vocab_size"] = hf::ValueKind::kCount;
  return "";
}

// The structural values llama.cpp needs too, under the architecture's own keys: present and
// positive.
std::string required_fields(Fields& f) {
  constexpr std::string_view kRequired[] = {"block_count", "embedding_length",
                                            "attention.head_count", "context_length"};
  for (const std::string_view suffix : kRequired) {
    for (const hf::ConfigKey& k : f.row.keys) {
      if (k.gguf != suffix) continue;
      const std::string ck(k.config);
      if (!f.config.contains(ck)) return fmt::format("no {}.{}", printable(f.arch), suffix);
      if (!is_positive(f.config[ck])) {
        return fmt::format("{} is not a positive integer", printable(f.source[ck]));
      }
    }
  }
  if (!is_positive(f.config["vocab_size"])) {
    return fmt::format("{}: vocab size is not a positive integer",
                       printable(f.source["vocab_size"]));
  }
  return "";
}

// Whether `value` is what a field of `kind` must hold (hf_architectures.h, ValueKind): what is
// wrong with it ("is not a non-negative integer"), else "".
std::string_view wrong_kind(const json& value, hf::ValueKind kind) {
  using hf::ValueKind;
  switch (kind) {
    case ValueKind::kAny:
      return "";
    case ValueKind::kCount:
    case ValueKind::kRotaryFraction:
    case ValueKind::kLayerMax:
    case ValueKind::kQuotient:
    case ValueKind::kLayerMin:
    case ValueKind::kDifference:
      return is_non_negative(value) ? "" : "is not a non-negative integer";
    case ValueKind::kNumber:
    case ValueKind::kTenth:
      return value.is_number() ? "" : "is not a number";
    case ValueKind::kLayerCounts:
    case ValueKind::kNormalCdf:
      // A list of one value a layer (checked in layer_fields), or one value for all.
      for (const json& e : value.is_array() ? value : json::array({value})) {
        if (kind == ValueKind::kLayerCounts ? !is_non_negative(e) : !e.is_number()) {
          return kind == ValueKind::kLayerCounts ? "holds a value that is no count"
                                                 : "holds a value that is no number";
        }
      }
      return "";
    case ValueKind::kTokenId:
      return is_integer(value) ? "" : "is not an integer";
  }
  return "";
}

// Each field set from a key holds what its kind says, and is finite.
std::string checked_kinds(Fields& f) {
  for (const auto& [ck, value] : f.config.items()) {
    const auto it = f.source.find(ck);
    if (it == f.source.end()) continue;  // set here, not from a key
    const std::string key = printable(it->second);
    if (!all_finite(value)) return fmt::format("{} is not finite", key);
    if (const std::string_view wrong = wrong_kind(value, f.kinds[ck]); !wrong.empty()) {
      return fmt::format("{} {}", key, wrong);
    }
  }
  return "";
}

// The model's layers (Fields::layers): block_count less the layers the converter appended
// (hf_architectures.h, appended_layers), no more than a per-layer list may hold
// (kMaxConfigListElements), so that the lists built a layer at a time (layer_types, the patterns)
// cost a bounded multiple of it whatever the key says; and each per-layer list one value a layer.
std::string layer_count(Fields& f) {
  std::string blocks, extra;
  for (const hf::ConfigKey& k : f.row.keys) {
    if (k.gguf == "block_count") blocks = k.config;
    if (!f.row.appended_layers.empty() && k.gguf == f.row.appended_layers) extra = k.config;
  }
  if (!extra.empty() && f.config.contains(extra)) {
    const auto n = f.config[blocks].get<std::uint64_t>(), e = f.config[extra].get<std::uint64_t>();
    if (e >= n) {
      return fmt::format("{} leaves no layer of {}", printable(f.source[extra]),
                         printable(f.source[blocks]));
    }
    f.config[blocks] = n - e;
  }
  for (const hf::ConfigKey& k : f.row.keys) {
    if (k.gguf != "block_count" && k.gguf != "decoder_block_count") continue;
    const std::string ck(k.config);
    if (!f.config.contains(ck)) continue;
    const auto n = f.config[ck].get<std::uint64_t>();
    if (n > kMaxConfigListElements) {
      return fmt::format("{} is {}, more than the {} layers accepted", printable(f.source[ck]), n,
                         kMaxConfigListElements);
    }
    if (k.gguf == "block_count") f.layers = n;
  }
  for (const hf::ConfigKey& k : f.row.keys) {
    const auto it = f.config.find(std::string(k.config));
    if ((k.kind == hf::ValueKind::kLayerCounts || k.kind == hf::ValueKind::kNormalCdf) &&
        it != f.config.end() && it->is_array() && it->size() != f.layers) {
      return fmt::format("{} has {} elements for {} layers",
                         printable(f.source[std::string(k.config)]), it->size(), f.layers);
    }
  }
  return "";
}

// Counts a layer tensor's shape holds (hf_architectures.h, TensorDim).
std::string tensor_dim_fields(Fields& f) {
  for (const hf::TensorDim& td : f.row.tensor_dims) {
    const std::vector<std::uint64_t> holding = hf::layers_holding(f.file, td.tensor, f.layers);
    if (holding.empty()) continue;
    const std::string name = fmt::format("blk.{}.{}", holding[0], td.tensor);
    for (const TensorInfo& t : f.file.tensors) {
      if (t.name != name) continue;
      if (td.axis >= t.n_dims || t.n_dims > 4) {
        return fmt::format("tensor '{}' has no axis {}", printable(name), td.axis);
      }
      f.config[std::string(td.config)] = t.ne[t.n_dims - 1 - td.axis];
    }
  }
  return "";
}

// The layers whose element of per-layer array `key` is true or non-zero, ascending, into `out`;
// an error text where `key` is no such array.
std::string nonzero_layers(const Fields& f, const std::string& key,
                           std::vector<std::uint64_t>& out) {
  const Value* v = f.find(key);
  const auto* a = v ? std::get_if<Array>(&v->data) : nullptr;
  if (!a || a->size() != f.layers) {
    return fmt::format("{} is not an array of one value per layer", printable(key));
  }
  for (std::uint64_t i = 0; i < f.layers; ++i) {
    const json e = scalar_json(a->at(i), f.arch, f.updated);
    if (!e.is_boolean() && !is_non_negative(e)) {
      return fmt::format("{} holds a value that is no flag or count", printable(key));
    }
    if (e.is_boolean() ? e.get<bool>() : e != json(0)) out.push_back(i);
  }
  return "";
}

// layer_types (or the row's field) from the per-layer array, or the layers holding the row's
// tensor (hf_architectures.h, LayerTypes): one element a layer. Without the key every layer is
// `zero`.
std::string layer_types(Fields& f) {
  const hf::LayerTypes& lt = f.row.layer_types;
  if (lt.empty()) return "";
  std::vector<std::uint64_t> set;
  if (lt.gguf.empty()) {
    set = hf::layers_holding(f.file, lt.tensor, f.layers);
  } else if (const std::string key = fmt::format("{}.{}", f.arch, lt.gguf); f.find(key)) {
    if (std::string why = nonzero_layers(f, key, set); !why.empty()) return why;
  }
  json types = json::array();
  for (std::uint64_t i = 0, next = 0; i < f.layers; ++i) {
    const bool on = next < set.size() && set[next] == i;
    next += on;
    types.push_back(on ? lt.nonzero : lt.zero);
  }
  f.config[std::string(lt.field)] = std::move(types);
  return "";
}

// Offsets and periods from the layers that have a part (hf_architectures.h, LayerPeriod).
std::string layer_periods(Fields& f) {
  for (const hf::LayerPeriod& p : f.row.layer_periods) {
    std::vector<std::uint64_t> having;
    std::string what;
    if (!p.gguf.empty()) {
      const std::string key = fmt::format("{}.{}", f.arch, p.gguf);
      what = printable(key);
      if (std::string why = nonzero_layers(f, key, having); !why.empty()) return why;
    } else {
      what = fmt::format("the layers holding {}", p.tensor);
      having = hf::layers_holding(f.file, p.tensor, f.layers);
    }
    const auto pattern = offset_and_period(having, f.layers);
    if (!pattern) {
      return fmt::format(
          "{}: its {} of {} layers are not those of one {} below one {} (layer % period == "
          "offset)",
          what, having.size(), f.layers, p.offset, p.period);
    }
    f.config[std::string(p.offset)] = pattern->first;
    f.config[std::string(p.period)] = pattern->second;
  }
  return "";
}

// The row's quirks of stage `stage` (hf_architectures.h, ConfigQuirk), in order: the first
// one's refusal, else "".
std::string run_quirks(Fields& f, hf::QuirkStage stage) {
  for (const hf::ConfigQuirk& q : f.row.quirks) {
    if (q.stage != stage) continue;
    if (std::string why = q.run(f); !why.empty()) return why;
  }
  return "";
}

// The per-layer fields: layer_types, the layer pattern, offsets and periods, and the row's
// per-layer quirks.
std::string layer_fields(Fields& f) {
  if (std::string why = tensor_dim_fields(f); !why.empty()) return why;
  if (std::string why = layer_types(f); !why.empty()) return why;
  if (!f.row.layer_pattern.empty()) {
    if (std::string why = hybrid_pattern(f); !why.empty()) return why;
  }
  if (std::string why = layer_periods(f); !why.empty()) return why;
  return run_quirks(f, hf::QuirkStage::kLayerFields);
}

}  // namespace

// Config field `field` where it holds a count (checked_kinds), else 0.
std::uint64_t hf::count_field(const json& config, const std::string& field) {
  const auto it = config.find(field);
  return it != config.end() && is_non_negative(*it) ? it->get<std::uint64_t>() : 0;
}

std::string hf::field_for(const hf::Architecture& row, std::string_view gguf) {
  for (const hf::ConfigKey& k : row.keys) {
    if (k.gguf == gguf) return std::string(k.config);
  }
  return "";
}

namespace {

// Rotary dimensions per head back to the fraction of hidden / heads they are (kRotaryFraction),
// a product back to its factor (kQuotient: over config field `over`, an integer where it
// divides, as the original's expand and head_dim are), a sum back to its term (kDifference).
std::string factor_fields(Fields& f) {
  json& config = f.config;
  for (const hf::ConfigKey& k : f.row.keys) {
    const std::string ck(k.config), over(k.over);
    if (!config.contains(ck)) continue;
    if (k.kind == hf::ValueKind::kRotaryFraction) {
      const std::uint64_t hidden = count_field(config, field_for(f.row, "embedding_length")),
                          heads = count_field(config, field_for(f.row, "attention.head_count"));
      if (heads == 0 || hidden / heads == 0) {
        return fmt::format("{}: no head size to take it as a fraction of", printable(f.source[ck]));
      }
      config[ck] = static_cast<double>(config[ck].get<std::uint64_t>()) /
                   static_cast<double>(hidden / heads);
    }
    if (k.kind == hf::ValueKind::kQuotient) {
      if (!config.contains(over) || !is_positive(config[over])) {
        return fmt::format("{}: no positive {} to divide it by", printable(f.source[ck]), over);
      }
      const auto n = config[ck].get<std::uint64_t>(), d = config[over].get<std::uint64_t>();
      config[ck] = n % d == 0 ? json(n / d) : json(static_cast<double>(n) / static_cast<double>(d));
    }
  }
  for (const hf::ConfigKey& k : f.row.keys) {  // after every quotient: `over` may be one
    const std::string ck(k.config), over(k.over);
    if (k.kind != hf::ValueKind::kDifference || !config.contains(ck)) continue;
    const auto n = config[ck].get<std::uint64_t>();
    if (!config.contains(over) || !is_non_negative(config[over]) ||
        config[over].get<std::uint64_t>() > n) {
      return fmt::format("{}: no {} at most it to take from it", printable(f.source[ck]), over);
    }
    config[ck] = n - config[over].get<std::uint64_t>();
  }
  return "";
}

// A special token id the file does not hold: llama.cpp's converter writes the original's
// (gguf-py's vocab.py, SpecialVocab: its tokenizer's, else its config.json's *_token_id, one
// inside the vocabulary), so the original had none. The class default (transformers'
// configuration_<model>.py) would name a token all the same: Phi3Config's pad 32000 past a
// smaller vocabulary, which from_pretrained refuses (nn.Embedding's padding_idx), CohereConfig's
// pad 0, which generate masks out of a prompt (_prepare_attention_mask_for_generation). null
// overrides it. Then the row's token-id quirks (kTokenIds), and generation_config.json: the
// config's token ids that are not None; GenerationConfig's own defaults for them are None.
std::string token_ids_and_generation(Fields& f, json& generation) {
  json& config = f.config;
  const hf::ClassDefaults& d = f.row.defaults;
  const std::pair<const char*, std::int64_t> ids[] = {{"bos_token_id", d.bos},
                                                      {"eos_token_id", d.eos},
                                                      {"pad_token_id", d.pad},
                                                      {"decoder_start_token_id", -1}};
  for (const auto& [name, class_default] : ids) {
    if (!config.contains(name) && class_default >= 0) config[name] = nullptr;
  }
  if (std::string why = run_quirks(f, hf::QuirkStage::kTokenIds); !why.empty()) return why;
  generation = json::object();
  generation["_from_model_config"] = true;
  for (const auto& [name, class_default] : ids) {
    if (config.contains(name) && !config[name].is_null()) generation[name] = config[name];
  }
  return "";
}

// mlx/'s config (HfConfig::mlx_config_json): hf/'s and the fields mlx-lm requires.
json mlx_config(const hf::Architecture& row, json config) {
  for (const hf::ConfigConstant& c : row.mlx.defaults) {
    if (!config.contains(c.config)) config[c.config] = json::parse(c.json);
  }
  for (const auto& [mlx_name, name] : row.mlx.renamed) {
    if (config.contains(name) && !config.contains(mlx_name)) config[mlx_name] = config[name];
  }
  if (row.mlx.window_pattern) {
    json pattern = nullptr;
    if (config.contains("layer_types") && config["layer_types"].is_array() &&
        config.contains("sliding_window") && !config["sliding_window"].is_null()) {
      std::string p;
      for (const json& t : config["layer_types"]) p += t == "sliding_attention" ? 'L' : 'G';
      pattern = p;
    }
    config["sliding_window_pattern"] = std::move(pattern);
  }
  const json* hidden = config.contains("hidden_size") ? &config["hidden_size"] : nullptr;
  const json* heads =
      config.contains("num_attention_heads") ? &config["num_attention_heads"] : nullptr;
  if (!config.contains("head_dim") && hidden && heads && hidden->is_number_unsigned() &&
      heads->is_number_unsigned() && heads->get<std::uint64_t>() != 0 &&
      hidden->get<std::uint64_t>() % heads->get<std::uint64_t>() == 0) {
    config["head_dim"] = hidden->get<std::uint64_t>() / heads->get<std::uint64_t>();
  }
  return config;
}

}  // namespace

namespace hf {

HfConfig config_of(const Plan& plan, std::string_view dtype) {
  json config = plan.config, generation = plan.generation;
  generation["transformers_version"] = kTransformersVersion;
  config["transformers_version"] = kTransformersVersion;
  if (!dtype.empty()) config["dtype"] = dtype;
  HfConfig out;
  out.model_type = plan.row->model_type;
  out.torch_dtype = "float32";
  out.config_json = dump(config);
  out.generation_config_json = dump(generation);
  out.mlx_absent = plan.row->mlx.absent;
  if (out.mlx_absent.empty()) out.mlx_config_json = dump(mlx_config(*plan.row, std::move(config)));
  return out;
}

std::string plan_config(const GgufFile& file, Plan& plan) {
  if (std::string why = unreadable_file(file); !why.empty()) return why;
  if (std::string why = choose_row(file, plan.arch, plan.row); !why.empty()) return why;
  // load_gguf_checkpoint replaces the architecture's name by its updated one in every string
  // value (general.name "qwen3moe tiny" becomes "qwen3_moe tiny"); gemma3 is renamed to
  // gemma3_text only after.
  const std::string updated(plan.row->model_type == "gemma3_text" ? "gemma3"
                                                                  : plan.row->model_type);
  plan.config = json::object();
  Fields f{file, *plan.row, plan.arch, updated, plan.config, {}, {}};
  tensor_fields(f);
  std::optional<std::optional<std::size_t>> tokens_len;
  if (std::string why = key_fields(f, tokens_len); !why.empty()) return why;
  f.config["model_type"] = f.row.model_type;
  if (std::string why = run_quirks(f, QuirkStage::kAfterKeys); !why.empty()) return why;
  if (std::string why = constant_fields(f, tokens_len); !why.empty()) return why;
  for (auto step : {required_fields, checked_kinds, layer_count, layer_fields, factor_fields}) {
    if (std::string why = step(f); !why.empty()) return why;
  }
  if (std::string why = run_quirks(f, QuirkStage::kChecks); !why.empty()) return why;
  // save_pretrained writes the model's class (transformers' own import writes none).
  f.config["architectures"] = json::array({std::string(f.row.class_name)});
  return token_ids_and_generation(f, plan.generation);
}

}  // namespace hf

HfConfigResult render_hf_config(const GgufFile& file, std::string_view dtype) {
  hf::PlanResult planned = hf::plan_model(file);
  if (!planned.plan) return no_config(std::move(planned.reason));
  return {hf::config_of(*planned.plan, dtype), ""};
}

}  // namespace ggufs
