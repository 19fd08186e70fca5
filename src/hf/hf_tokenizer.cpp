// tokenizer.json, tokenizer_config.json and special_tokens_map.json of a GGUF model as
// transformers 4.57.6's GGUF import builds and saves the tokenizer. Facts restated from
// transformers 4.57.6: integrations/ggml.py (GGUF_TOKENIZER_MAPPING, GGUFTokenizerSkeleton,
// GGUFLlamaConverter, GGUFQwen2Converter, GGUFGPTConverter, GGUF_TO_FAST_CONVERTERS),
// convert_slow_tokenizer.py (LlamaConverter, GPT2Converter, Qwen2Converter),
// tokenization_utils_fast.py (PreTrainedTokenizerFast.__init__), tokenization_utils_base.py
// (save_pretrained), models/llama/tokenization_llama_fast.py (update_post_processor),
// models/gpt2/tokenization_gpt2_fast.py and models/qwen2/tokenization_qwen2_fast.py (their
// default special tokens); and from tokenizers 0.22.2 (the JSON each component serializes to,
// AddedVocabulary's id for a new token).
#include "ggufs/hf_tokenizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "ggufs/hf_config.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

using nlohmann::json;

enum class Converter { kLlama, kPhi3, kGemma, kGpt2, kNeoX, kQwen2 };

HfTokenizerResult no_tokenizer(std::string reason) { return {std::nullopt, std::move(reason)}; }

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// An AddedToken as `tokenizers` serializes it in tokenizer.json's added_tokens.
struct Added {
  std::size_t id;
  std::string content;
  bool rstrip = false;
};

// The GGUF's tokenizer.ggml.* values, checked.
struct Vocab {
  std::vector<std::string_view> tokens;
  std::uint64_t bytes = 0;  // of tokenizer.ggml.tokens in the file: 8 (length) + each token's
  std::vector<std::string> rewritten;  // GGUFGemmaConverter.vocab's tokens, when rewritten
  std::unordered_map<std::string_view, std::size_t> ids;
  std::optional<std::vector<double>> scores;
  std::optional<std::vector<std::int64_t>> types;
  std::optional<std::vector<std::pair<std::size_t, std::size_t>>> merges;  // token ids
  std::optional<std::size_t> bos, eos, unk, pad;
  std::optional<std::string> model;
  std::optional<bool> add_space_prefix;
  std::optional<std::string> chat_template;
};

// The first pair of `key`: gguf-py's GGUFReader keeps a repeated key under another name.
const Value* find(const GgufFile& file, std::string_view key) {
  for (const KeyValue& kv : file.kv) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

// A scalar integer, or why not.
std::optional<std::int64_t> integer(const Value& v) {
  if (const auto* u = std::get_if<std::uint64_t>(&v.data)) {
    return *u > static_cast<std::uint64_t>(INT64_MAX) ? std::optional<std::int64_t>()
                                                      : static_cast<std::int64_t>(*u);
  }
  if (const auto* s = std::get_if<std::int64_t>(&v.data)) return *s;
  return std::nullopt;
}

std::optional<double> number(const Value& v) {
  if (const auto* f = std::get_if<float>(&v.data)) return static_cast<double>(*f);
  if (const auto* d = std::get_if<double>(&v.data)) return *d;
  if (const auto i = integer(v)) return static_cast<double>(*i);
  return std::nullopt;
}

// Reads and checks the tokenizer keys; an empty string when fine, else the reason.
std::string read_vocab(const GgufFile& file, Vocab& vocab, bool use_merges) {
  const Value* tokens = find(file, "tokenizer.ggml.tokens");
  if (!tokens) return "no tokenizer.ggml.tokens";
  const auto* ta = std::get_if<Array>(&tokens->data);
  if (!ta || ta->elem_type() != ValueType::kString) {
    return "tokenizer.ggml.tokens is not an array of strings";
  }
  const std::size_t n = ta->size();
  if (n < 2) {
    return fmt::format(
        "tokenizer.ggml.tokens has {} element(s): transformers unwraps a one-element array", n);
  }
  if (n > kMaxHfTokenizerVocab) {
    return fmt::format("tokenizer.ggml.tokens has {} elements, more than the {} accepted", n,
                       kMaxHfTokenizerVocab);
  }
  vocab.tokens.reserve(n);
  vocab.ids.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view t = ta->string_at(i);
    if (!vocab.ids.emplace(t, i).second) {
      // {token: id} keeps the last id of a repeated token: ids would then have holes.
      return fmt::format("tokenizer.ggml.tokens repeats token {} ('{}') at {}", vocab.ids[t],
                         printable(valid_utf8(t)), i);
    }
    vocab.tokens.push_back(t);
    vocab.bytes += 8 + t.size();
  }

  if (const Value* v = find(file, "tokenizer.ggml.scores")) {
    const auto* a = std::get_if<Array>(&v->data);
    if (!a || a->size() != n || a->elem_type() == ValueType::kString ||
        a->elem_type() == ValueType::kArray || a->elem_type() == ValueType::kBool) {
      return fmt::format("tokenizer.ggml.scores is not an array of {} numbers", n);
    }
    std::vector<double> scores(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto d = number(a->at(i));
      if (!d || !std::isfinite(*d)) {
        return fmt::format("tokenizer.ggml.scores element {} is not a finite number", i);
      }
      scores[i] = *d;
    }
    vocab.scores = std::move(scores);
  }
  if (const Value* v = find(file, "tokenizer.ggml.token_type")) {
    const auto* a = std::get_if<Array>(&v->data);
    std::vector<std::int64_t> types(a ? a->size() : 0);
    bool ok = a && a->size() == n;
    for (std::size_t i = 0; ok && i < n; ++i) {
      const auto t = integer(a->at(i));
      ok = t.has_value();
      if (ok) types[i] = *t;
    }
    if (!ok) return fmt::format("tokenizer.ggml.token_type is not an array of {} integers", n);
    vocab.types = std::move(types);
  }
  if (const Value* v = find(file, "tokenizer.ggml.merges"); v && use_merges) {
    const auto* a = std::get_if<Array>(&v->data);
    if (!a || a->elem_type() != ValueType::kString) {
      return "tokenizer.ggml.merges is not an array of strings";
    }
    if (a->size() == 1) {
      return "tokenizer.ggml.merges has one element: transformers unwraps it into its string";
    }
    if (a->size() > 2 * kMaxHfTokenizerVocab) {
      return fmt::format("tokenizer.ggml.merges has {} elements, more than the {} accepted",
                         a->size(), 2 * kMaxHfTokenizerVocab);
    }
    std::vector<std::pair<std::size_t, std::size_t>> merges;
    merges.reserve(a->size());
    std::string joined;
    for (std::size_t i = 0; i < a->size(); ++i) {
      // tuple(merge.split(" ")) must be a pair, and the BPE builder needs both parts and their
      // concatenation in the vocabulary.
      const std::string_view m = a->string_at(i);
      const std::size_t space = m.find(' ');
      if (space == std::string_view::npos || m.find(' ', space + 1) != std::string_view::npos) {
        return fmt::format("tokenizer.ggml.merges element {} is not two tokens joined by a space",
                           i);
      }
      const std::string_view l = m.substr(0, space), r = m.substr(space + 1);
      joined.assign(l).append(r);
      const auto li = vocab.ids.find(l), ri = vocab.ids.find(r);
      if (li == vocab.ids.end() || ri == vocab.ids.end() || !vocab.ids.contains(joined)) {
        return fmt::format(
            "tokenizer.ggml.merges element {} ('{}') merges tokens not in the "
            "vocabulary",
            i, printable(valid_utf8(m)));
      }
      merges.emplace_back(li->second, ri->second);
    }
    vocab.merges = std::move(merges);
  }

  struct IdKey {
    const char* key;
    std::optional<std::size_t>* out;
  };
  for (const IdKey& k : {IdKey{"tokenizer.ggml.bos_token_id", &vocab.bos},
                         IdKey{"tokenizer.ggml.eos_token_id", &vocab.eos},
                         IdKey{"tokenizer.ggml.unknown_token_id", &vocab.unk},
                         IdKey{"tokenizer.ggml.padding_token_id", &vocab.pad}}) {
    const Value* v = find(file, k.key);
    if (!v) continue;
    const auto id = integer(*v);
    if (!id || *id < 0 || static_cast<std::uint64_t>(*id) >= n) {
      return fmt::format("{} is not a token id below {}", k.key, n);
    }
    *k.out = static_cast<std::size_t>(*id);
  }
  if (const Value* v = find(file, "tokenizer.ggml.model")) {
    const auto* s = std::get_if<std::string>(&v->data);
    if (!s) return "tokenizer.ggml.model is not a string";
    vocab.model = *s;
  }
  if (const Value* v = find(file, "tokenizer.ggml.add_space_prefix")) {
    const auto* b = std::get_if<bool>(&v->data);
    if (!b) return "tokenizer.ggml.add_space_prefix is not a bool";
    vocab.add_space_prefix = *b;
  }
  if (const Value* v = find(file, "tokenizer.chat_template")) {
    const auto* s = std::get_if<std::string>(&v->data);
    if (!s) return "tokenizer.chat_template is not a string";
    vocab.chat_template = *s;
  }
  return "";
}

// Hashes of the tokens for build_merges: a polynomial hash modulo the Mersenne prime 2^61 - 1
// with a base drawn at random per rendering, so that no vocabulary can be built to make many
// substrings collide (as strings of Thue-Morse shape do for any base modulo 2^64). A hash only
// says where to look: every match is confirmed byte for byte.
class TokenHashes {
 public:
  explicit TokenHashes(const std::vector<std::string_view>& tokens) : tokens_(tokens) {
    std::uint64_t seed = 0x9E3779B97F4A7C15u;
    try {
      seed ^= std::random_device{}();
    } catch (const std::exception&) {  // no entropy source: the clock still varies the base
    }
    seed ^= static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    base_ = 256 + std::mt19937_64(seed)() % (kP - 512);
    index_.reserve(tokens.size());
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      std::uint64_t h = 0;
      for (const char c : tokens[i]) h = step(h, c);
      index_.emplace(h, i);
    }
  }

  // prefix[k] = hash of t[0, k) for k in 0..t.size(); power[k] = base^k.
  void prefixes(std::string_view t, std::vector<std::uint64_t>& prefix) {
    prefix.resize(t.size() + 1);
    prefix[0] = 0;
    for (std::size_t k = 0; k < t.size(); ++k) prefix[k + 1] = step(prefix[k], t[k]);
    while (power_.size() <= t.size())
      power_.push_back(power_.empty() ? 1 : mul(power_.back(), base_));
  }
  // Hash of t[at, end) from t's prefix hashes.
  std::uint64_t range(const std::vector<std::uint64_t>& prefix, std::size_t at,
                      std::size_t end) const {
    return sub(prefix[end], mul(prefix[at], power_[end - at]));
  }
  // Whether a token of `length` bytes has hash `h` (no bytes compared: cheap).
  bool may_hold(std::uint64_t h, std::size_t length) const {
    const auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (tokens_[it->second].size() == length) return true;
    }
    return false;
  }
  // The id of token `s`, whose hash is `h`, confirmed byte for byte.
  std::optional<std::size_t> find(std::uint64_t h, std::string_view s) const {
    const auto [first, last] = index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (tokens_[it->second] == s) return it->second;
    }
    return std::nullopt;
  }

 private:
  static constexpr std::uint64_t kP = (std::uint64_t{1} << 61) - 1;
  static std::uint64_t reduce(std::uint64_t x) {
    x = (x & kP) + (x >> 61);
    return x >= kP ? x - kP : x;
  }
  static std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
    const unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
    return reduce((static_cast<std::uint64_t>(m) & kP) + static_cast<std::uint64_t>(m >> 61));
  }
  static std::uint64_t sub(std::uint64_t a, std::uint64_t b) { return a >= b ? a - b : a + kP - b; }
  // Bytes count as 1..256, so that a leading NUL byte changes the hash.
  std::uint64_t step(std::uint64_t h, char c) const {
    return reduce(mul(h, base_) + static_cast<unsigned char>(c) + 1);
  }

  const std::vector<std::string_view>& tokens_;
  std::uint64_t base_;
  std::vector<std::uint64_t> power_;
  std::unordered_multimap<std::uint64_t, std::size_t> index_;
};

// GGUFTokenizerSkeleton's merges for a vocabulary without them: for each token in order, every
// split into two tokens, ordered by (score of left, score of right) descending; then all of them
// by the token's score descending. Both sorts are Python's sorted(reverse=True): stable.
//
// Work and memory are linear in the vocabulary's bytes: each split point costs two hash look-ups
// (TokenHashes), bytes are compared only for a split whose two halves both have a token's hash,
// which is a merge; and past kMaxBuiltMergesPerToken merges per token or
// kMaxBuiltMergeBytesPerVocabByte bytes of merges per byte of tokenizer.ggml.tokens (a vocabulary
// such as "a", "aa", … would make a number of merges quadratic in its size, and their bytes
// cubic) there are no merges, and the reason says so.
std::string build_merges(Vocab& vocab) {
  const std::vector<double>& scores = *vocab.scores;
  struct Merge {
    std::size_t l, r;
    double score;
  };
  const std::uint64_t max_merges = kMaxBuiltMergesPerToken * vocab.tokens.size();
  const std::uint64_t max_bytes = kMaxBuiltMergeBytesPerVocabByte * vocab.bytes;
  std::uint64_t merge_bytes = 0;
  TokenHashes hashes(vocab.tokens);
  std::vector<std::uint64_t> prefix;
  std::vector<Merge> all, local;
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    const std::string_view t = vocab.tokens[i];
    local.clear();
    hashes.prefixes(t, prefix);
    // Split points are between code points (Python slices a str); tokens are valid UTF-8.
    for (std::size_t at = 1; at < t.size(); ++at) {
      if ((static_cast<unsigned char>(t[at]) & 0xC0) == 0x80) continue;
      const std::uint64_t hl = prefix[at], hr = hashes.range(prefix, at, t.size());
      if (!hashes.may_hold(hl, at) || !hashes.may_hold(hr, t.size() - at)) continue;
      const auto l = hashes.find(hl, t.substr(0, at));
      const auto r = l ? hashes.find(hr, t.substr(at)) : std::nullopt;
      if (!r) continue;
      merge_bytes += t.size();
      if (all.size() + local.size() >= max_merges || merge_bytes > max_bytes) {
        return fmt::format(
            "tokenizer.ggml.scores without tokenizer.ggml.merges: the merges built from {} "
            "tokens would pass {} per token or {} bytes per byte of tokenizer.ggml.tokens",
            vocab.tokens.size(), kMaxBuiltMergesPerToken, kMaxBuiltMergeBytesPerVocabByte);
      }
      local.push_back({*l, *r, scores[i]});
    }
    std::stable_sort(local.begin(), local.end(), [&](const Merge& a, const Merge& b) {
      if (scores[a.l] != scores[b.l]) return scores[a.l] > scores[b.l];
      return scores[a.r] > scores[b.r];
    });
    all.insert(all.end(), local.begin(), local.end());
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Merge& a, const Merge& b) { return a.score > b.score; });
  std::vector<std::pair<std::size_t, std::size_t>> merges;
  merges.reserve(all.size());
  for (const Merge& m : all) merges.emplace_back(m.l, m.r);
  vocab.merges = std::move(merges);
  return "";
}

// The BPE variants: LlamaConverter's (unk token, fuse_unk, byte_fallback), GGUFPhi3Converter's
// (BPE's defaults), GPT2Converter's and Qwen2Converter's ("" prefix and suffix).
enum BpeStyle { kSpmBpe, kPlainBpe, kByteLevelBpe };

// The vocabulary, merges and added tokens are written as text straight into the file, never held
// as nlohmann-json values: a value of many elements costs several times its text, and destroying
// one allocates (json's destroy() moves the children to a heap stack), which, while an
// allocation failure unwinds, would end the process.

// `object` (a non-empty JSON object as json::dump writes it, compact or indented by 2) with
// members appended, each a key of ours (nothing to escape) and its value's JSON text.
std::string with_members(
    std::string object,
    std::initializer_list<std::pair<std::string_view, std::string_view>> members) {
  const bool indented = object.ends_with("\n}");
  object.resize(object.size() - (indented ? 2 : 1));
  for (const auto& [key, text] : members) {
    object.append(indented ? ",\n  \"" : ",\"").append(key).append(indented ? "\": " : "\":");
    object.append(text);
  }
  object.append(indented ? "\n}" : "}");
  return object;
}

// Between the elements of a long array or object: one a line.
constexpr std::string_view kNext = ",\n    ";

// The BPE model of tokenizer.json (tokenizers' models/bpe serialization).
std::string bpe_json(const Vocab& vocab, const std::optional<std::string>& unk_token,
                     BpeStyle style) {
  const bool spm = style == kSpmBpe;
  const json affix = style == kByteLevelBpe ? json("") : json(nullptr);
  const json model = {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", unk_token ? json(*unk_token) : json(nullptr)},
                      {"continuing_subword_prefix", affix},
                      {"end_of_word_suffix", affix},
                      {"fuse_unk", spm},
                      {"byte_fallback", spm},
                      {"ignore_merges", false}};
  std::string vocab_text = "{\n    ", merges_text = "[\n    ";
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    if (i) vocab_text += kNext;
    append_json_string(vocab_text, vocab.tokens[i]);
    fmt::format_to(std::back_inserter(vocab_text), ": {}", i);
  }
  vocab_text += "\n  }";
  for (std::size_t k = 0; k < vocab.merges->size(); ++k) {
    const auto [l, r] = (*vocab.merges)[k];
    if (k) merges_text += kNext;
    merges_text += '[';
    append_json_string(merges_text, vocab.tokens[l]);
    merges_text += ", ";
    append_json_string(merges_text, vocab.tokens[r]);
    merges_text += ']';
  }
  merges_text += "\n  ]";
  return with_members(model.dump(2, ' ', false, json::error_handler_t::replace),
                      {{"vocab", vocab_text}, {"merges", merges_text}});
}

json byte_level(bool add_prefix_space, bool trim_offsets) {
  return {{"type", "ByteLevel"},
          {"add_prefix_space", add_prefix_space},
          {"trim_offsets", trim_offsets},
          {"use_regex", true}};
}

json replace(std::string_view pattern, std::string_view content) {
  return {{"type", "Replace"}, {"pattern", {{"String", pattern}}}, {"content", content}};
}

// The added tokens: `tokenizers` gives a token in the vocabulary its id there, and a new one
// the next id past the vocabulary and the added tokens before it (AddedVocabulary). Indexed by
// content: a vocabulary may mark every token special (token_type 3).
class AddedTokens {
 public:
  explicit AddedTokens(const Vocab& vocab) : vocab_(vocab), next_(vocab.tokens.size()) {}
  void add(std::string_view content, bool rstrip = false) {
    if (index_.contains(content)) return;
    const auto it = vocab_.ids.find(content);
    list_.push_back({it != vocab_.ids.end() ? it->second : next_++, std::string(content), rstrip});
    // Keyed by the list's own copy: std::deque never moves its elements.
    index_.emplace(list_.back().content, list_.back().id);
  }
  std::optional<std::size_t> id(std::string_view content) const {
    if (const auto it = index_.find(content); it != index_.end()) return it->second;
    const auto it = vocab_.ids.find(content);
    if (it != vocab_.ids.end()) return it->second;
    return std::nullopt;
  }
  // Sorted by id, as tokenizers writes them and as added_tokens_decoder lists them.
  std::vector<Added> sorted() const {
    std::vector<Added> out(list_.begin(), list_.end());
    std::stable_sort(out.begin(), out.end(),
                     [](const Added& a, const Added& b) { return a.id < b.id; });
    return out;
  }

 private:
  const Vocab& vocab_;
  std::size_t next_;
  std::deque<Added> list_;
  std::unordered_map<std::string_view, std::size_t> index_;
};

// The special tokens of the fast tokenizer (None is nullopt).
struct Specials {
  std::optional<std::string> bos, eos, unk, pad;
};

// Python's len() of a str: code points (s is valid UTF-8).
std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Python's len(s.strip()) == 0: every code point is whitespace to str.isspace() (the ASCII
// ones, U+001C..U+001F, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F,
// U+205F, U+3000). s is valid UTF-8.
bool python_blank(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::uint32_t cp;
    std::size_t n;
    if (c < 0x80) {
      cp = c, n = 1;
    } else if (c < 0xE0) {
      cp = c & 0x1F, n = 2;
    } else if (c < 0xF0) {
      cp = c & 0x0F, n = 3;
    } else {
      cp = c & 0x07, n = 4;
    }
    for (std::size_t k = 1; k < n && i + k < s.size(); ++k) {
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    i += n;
    const bool space = (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 ||
                       cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
                       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
    if (!space) return false;
  }
  return true;
}

// A token TemplateProcessing's template string can hold: it splits the template on whitespace
// and reads "$..." as a sequence.
bool templatable(std::string_view t) {
  if (t.empty() || t.front() == '$') return false;
  return t.find_first_of(" \t\n\r\f\v") == std::string_view::npos;
}

}  // namespace

HfTokenizerResult render_hf_tokenizer(const GgufFile& file) {
  // AutoTokenizer.from_pretrained(dir, gguf_file=...) first loads the config (its model_type
  // picks the class) and load_gguf_checkpoint's checks: no config, no tokenizer.
  const HfConfigResult config = render_hf_config(file);
  if (!config.config) return no_tokenizer(config.reason);
  const std::string& model_type = config.config->model_type;
  Converter converter;
  std::string tokenizer_class;
  if (model_type == "llama") {
    converter = Converter::kLlama;
    tokenizer_class = "LlamaTokenizer";
  } else if (model_type == "phi3") {
    converter = Converter::kPhi3;
    tokenizer_class = "LlamaTokenizer";
  } else if (model_type == "gemma2" || model_type == "gemma3_text") {
    converter = Converter::kGemma;
    tokenizer_class = "GemmaTokenizer";
  } else if (model_type == "stablelm") {
    converter = Converter::kNeoX;
    tokenizer_class = "GPTNeoXTokenizer";
  } else if (model_type == "gpt2" || model_type == "starcoder2") {
    converter = Converter::kGpt2;
    tokenizer_class = "GPT2Tokenizer";
  } else if (model_type == "qwen2" || model_type == "qwen2_moe" || model_type == "qwen3" ||
             model_type == "qwen3_moe") {
    converter = Converter::kQwen2;
    tokenizer_class = "Qwen2Tokenizer";
  } else if (model_type == "mistral") {
    return no_tokenizer(
        "general.architecture: transformers 4.57.6 has no GGUF tokenizer converter for mistral");
  } else {
    return no_tokenizer(fmt::format(
        "general.architecture: ggufs renders no tokenizer for model_type '{}' yet", model_type));
  }

  Vocab vocab;
  // GGUFGemmaConverter replaces the merges by a dummy: they are never read.
  if (std::string why = read_vocab(file, vocab, converter != Converter::kGemma); !why.empty()) {
    return no_tokenizer(why);
  }

  // The architecture name is replaced in every str value (load_gguf_checkpoint); only
  // chat_template and model are strings here, and only qwen2moe/qwen3moe are renamed.
  const Value* arch_value = find(file, "general.architecture");
  const auto* arch = arch_value ? std::get_if<std::string>(&arch_value->data) : nullptr;
  if (!arch) return no_tokenizer("general.architecture is not a string");
  std::string updated = model_type == "qwen2_moe" || model_type == "qwen3_moe" ? model_type : *arch;
  auto renamed = [&](const std::string& s) {
    if (*arch == updated || s.find(*arch) == std::string::npos) return s;
    std::string out;
    std::size_t at = 0;
    for (std::size_t hit; (hit = s.find(*arch, at)) != std::string::npos; at = hit + arch->size()) {
      out.append(s, at, hit - at).append(updated);
    }
    return out.append(s, at);
  };

  AddedTokens added(vocab);
  Specials specials;
  json tok = json::object();  // all but "model" and "added_tokens"
  std::string model_text;
  json config_json = json::object();  // all but "added_tokens_decoder"
  bool clean_up = false;

  // LlamaTokenizerFast and GemmaTokenizerFast (update_post_processor): add_bos_token True,
  // add_eos_token False: "<bos>:0 $A:0" and "<bos>:0 $A:0 <bos>:1 $B:1".
  auto bos_template = [&](const std::string& bos) {
    const std::size_t bos_id = *added.id(bos);
    auto piece = [](int type_id, bool sequence, std::string_view name) {
      return sequence ? json{{"Sequence", {{"id", name}, {"type_id", type_id}}}}
                      : json{{"SpecialToken", {{"id", name}, {"type_id", type_id}}}};
    };
    return json{
        {"type", "TemplateProcessing"},
        {"single", json::array({piece(0, false, bos), piece(0, true, "A")})},
        {"pair", json::array({piece(0, false, bos), piece(0, true, "A"), piece(1, false, bos),
                              piece(1, true, "B")})},
        {"special_tokens",
         {{bos, {{"id", bos}, {"ids", json::array({bos_id})}, {"tokens", json::array({bos})}}}}}};
  };
  const json strip = {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}};
  // add_prefix_space of the SentencePiece converters: the GGUF's add_space_prefix, else True
  // (their converted()).
  const bool spm_prefix = vocab.add_space_prefix.value_or(true);
  auto need_merges = [&]() -> std::string {
    if (vocab.merges) return "";
    if (!vocab.scores) return "no tokenizer.ggml.merges and no tokenizer.ggml.scores";
    return build_merges(vocab);
  };

  if (converter == Converter::kLlama || converter == Converter::kPhi3) {
    if (std::string why = need_merges(); !why.empty()) return no_tokenizer(why);
    if (converter == Converter::kLlama) {
      // GGUFLlamaConverter.tokenizer(): unk = tokens[unk id]; bos = tokens[bos id]; eos =
      // tokens[bos id] too (sic), then handed over swapped: eos_token = bos, bos_token = eos.
      if (vocab.eos && !vocab.bos) {
        return no_tokenizer(
            "tokenizer.ggml.eos_token_id without tokenizer.ggml.bos_token_id: transformers' "
            "import fails");
      }
      if (!vocab.eos) {
        return no_tokenizer(
            "no tokenizer.ggml.eos_token_id: transformers' import then has no bos token for "
            "LlamaTokenizerFast (add_bos_token)");
      }
      specials.bos = std::string(vocab.tokens[*vocab.bos]);
      specials.eos = specials.bos;
    } else {
      // GGUFPhi3Converter.tokenizer(): the bos and eos ids must exist, each becomes its token.
      // It reads the padding id as an attribute too, and so fails on a file without one
      // (transformers 4.57.6); llama.cpp's converter writes none where the original tokenizer
      // has no pad token, and the original loads without it: a pad is written when there is one.
      for (const auto& [id, key] : {std::pair{&vocab.bos, "tokenizer.ggml.bos_token_id"},
                                    std::pair{&vocab.eos, "tokenizer.ggml.eos_token_id"}}) {
        if (!*id) return no_tokenizer(fmt::format("no {}: transformers' phi3 import fails", key));
      }
      specials.bos = std::string(vocab.tokens[*vocab.bos]);
      specials.eos = std::string(vocab.tokens[*vocab.eos]);
      if (vocab.pad) specials.pad = std::string(vocab.tokens[*vocab.pad]);
    }
    if (vocab.unk) specials.unk = std::string(vocab.tokens[*vocab.unk]);
    if (!templatable(*specials.bos)) {
      return no_tokenizer(
          "tokenizer.ggml.bos_token_id: its token cannot stand in a TemplateProcessing template");
    }
    const bool llama3 = converter == Converter::kLlama && vocab.model.value_or("llama") != "llama";
    if (converter == Converter::kLlama) {
      // Special tokens: token_type 3 in id order, else unk, bos, eos.
      if (vocab.types) {
        for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
          if ((*vocab.types)[i] == 3) added.add(vocab.tokens[i]);
        }
      } else {
        if (specials.unk) added.add(*specials.unk);
        added.add(*specials.bos);
      }
    } else {
      // GGUFPhi3Converter's fixed list, from Phi-3's tokenizer_config.json.
      added.add("</s>", true);
      added.add("<|endoftext|>");
      for (const char* t : {"<|assistant|>", "<|placeholder1|>", "<|placeholder2|>",
                            "<|placeholder3|>", "<|placeholder4|>", "<|system|>", "<|end|>",
                            "<|placeholder5|>", "<|placeholder6|>", "<|user|>"}) {
        added.add(t, true);
      }
    }
    // PreTrainedTokenizerFast.__init__ adds the special tokens still missing, in the order
    // bos, eos, unk, pad (SPECIAL_TOKENS_ATTRIBUTES).
    for (const auto* t : {&specials.bos, &specials.eos, &specials.unk, &specials.pad}) {
      if (*t) added.add(**t);
    }

    // LlamaConverter's BPE (unk, fuse_unk, byte_fallback); GGUFPhi3Converter's plain BPE.
    model_text = converter == Converter::kLlama ? bpe_json(vocab, specials.unk, kSpmBpe)
                                                : bpe_json(vocab, std::nullopt, kPlainBpe);
    if (converter == Converter::kPhi3) {
      tok["normalizer"] = nullptr;
      tok["pre_tokenizer"] = nullptr;
    } else if (llama3) {
      tok["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array()}};
      tok["pre_tokenizer"] = byte_level(false, false);
    } else {
      // LlamaConverter.normalizer, legacy: Prepend("▁") when add_prefix_space, Replace.
      json seq = json::array();
      if (spm_prefix) seq.push_back({{"type", "Prepend"}, {"prepend", "\u2581"}});
      seq.push_back(replace(" ", "\u2581"));
      tok["normalizer"] = {{"type", "Sequence"}, {"normalizers", seq}};
      tok["pre_tokenizer"] = nullptr;
    }
    json decoders = json::array({{{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    decoders.push_back(replace("\u2581", " "));
    if (llama3) decoders.push_back(byte_level(true, true));
    if (spm_prefix) decoders.push_back(strip);
    tok["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
    tok["post_processor"] = bos_template(*specials.bos);
    clean_up = llama3;
    config_json["add_bos_token"] = true;
    config_json["add_eos_token"] = false;
    config_json["add_prefix_space"] = nullptr;
    config_json["legacy"] = true;
    config_json["use_default_system_prompt"] = false;
    // The converters' additional kwargs set these even when None.
    config_json["unk_token"] = nullptr;
    if (converter == Converter::kPhi3) config_json["pad_token"] = nullptr;
  } else if (converter == Converter::kGemma) {
    // GGUFGemmaConverter: a Unigram model of the tokens and scores, "<0x09>" renamed "\t" and
    // a token of whitespace only holding a space renamed to as many "▁" (vocab()).
    if (!vocab.scores) return no_tokenizer("no tokenizer.ggml.scores (gemma's Unigram model)");
    vocab.rewritten.reserve(vocab.tokens.size());
    for (const std::string_view t : vocab.tokens) {
      if (t == "<0x09>") {
        vocab.rewritten.emplace_back("\t");
      } else if (t.find(' ') != std::string_view::npos && python_blank(t)) {
        std::string u;
        for (std::size_t i = 0, n = code_points(t); i < n; ++i) u += "\u2581";
        vocab.rewritten.push_back(std::move(u));
      } else {
        vocab.rewritten.emplace_back(t);
      }
    }
    vocab.ids.clear();
    for (std::size_t i = 0; i < vocab.rewritten.size(); ++i) {
      vocab.tokens[i] = vocab.rewritten[i];
      if (!vocab.ids.emplace(vocab.tokens[i], i).second) {
        return no_tokenizer(fmt::format(
            "tokenizer.ggml.tokens: token {} repeats token {} once gemma's converter renames it", i,
            vocab.ids[vocab.tokens[i]]));
      }
    }
    // GemmaTokenizerFast's defaults; the converter sets none.
    specials.bos = "<bos>";
    specials.eos = "<eos>";
    specials.unk = "<unk>";
    specials.pad = "<pad>";
    for (const auto* t : {&specials.bos, &specials.eos, &specials.unk, &specials.pad}) {
      added.add(**t);
    }
    std::string pieces = "[\n    ";
    for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
      if (i) pieces += kNext;
      pieces += '[';
      append_json_string(pieces, vocab.tokens[i]);
      pieces += ", ";
      pieces += json((*vocab.scores)[i]).dump();  // json's shortest round-trip form
      pieces += ']';
    }
    pieces += "\n  ]";
    const json model = {{"type", "Unigram"},
                        {"unk_id", vocab.unk ? json(*vocab.unk) : json(nullptr)},
                        {"byte_fallback", true}};
    model_text = with_members(model.dump(2), {{"vocab", pieces}});
    tok["normalizer"] = replace(" ", "\u2581");
    tok["pre_tokenizer"] = {{"type", "Split"},
                            {"pattern", {{"String", " "}}},
                            {"behavior", "MergedWithPrevious"},
                            {"invert", false}};
    json decoders =
        json::array({replace("\u2581", " "), {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
    if (spm_prefix) decoders.push_back(strip);
    tok["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
    tok["post_processor"] = bos_template(*specials.bos);
    config_json["add_bos_token"] = true;
    config_json["add_eos_token"] = false;
  } else {
    if (!vocab.merges) return no_tokenizer("no tokenizer.ggml.merges");
    model_text = bpe_json(vocab, std::nullopt, kByteLevelBpe);
    tok["decoder"] = byte_level(true, true);
    tok["post_processor"] = byte_level(true, false);
    if (converter == Converter::kGpt2 || converter == Converter::kNeoX) {
      // GPT2TokenizerFast: unk, bos, eos "<|endoftext|>"; its add_prefix_space (False) is
      // written back into the ByteLevel pre-tokenizer by PreTrainedTokenizerFast.__init__.
      tok["normalizer"] = nullptr;
      tok["pre_tokenizer"] = byte_level(false, true);
      specials.unk = specials.bos = specials.eos = "<|endoftext|>";
      added.add("<|endoftext|>");
      config_json["add_prefix_space"] = false;
      if (converter == Converter::kNeoX) {
        // GPTNeoXTokenizerFast.update_post_processor with add_bos_token and add_eos_token
        // False: a template of the sequences alone.
        auto seq = [](std::string_view id, int type_id) {
          return json{{"Sequence", {{"id", id}, {"type_id", type_id}}}};
        };
        tok["post_processor"] = {{"type", "TemplateProcessing"},
                                 {"single", json::array({seq("A", 0)})},
                                 {"pair", json::array({seq("A", 0), seq("B", 1)})},
                                 {"special_tokens", json::object()}};
        config_json["add_bos_token"] = false;
        config_json["add_eos_token"] = false;
        config_json["pad_token"] = nullptr;
      }
    } else {
      // GGUFQwen2Converter's three special tokens; Qwen2TokenizerFast: unk, eos, pad
      // "<|endoftext|>", bos None.
      tok["normalizer"] = {{"type", "NFC"}};
      const bool prefix = vocab.add_space_prefix.value_or(false);
      tok["pre_tokenizer"] = {
          {"type", "Sequence"},
          {"pretokenizers",
           json::array({{{"type", "Split"},
                         {"pattern",
                          {{"Regex",
                            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                            "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                         {"behavior", "Isolated"},
                         {"invert", false}},
                        {{"type", "ByteLevel"},
                         {"add_prefix_space", prefix},
                         {"trim_offsets", true},
                         {"use_regex", false}}})}};
      for (const char* t : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) added.add(t);
      specials.unk = specials.eos = specials.pad = "<|endoftext|>";
      config_json["bos_token"] = nullptr;
    }
  }

  tok["version"] = "1.0";
  tok["truncation"] = nullptr;
  tok["padding"] = nullptr;
  // The added tokens in id order: tokenizer.json's list, and tokenizer_config.json's
  // added_tokens_decoder (save_pretrained writes it sorted by id).
  std::string added_list = "[\n    ", decoder = "{\n    ";
  bool first = true;
  for (const Added& a : added.sorted()) {
    const char* rstrip = a.rstrip ? "true" : "false";
    if (!first) added_list += kNext, decoder += kNext;
    first = false;
    fmt::format_to(std::back_inserter(added_list), R"({{"id": {}, "content": )", a.id);
    append_json_string(added_list, a.content);
    fmt::format_to(std::back_inserter(added_list),
                   R"(, "single_word": false, "lstrip": false, "rstrip": {}, )"
                   R"("normalized": false, "special": true}})",
                   rstrip);
    fmt::format_to(std::back_inserter(decoder), R"("{}": {{"content": )", a.id);
    append_json_string(decoder, a.content);
    fmt::format_to(std::back_inserter(decoder),
                   R"(, "lstrip": false, "normalized": false, "rstrip": {}, )"
                   R"("single_word": false, "special": true}})",
                   rstrip);
  }
  added_list += "\n  ]";
  decoder += "\n  }";

  // tokenizer_config.json (save_pretrained): init kwargs, the special tokens that are set, the
  // *_token_id keys the GGUF gave (GGUF_TOKENIZER_MAPPING["tokenizer_config"]) rewritten as the
  // ids of the tokenizer's own special tokens.
  json map = json::object();
  const std::pair<const char*, const std::optional<std::string>*> named[] = {
      {"bos_token", &specials.bos},
      {"eos_token", &specials.eos},
      {"unk_token", &specials.unk},
      {"pad_token", &specials.pad}};
  for (const auto& [name, value] : named) {
    if (*value) {
      config_json[name] = **value;
      map[name] = **value;
    }
  }
  const std::pair<const char*, const std::optional<std::size_t>*> ids[] = {
      {"bos_token_id", &vocab.bos},
      {"eos_token_id", &vocab.eos},
      {"unk_token_id", &vocab.unk},
      {"pad_token_id", &vocab.pad}};
  for (std::size_t i = 0; i < 4; ++i) {
    if (!*ids[i].second) continue;
    const std::optional<std::string>& token = *named[i].second;
    config_json[ids[i].first] = token ? json(*added.id(*token)) : json(nullptr);
  }
  if (converter == Converter::kQwen2) {
    // Qwen2TokenizerFast wraps its special tokens in AddedToken: the map holds their state.
    for (auto& [name, value] : map.items()) {
      value = {{"content", value},
               {"lstrip", false},
               {"normalized", false},
               {"rstrip", false},
               {"single_word", false}};
    }
  }
  config_json["clean_up_tokenization_spaces"] = clean_up;
  config_json["extra_special_tokens"] = json::object();
  if (vocab.model) config_json["model_type"] = renamed(*vocab.model);
  if (vocab.chat_template) config_json["chat_template"] = renamed(*vocab.chat_template);
  config_json["tokenizer_class"] = tokenizer_class;

  HfTokenizer out;
  out.tokenizer_json = with_members(tok.dump(2, ' ', false, json::error_handler_t::replace),
                                    {{"added_tokens", added_list}, {"model", model_text}}) +
                       "\n";
  out.tokenizer_config_json =
      with_members(config_json.dump(2, ' ', false, json::error_handler_t::replace),
                   {{"added_tokens_decoder", decoder}}) +
      "\n";
  out.special_tokens_map_json = dump(map);
  out.tokenizer_class = tokenizer_class + "Fast";
  return {std::move(out), ""};
}

}  // namespace ggufs
