// config.json and generation_config.json of a GGUF model as transformers 4.57.6's GGUF import
// builds them. Facts restated from transformers 4.57.6: modeling_gguf_pytorch_utils.py
// (load_gguf_checkpoint), integrations/ggml.py (GGUF_CONFIG_MAPPING, GGUF_TOKENIZER_MAPPING,
// _gguf_parse_value), configuration_utils.py (PretrainedConfig), generation/configuration_utils.py
// (GenerationConfig.from_model_config) and gguf-py 0.19.0's gguf_reader.py (GGUFReader).
#include "ggufs/hf_config.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "ggufs/names.h"

namespace ggufs {
namespace {

using nlohmann::json;

constexpr std::string_view kTransformersVersion = "4.57.6";

struct MappingRow {
  std::string_view prefix;      // first dot-separated part of the GGUF key
  std::string_view suffix;      // the rest of the key
  std::string_view config_key;  // the config.json key it becomes
};

// GGUF_CONFIG_MAPPING of transformers 4.57.6, integrations/ggml.py, every architecture (its
// import applies every prefix to every file, so a foreign prefix's key lands in the config
// too). Entries that map to None set nothing and are left out.
constexpr MappingRow kConfigMapping[] = {
    {"general", "architecture", "model_type"},
    {"general", "name", "_model_name_or_path"},
    {"llama", "context_length", "max_position_embeddings"},
    {"llama", "block_count", "num_hidden_layers"},
    {"llama", "feed_forward_length", "intermediate_size"},
    {"llama", "embedding_length", "hidden_size"},
    {"llama", "rope.dimension_count", "head_dim"},
    {"llama", "rope.freq_base", "rope_theta"},
    {"llama", "attention.head_count", "num_attention_heads"},
    {"llama", "attention.head_count_kv", "num_key_value_heads"},
    {"llama", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"llama", "vocab_size", "vocab_size"},
    {"mistral", "context_length", "max_position_embeddings"},
    {"mistral", "block_count", "num_hidden_layers"},
    {"mistral", "feed_forward_length", "intermediate_size"},
    {"mistral", "embedding_length", "hidden_size"},
    {"mistral", "rope.dimension_count", "head_dim"},
    {"mistral", "rope.freq_base", "rope_theta"},
    {"mistral", "attention.head_count", "num_attention_heads"},
    {"mistral", "attention.head_count_kv", "num_key_value_heads"},
    {"mistral", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"mistral", "vocab_size", "vocab_size"},
    {"qwen2", "context_length", "max_position_embeddings"},
    {"qwen2", "block_count", "num_hidden_layers"},
    {"qwen2", "feed_forward_length", "intermediate_size"},
    {"qwen2", "embedding_length", "hidden_size"},
    {"qwen2", "rope.freq_base", "rope_theta"},
    {"qwen2", "attention.head_count", "num_attention_heads"},
    {"qwen2", "attention.head_count_kv", "num_key_value_heads"},
    {"qwen2", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"qwen2", "vocab_size", "vocab_size"},
    {"qwen2moe", "context_length", "max_position_embeddings"},
    {"qwen2moe", "block_count", "num_hidden_layers"},
    {"qwen2moe", "feed_forward_length", "intermediate_size"},
    {"qwen2moe", "embedding_length", "hidden_size"},
    {"qwen2moe", "rope.freq_base", "rope_theta"},
    {"qwen2moe", "attention.head_count", "num_attention_heads"},
    {"qwen2moe", "attention.head_count_kv", "num_key_value_heads"},
    {"qwen2moe", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"qwen2moe", "vocab_size", "vocab_size"},
    {"qwen2moe", "expert_count", "num_experts"},
    {"qwen2moe", "expert_used_count", "num_experts_per_tok"},
    {"lfm2", "context_length", "max_position_embeddings"},
    {"lfm2", "block_count", "num_hidden_layers"},
    {"lfm2", "feed_forward_length", "intermediate_size"},
    {"lfm2", "embedding_length", "hidden_size"},
    {"lfm2", "rope.freq_base", "rope_theta"},
    {"lfm2", "attention.head_count", "num_attention_heads"},
    {"lfm2", "attention.head_count_kv", "num_key_value_heads"},
    {"lfm2", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"lfm2", "vocab_size", "vocab_size"},
    {"lfm2", "shortconv.l_cache", "conv_L_cache"},
    {"qwen3", "context_length", "max_position_embeddings"},
    {"qwen3", "block_count", "num_hidden_layers"},
    {"qwen3", "feed_forward_length", "intermediate_size"},
    {"qwen3", "embedding_length", "hidden_size"},
    {"qwen3", "rope.freq_base", "rope_theta"},
    {"qwen3", "attention.head_count", "num_attention_heads"},
    {"qwen3", "attention.head_count_kv", "num_key_value_heads"},
    {"qwen3", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"qwen3", "vocab_size", "vocab_size"},
    {"qwen3_moe", "context_length", "max_position_embeddings"},
    {"qwen3_moe", "block_count", "num_hidden_layers"},
    {"qwen3_moe", "feed_forward_length", "intermediate_size"},
    {"qwen3_moe", "embedding_length", "hidden_size"},
    {"qwen3_moe", "rope.freq_base", "rope_theta"},
    {"qwen3_moe", "attention.key_length", "head_dim"},
    {"qwen3_moe", "attention.head_count", "num_attention_heads"},
    {"qwen3_moe", "attention.head_count_kv", "num_key_value_heads"},
    {"qwen3_moe", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"qwen3_moe", "vocab_size", "vocab_size"},
    {"qwen3_moe", "expert_count", "num_experts"},
    {"qwen3_moe", "expert_used_count", "num_experts_per_tok"},
    {"falcon", "context_length", "max_position_embeddings"},
    {"falcon", "block_count", "num_hidden_layers"},
    {"falcon", "feed_forward_length", "intermediate_size"},
    {"falcon", "embedding_length", "hidden_size"},
    {"falcon", "rope.freq_base", "rope_theta"},
    {"falcon", "attention.head_count", "num_attention_heads"},
    {"falcon", "attention.head_count_kv", "num_key_value_heads"},
    {"falcon", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"falcon", "vocab_size", "vocab_size"},
    {"tokenizer", "ggml.bos_token_id", "bos_token_id"},
    {"tokenizer", "ggml.eos_token_id", "eos_token_id"},
    {"tokenizer", "ggml.unknown_token_id", "unk_token_id"},
    {"tokenizer", "ggml.padding_token_id", "pad_token_id"},
    {"phi3", "context_length", "max_position_embeddings"},
    {"phi3", "block_count", "num_hidden_layers"},
    {"phi3", "feed_forward_length", "intermediate_size"},
    {"phi3", "embedding_length", "hidden_size"},
    {"phi3", "rope.freq_base", "rope_theta"},
    {"phi3", "attention.head_count", "num_attention_heads"},
    {"phi3", "attention.head_count_kv", "num_key_value_heads"},
    {"phi3", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"phi3", "vocab_size", "vocab_size"},
    {"bloom", "block_count", "n_layer"},
    {"bloom", "embedding_length", "hidden_size"},
    {"bloom", "attention.head_count", "n_head"},
    {"bloom", "vocab_size", "vocab_size"},
    {"bloom", "attention.layer_norm_epsilon", "layer_norm_epsilon"},
    {"t5", "context_length", "n_positions"},
    {"t5", "block_count", "num_layers"},
    {"t5", "feed_forward_length", "d_ff"},
    {"t5", "embedding_length", "d_model"},
    {"t5", "attention.key_length", "d_kv"},
    {"t5", "attention.head_count", "num_heads"},
    {"t5", "attention.head_count_kv", "num_key_value_heads"},
    {"t5", "attention.layer_norm_epsilon", "layer_norm_epsilon"},
    {"t5", "attention.relative_buckets_count", "relative_attention_num_buckets"},
    {"t5", "decoder_start_token_id", "decoder_start_token_id"},
    {"t5", "vocab_size", "vocab_size"},
    {"stablelm", "context_length", "max_position_embeddings"},
    {"stablelm", "block_count", "num_hidden_layers"},
    {"stablelm", "feed_forward_length", "intermediate_size"},
    {"stablelm", "embedding_length", "hidden_size"},
    {"stablelm", "attention.head_count", "num_attention_heads"},
    {"stablelm", "attention.head_count_kv", "num_key_value_heads"},
    {"stablelm", "attention.layer_norm_epsilon", "layer_norm_eps"},
    {"stablelm", "vocab_size", "vocab_size"},
    {"gpt2", "block_count", "n_layer"},
    {"gpt2", "context_length", "n_ctx"},
    {"gpt2", "embedding_length", "n_embd"},
    {"gpt2", "feed_forward_length", "feed_forward_length"},
    {"gpt2", "attention.head_count", "n_head"},
    {"gpt2", "attention.layer_norm_epsilon", "layer_norm_epsilon"},
    {"starcoder2", "block_count", "num_hidden_layers"},
    {"starcoder2", "context_length", "max_position_embeddings"},
    {"starcoder2", "embedding_length", "hidden_size"},
    {"starcoder2", "feed_forward_length", "intermediate_size"},
    {"starcoder2", "attention.head_count", "num_attention_heads"},
    {"starcoder2", "attention.head_count_kv", "num_key_value_heads"},
    {"starcoder2", "attention.layer_norm_epsilon", "norm_epsilon"},
    {"mamba", "vocab_size", "vocab_size"},
    {"mamba", "context_length", "max_position_embeddings"},
    {"mamba", "embedding_length", "hidden_size"},
    {"mamba", "attention.layer_norm_rms_epsilon", "layer_norm_epsilon"},
    {"mamba", "block_count", "num_hidden_layers"},
    {"mamba", "ssm.conv_kernel", "conv_kernel"},
    {"mamba", "ssm.state_size", "state_size"},
    {"mamba", "ssm.time_step_rank", "time_step_rank"},
    {"mamba", "ssm.inner_size", "intermediate_size"},
    {"nemotron", "context_length", "max_position_embeddings"},
    {"nemotron", "block_count", "num_hidden_layers"},
    {"nemotron", "feed_forward_length", "intermediate_size"},
    {"nemotron", "embedding_length", "hidden_size"},
    {"nemotron", "rope.freq_base", "rope_theta"},
    {"nemotron", "attention.head_count", "num_attention_heads"},
    {"nemotron", "attention.head_count_kv", "num_key_value_heads"},
    {"nemotron", "attention.layer_norm_rms_epsilon", "norm_eps"},
    {"nemotron", "vocab_size", "vocab_size"},
    {"gemma2", "context_length", "max_position_embeddings"},
    {"gemma2", "block_count", "num_hidden_layers"},
    {"gemma2", "feed_forward_length", "intermediate_size"},
    {"gemma2", "embedding_length", "hidden_size"},
    {"gemma2", "rope.freq_base", "rope_theta"},
    {"gemma2", "attention.key_length", "head_dim"},
    {"gemma2", "attention.head_count", "num_attention_heads"},
    {"gemma2", "attention.head_count_kv", "num_key_value_heads"},
    {"gemma2", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"gemma2", "attention.sliding_window", "sliding_window"},
    {"gemma2", "vocab_size", "vocab_size"},
    {"gemma3", "context_length", "max_position_embeddings"},
    {"gemma3", "block_count", "num_hidden_layers"},
    {"gemma3", "feed_forward_length", "intermediate_size"},
    {"gemma3", "embedding_length", "hidden_size"},
    {"gemma3", "rope.freq_base", "rope_theta"},
    {"gemma3", "attention.key_length", "head_dim"},
    {"gemma3", "attention.head_count", "num_attention_heads"},
    {"gemma3", "attention.head_count_kv", "num_key_value_heads"},
    {"gemma3", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"gemma3", "attention.sliding_window", "sliding_window"},
    {"gemma3", "vocab_size", "vocab_size"},
    {"umt5", "context_length", "n_positions"},
    {"umt5", "block_count", "num_layers"},
    {"umt5", "feed_forward_length", "d_ff"},
    {"umt5", "embedding_length", "d_model"},
    {"umt5", "attention.key_length", "d_kv"},
    {"umt5", "attention.head_count", "num_heads"},
    {"umt5", "attention.head_count_kv", "num_key_value_heads"},
    {"umt5", "attention.layer_norm_epsilon", "layer_norm_epsilon"},
    {"umt5", "attention.relative_buckets_count", "relative_attention_num_buckets"},
    {"umt5", "decoder_start_token_id", "decoder_start_token_id"},
    {"umt5", "vocab_size", "vocab_size"},
    {"deci", "context_length", "max_position_embeddings"},
    {"deci", "block_count", "num_hidden_layers"},
    {"deci", "feed_forward_length", "intermediate_size"},
    {"deci", "embedding_length", "hidden_size"},
    {"deci", "rope.freq_base", "rope_theta"},
    {"deci", "attention.head_count", "num_attention_heads"},
    {"deci", "attention.head_count_kv", "num_key_value_heads"},
    {"deci", "attention.layer_norm_rms_epsilon", "rms_norm_eps"},
    {"deci", "vocab_size", "vocab_size"},
};

// Keys llama.cpp's converter writes (conversion/base.py, TextModel.set_gguf_parameters) that
// transformers' import leaves out, 4.57.6 and 5.24.0 alike: without them the config takes the
// class default, which is not the original model's (Qwen3Config.head_dim 128,
// Qwen3MoeConfig.moe_intermediate_size 768), and the weights' shapes disagree with it. The
// original model wins (the round trip, tests/python/test_hf_roundtrip.py, checks it).
constexpr MappingRow kConverterMapping[] = {
    {"qwen3", "attention.key_length", "head_dim"},
    {"qwen3_moe", "expert_feed_forward_length", "moe_intermediate_size"},
    // Starcoder2Config.rope_theta defaults to 10000; StarCoder2 checkpoints use 100000 (base.py
    // writes rope.freq_base from rope_theta).
    {"starcoder2", "rope.freq_base", "rope_theta"},
    // phi.py, Phi3MiniModel.set_gguf_parameters: original_max_position_embeddings.
    {"phi3", "rope.scaling.original_context_length", "original_max_position_embeddings"},
    // gpt2.py writes context_length from n_ctx; GPT2Config's n_positions (the size of wpe) is
    // the same number in every GPT-2 checkpoint, and its default 1024 is not the file's.
    {"gpt2", "context_length", "n_positions"},
};

// The class each model_type names in config.json's "architectures" (save_pretrained writes the
// model's class there; transformers' import writes none). transformers' modeling_auto.py,
// MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.
struct ModelClass {
  std::string_view model_type;
  std::string_view class_name;
};
constexpr ModelClass kModelClasses[] = {
    {"llama", "LlamaForCausalLM"},
    {"mistral", "MistralForCausalLM"},
    {"qwen2", "Qwen2ForCausalLM"},
    {"qwen2_moe", "Qwen2MoeForCausalLM"},
    {"qwen3", "Qwen3ForCausalLM"},
    {"qwen3_moe", "Qwen3MoeForCausalLM"},
    {"gemma2", "Gemma2ForCausalLM"},
    {"gemma3_text", "Gemma3ForCausalLM"},
    {"phi3", "Phi3ForCausalLM"},
    {"gpt2", "GPT2LMHeadModel"},
    {"starcoder2", "Starcoder2ForCausalLM"},
    {"stablelm", "StableLmForCausalLM"},
};

// Fields the converter does not write, where the class default is not what the models of that
// architecture use: Qwen3MoeConfig.norm_topk_prob defaults to False, every Qwen3-MoE checkpoint
// (config.json of Qwen3-30B-A3B, Qwen3-235B-A22B) sets it True, as transformers 5.24.0's own
// GGUF import does (integrations/ggml.py).
struct NotCarried {
  std::string_view model_type;
  std::string_view config_key;
  bool value;
};
constexpr NotCarried kNotCarried[] = {{"qwen3_moe", "norm_topk_prob", true}};

// The architectures rendered here, by transformers' model_type before the gemma3 rename
// (load_gguf_checkpoint's updated_architecture).
constexpr std::string_view kFamilies[] = {"llama", "mistral",   "qwen2",      "qwen2_moe",
                                          "qwen3", "qwen3_moe", "gemma2",     "gemma3",
                                          "phi3",  "gpt2",      "starcoder2", "stablelm"};

// GGUF_SUPPORTED_ARCHITECTURES (modeling_gguf_pytorch_utils.py): the keys of
// GGUF_CONFIG_MAPPING; load_gguf_checkpoint accepts a file when its architecture or the updated
// one is among them.
constexpr std::string_view kSupported[] = {
    "general", "llama",     "mistral", "qwen2",  "qwen2moe", "lfm2",     "qwen3", "qwen3_moe",
    "falcon",  "tokenizer", "phi3",    "bloom",  "t5",       "stablelm", "gpt2",  "starcoder2",
    "mamba",   "nemotron",  "gemma2",  "gemma3", "umt5",     "deci"};

// Token ids of each config class's __init__ defaults (transformers 4.57.6,
// models/<model>/configuration_<model>.py): they reach generation_config.json through
// GenerationConfig.from_model_config when the GGUF has no such id. -1 stands for None.
struct TokenDefaults {
  std::string_view model_type;
  std::int64_t bos, eos, pad;
};
constexpr TokenDefaults kTokenDefaults[] = {
    {"llama", 1, 2, -1},
    {"mistral", 1, 2, -1},
    {"qwen2", -1, -1, -1},
    {"qwen2_moe", -1, -1, -1},
    {"qwen3", -1, -1, -1},
    {"qwen3_moe", -1, -1, -1},
    {"gemma2", 2, 1, 0},
    {"gemma3_text", 2, 1, 0},
    {"phi3", 1, 32000, 32000},
    {"gpt2", 50256, 50256, -1},
    {"starcoder2", 50256, 50256, -1},
    {"stablelm", 0, 0, -1},
};

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

enum class Kind { kAny, kCount, kNumber, kTokenId };

// What the config classes need of each mapped value (an integer count for dimensions, a number
// for epsilons and the rope base, an integer for token ids).
Kind kind_of(std::string_view config_key) {
  constexpr std::string_view kNumbers[] = {"rope_theta",         "rms_norm_eps", "layer_norm_eps",
                                           "layer_norm_epsilon", "norm_epsilon", "norm_eps"};
  constexpr std::string_view kTokens[] = {"bos_token_id", "eos_token_id", "unk_token_id",
                                          "pad_token_id", "decoder_start_token_id"};
  if (config_key == "_model_name_or_path" || config_key == "model_type") return Kind::kAny;
  for (const auto n : kNumbers) {
    if (config_key == n) return Kind::kNumber;
  }
  for (const auto t : kTokens) {
    if (config_key == t) return Kind::kTokenId;
  }
  return Kind::kCount;
}

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

HfConfigResult no_config(std::string reason) { return {std::nullopt, std::move(reason)}; }

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

  // updated_architecture: llama-named files whose general.name is exactly "mistral" (read_field
  // gives a list, and `in` tests its elements), the qwen MoE renames.
  bool named_mistral = false;
  if (const Value* name = find("general.name")) {
    if (const auto* s = std::get_if<std::string>(&name->data)) {
      named_mistral = *s == "mistral";
    } else if (const auto* a = std::get_if<Array>(&name->data);
               a && a->elem_type() == ValueType::kString) {
      for (std::size_t i = 0; i < a->size(); ++i) named_mistral |= a->string_at(i) == "mistral";
    }
  }
  std::string updated = arch;
  if (contains(arch, "llama") && named_mistral) {
    updated = "mistral";
  } else if (contains(arch, "t5")) {
    updated = "t5";  // t5 or umt5: not rendered here either way
  }
  if (contains(arch, "qwen2moe")) {
    updated = "qwen2_moe";
  } else if (contains(arch, "qwen3moe")) {
    updated = "qwen3_moe";
  }
  auto in = [](std::string_view s, const auto& list) {
    for (const auto e : list) {
      if (s == e) return true;
    }
    return false;
  };
  const bool transformers_accepts = in(arch, kSupported) || in(updated, kSupported);
  if (!transformers_accepts || !in(updated, kFamilies)) {
    return no_config(fmt::format(
        "general.architecture '{}' is not one ggufs renders a transformers config for{}",
        printable(arch), transformers_accepts ? "" : " (transformers 4.57.6 cannot import it)"));
  }

  json config = json::object();
  std::map<std::string, std::string> source;  // config key -> GGUF key that set it

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
  // Tied unless a tensor is named exactly output.weight (falcon and bloom, always tied, are not
  // rendered here).
  bool has_output = false;
  for (const TensorInfo& t : file.tensors) has_output |= t.name == "output.weight";
  config["tie_word_embeddings"] = !has_output;

  // Every key in file order, renamed (architecture -> updated) and split at its first dot, is
  // looked up in GGUF_CONFIG_MAPPING; a later key overwrites an earlier one. The tokens are
  // kept for the vocab_size fallback (GGUF_TOKENIZER_MAPPING["tokenizer"]["ggml.tokens"]).
  std::optional<std::optional<std::size_t>> tokens_len;  // outer: present; inner: has a len()
  std::vector<MappingRow> mapping_rows(std::begin(kConfigMapping), std::end(kConfigMapping));
  mapping_rows.insert(mapping_rows.end(), std::begin(kConverterMapping),
                      std::end(kConverterMapping));
  for (const KeyValue& kv : file.kv) {
    const std::string key = arch == updated ? kv.key : replace_all(kv.key, arch, updated);
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos) continue;
    const std::string_view prefix = std::string_view(key).substr(0, dot);
    const std::string_view suffix = std::string_view(key).substr(dot + 1);
    if (prefix == "tokenizer" && suffix == "ggml.tokens") {
      tokens_len = python_len(kv.value, arch, updated);
    }
    for (const MappingRow& row : mapping_rows) {
      if (row.prefix == prefix && row.suffix == suffix) {
        // A config field that is a list is one value per layer at most: a longer one is hostile,
        // and held as json values it would cost 16 bytes and more per element.
        const auto* list = std::get_if<Array>(&kv.value.data);
        if (list && list->size() > kMaxConfigListElements) {
          return no_config(fmt::format("{} has {} elements, more than the {} accepted",
                                       printable(kv.key), list->size(), kMaxConfigListElements));
        }
        config[std::string(row.config_key)] = field_json(kv.value, arch, updated);
        source[std::string(row.config_key)] = kv.key;
      }
    }
  }
  if (config["model_type"] == "gemma3") config["model_type"] = "gemma3_text";
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
  for (const NotCarried& n : kNotCarried) {
    if (config["model_type"] == std::string(n.model_type))
      config[std::string(n.config_key)] = n.value;
  }

  // vocab_size: the mapped key, else len(tokens) (a one-token list is its string: its length).
  if (!config.contains("vocab_size")) {
    if (!tokens_len) {
      return no_config(
          fmt::format("no {}.vocab_size and no tokenizer.ggml.tokens", printable(arch)));
    }
    if (!*tokens_len) return no_config("tokenizer.ggml.tokens is not a list of strings");
    config["vocab_size"] = **tokens_len;
    source["vocab_size"] = "tokenizer.ggml.tokens";
  }

  // The structural values llama.cpp needs too, under the architecture's own keys (the qwen2moe
  // keys are never read by transformers: nothing to require).
  constexpr std::string_view kRequired[] = {"block_count", "embedding_length",
                                            "attention.head_count", "context_length"};
  for (const std::string_view suffix : kRequired) {
    for (const MappingRow& row : kConfigMapping) {
      if (row.prefix != updated || row.suffix != suffix) continue;
      const std::string ck(row.config_key);
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
    switch (kind_of(ck)) {
      case Kind::kAny:
        break;
      case Kind::kCount:
        if (!is_non_negative(value)) {
          return no_config(fmt::format("{} is not a non-negative integer", key));
        }
        break;
      case Kind::kNumber:
        if (!value.is_number()) return no_config(fmt::format("{} is not a number", key));
        break;
      case Kind::kTokenId:
        if (!is_integer(value)) return no_config(fmt::format("{} is not an integer", key));
        break;
    }
  }

  // GPT2Attention refuses a hidden size its heads do not divide (modeling_gpt2.py,
  // GPT2Attention.__init__), though every weight shape would fit.
  if (config["model_type"] == "gpt2" &&
      config["n_embd"].get<std::uint64_t>() % config["n_head"].get<std::uint64_t>() != 0) {
    return no_config(fmt::format("{} does not divide {}: transformers' GPT2Attention refuses it",
                                 printable(source["n_head"]), printable(source["n_embd"])));
  }
  // A hand-built GgufFile may repeat general.architecture: only a string names a class.
  if (!config["model_type"].is_string()) return no_config("general.architecture is not a string");
  HfConfig out;
  out.model_type = config["model_type"].get<std::string>();
  for (const ModelClass& c : kModelClasses) {
    if (c.model_type == out.model_type)
      config["architectures"] = json::array({std::string(c.class_name)});
  }
  out.torch_dtype = "float32";

  // generation_config.json: the config's token ids (its class defaults where the GGUF has
  // none), the ones that are not None; GenerationConfig's own defaults for them are None.
  json generation = json::object();
  generation["_from_model_config"] = true;
  for (const TokenDefaults& d : kTokenDefaults) {
    if (d.model_type != out.model_type) continue;
    const std::pair<const char*, std::int64_t> ids[] = {{"bos_token_id", d.bos},
                                                        {"eos_token_id", d.eos},
                                                        {"pad_token_id", d.pad},
                                                        {"decoder_start_token_id", -1}};
    for (const auto& [name, fallback] : ids) {
      if (config.contains(name)) {
        generation[name] = config[name];
      } else if (fallback >= 0) {
        generation[name] = fallback;
      }
    }
  }
  generation["transformers_version"] = kTransformersVersion;
  config["transformers_version"] = kTransformersVersion;
  if (!dtype.empty()) config["dtype"] = dtype;

  out.config_json = dump(config);
  out.generation_config_json = dump(generation);
  return {std::move(out), ""};
}

}  // namespace ggufs
