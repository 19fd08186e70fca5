// tokenizer.json, tokenizer_config.json and special_tokens_map.json of a GGUF's vocabulary, as
// the original Hugging Face tokenizer llama.cpp's converter read: keyed, as llama.cpp keys its
// own tokenizer, on tokenizer.ggml.model and tokenizer.ggml.pre. Facts restated from llama.cpp's
// src/llama-vocab.cpp (llama_vocab::impl::load, llm_tokenizer_bpe) and convert_hf_to_gguf.py
// (token types of added tokens), conversion/bert.py (BertModel.set_vocab: the phantom-space
// WordPiece vocabulary) and conversion/gemma.py (Gemma4Model.set_vocab); from transformers
// 4.57.6's convert_slow_tokenizer.py (LlamaConverter, GPT2Converter, BertConverter),
// tokenization_utils_fast.py (PreTrainedTokenizerFast), models/llama/tokenization_llama_fast.py
// (update_post_processor) and models/gemma/tokenization_gemma_fast.py, and 5.24.0's
// models/gemma/tokenization_gemma.py (GemmaTokenizer's pipeline); and from tokenizers 0.22.2
// (the JSON each component serializes to, AddedVocabulary's id for a new token).
#include "ggufs/hf_tokenizer.h"

#include <fmt/format.h>
#include <openssl/evp.h>

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

#include "ggufs/names.h"

namespace ggufs {
namespace {

using nlohmann::json;

HfTokenizerResult no_tokenizer(std::string reason) { return {std::nullopt, std::move(reason)}; }

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// An AddedToken as `tokenizers` serializes it in tokenizer.json's added_tokens.
struct Added {
  std::size_t id;
  std::string content;
  bool special = true;
  bool normalized = false;
};

// The GGUF's tokenizer.ggml.* values, checked.
struct Vocab {
  std::vector<std::string_view> tokens;
  std::uint64_t bytes = 0;  // of tokenizer.ggml.tokens in the file: 8 (length) + each token's
  std::vector<std::string> rewritten;  // WordPiece's tokens, the converter's rewriting undone
  std::unordered_map<std::string_view, std::size_t> ids;
  std::optional<std::vector<double>> scores;
  std::optional<std::vector<std::int64_t>> types;
  std::optional<std::vector<std::pair<std::size_t, std::size_t>>> merges;  // token ids
  std::optional<std::size_t> bos, eos, unk, pad;
  std::optional<std::string> model, pre;
  std::optional<bool> add_space_prefix, add_bos, add_eos;
  std::optional<std::string> chat_template;
  std::optional<std::string> precompiled_charsmap;  // its bytes
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

// Sets `out` to the token id `v` holds, which must be below `n` (the vocabulary's size); an empty
// string when fine, else the reason, naming `key`.
std::string token_id(const Value& v, std::string_view key, std::size_t n,
                     std::optional<std::size_t>& out) {
  const auto id = integer(v);
  if (!id || *id < 0 || static_cast<std::uint64_t>(*id) >= n) {
    return fmt::format("{} is not a token id below {}", key, n);
  }
  out = static_cast<std::size_t>(*id);
  return "";
}

// tokenizer.ggml.tokens: 2 to kMaxHfTokenizerVocab distinct valid UTF-8 strings, indexed by
// content; an empty string when fine, else the reason.
std::string read_tokens(const GgufFile& file, Vocab& vocab) {
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
    if (!is_utf8(t)) {
      return fmt::format("tokenizer.ggml.tokens element {} ('{}') is not valid UTF-8", i,
                         printable(valid_utf8(t)));
    }
    if (!vocab.ids.emplace(t, i).second) {
      // {token: id} keeps the last id of a repeated token: ids would then have holes.
      return fmt::format("tokenizer.ggml.tokens repeats token {} ('{}') at {}", vocab.ids[t],
                         printable(valid_utf8(t)), i);
    }
    vocab.tokens.push_back(t);
    vocab.bytes += 8 + t.size();
  }
  return "";
}

// tokenizer.ggml.scores, where present: one finite number per token; an empty string when fine,
// else the reason.
std::string read_scores(const GgufFile& file, Vocab& vocab) {
  const Value* v = find(file, "tokenizer.ggml.scores");
  if (!v) return "";
  const std::size_t n = vocab.tokens.size();
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
  return "";
}

// tokenizer.ggml.token_type, where present: one integer per token; an empty string when fine,
// else the reason.
std::string read_token_types(const GgufFile& file, Vocab& vocab) {
  const Value* v = find(file, "tokenizer.ggml.token_type");
  if (!v) return "";
  const std::size_t n = vocab.tokens.size();
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
  return "";
}

// tokenizer.ggml.merges, where present, as pairs of token ids: at most 2 × kMaxHfTokenizerVocab
// of them; an empty string when fine, else the reason.
std::string read_merges(const GgufFile& file, Vocab& vocab) {
  const Value* v = find(file, "tokenizer.ggml.merges");
  if (!v) return "";
  const auto* a = std::get_if<Array>(&v->data);
  if (!a || a->elem_type() != ValueType::kString) {
    return "tokenizer.ggml.merges is not an array of strings";
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
      return fmt::format("tokenizer.ggml.merges element {} is not two tokens joined by a space", i);
    }
    const std::string_view l = m.substr(0, space), r = m.substr(space + 1);
    joined.assign(l).append(r);
    const auto li = vocab.ids.find(l), ri = vocab.ids.find(r);
    if (li == vocab.ids.end() || ri == vocab.ids.end() || !vocab.ids.contains(joined)) {
      return fmt::format(
          "tokenizer.ggml.merges element {} ('{}') merges tokens not in the vocabulary", i,
          printable(valid_utf8(m)));
    }
    merges.emplace_back(li->second, ri->second);
  }
  vocab.merges = std::move(merges);
  return "";
}

// The bos, eos, unknown and padding token ids, where present; an empty string when fine, else
// the reason.
std::string read_special_ids(const GgufFile& file, Vocab& vocab) {
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
    if (std::string why = token_id(*v, k.key, vocab.tokens.size(), *k.out); !why.empty()) {
      return why;
    }
  }
  return "";
}

// Sets `out` to the string `key` holds, where present; an empty string when fine, else the
// reason.
std::string read_string(const GgufFile& file, std::string_view key,
                        std::optional<std::string>& out) {
  const Value* v = find(file, key);
  if (!v) return "";
  const auto* s = std::get_if<std::string>(&v->data);
  if (!s) return fmt::format("{} is not a string", key);
  out = *s;
  return "";
}

// tokenizer.ggml.model and .pre, the add_space_prefix, add_bos_token and add_eos_token flags and
// tokenizer.chat_template, where present; an empty string when fine, else the reason.
std::string read_settings(const GgufFile& file, Vocab& vocab) {
  std::string why = read_string(file, "tokenizer.ggml.model", vocab.model);
  if (why.empty()) why = read_string(file, "tokenizer.ggml.pre", vocab.pre);
  if (!why.empty()) return why;
  for (const auto& [key, out] :
       {std::pair{"tokenizer.ggml.add_space_prefix", &vocab.add_space_prefix},
        std::pair{"tokenizer.ggml.add_bos_token", &vocab.add_bos},
        std::pair{"tokenizer.ggml.add_eos_token", &vocab.add_eos}}) {
    const Value* v = find(file, key);
    if (!v) continue;
    const auto* b = std::get_if<bool>(&v->data);
    if (!b) return fmt::format("{} is not a bool", key);
    *out = *b;
  }
  return read_string(file, "tokenizer.chat_template", vocab.chat_template);
}

// SentencePiece's normalizer_spec.precompiled_charsmap, an array of int8 or uint8 (llama.cpp
// refuses other types: llama_vocab::impl::load), where present; an empty string when fine, else
// the reason.
std::string read_precompiled_charsmap(const GgufFile& file, Vocab& vocab) {
  const Value* v = find(file, "tokenizer.ggml.precompiled_charsmap");
  if (!v) return "";
  const auto* a = std::get_if<Array>(&v->data);
  if (!a || (a->elem_type() != ValueType::kUint8 && a->elem_type() != ValueType::kInt8)) {
    return "tokenizer.ggml.precompiled_charsmap is not an array of bytes";
  }
  if (a->size() > kMaxPrecompiledCharsmap) {
    return fmt::format(
        "tokenizer.ggml.precompiled_charsmap has {} bytes, more than the {} accepted", a->size(),
        kMaxPrecompiledCharsmap);
  }
  std::string bytes(a->size(), '\0');
  for (std::size_t i = 0; i < a->size(); ++i) {
    bytes[i] = static_cast<char>(Array::scalar_bits(a->at(i)) & 0xff);
  }
  vocab.precompiled_charsmap = std::move(bytes);
  return "";
}

// Reads and checks the tokenizer keys; an empty string when fine, else the reason.
std::string read_vocab(const GgufFile& file, Vocab& vocab, bool use_merges) {
  std::string why = read_tokens(file, vocab);
  if (why.empty()) why = read_scores(file, vocab);
  if (why.empty()) why = read_token_types(file, vocab);
  if (why.empty() && use_merges) why = read_merges(file, vocab);
  if (why.empty()) why = read_special_ids(file, vocab);
  if (why.empty()) why = read_settings(file, vocab);
  if (why.empty()) why = read_precompiled_charsmap(file, vocab);
  return why;
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

// The BPE variants: SentencePiece's as LlamaConverter writes it (unk token, fuse_unk,
// byte_fallback) and the byte-level one of GPT2Converter ("" prefix and suffix).
enum BpeStyle { kSpmBpe, kByteLevelBpe };

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
                     BpeStyle style, bool ignore_merges) {
  const bool spm = style == kSpmBpe;
  const json affix = style == kByteLevelBpe ? json("") : json(nullptr);
  const json model = {{"type", "BPE"},
                      {"dropout", nullptr},
                      {"unk_token", unk_token ? json(*unk_token) : json(nullptr)},
                      {"continuing_subword_prefix", affix},
                      {"end_of_word_suffix", affix},
                      {"fuse_unk", spm},
                      {"byte_fallback", spm},
                      {"ignore_merges", ignore_merges}};
  std::string vocab_text = "{\n    ", merges_text = "[\n    ";
  bool first = true;
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    // The converter's fillers of ids the original vocabulary does not have, up to the config's
    // vocab_size (base.py, TextModel.get_vocab_base: "[PAD{i}]", UNUSED): not the original's.
    if (style == kByteLevelBpe && vocab.types && (*vocab.types)[i] == 5 &&
        vocab.tokens[i] == fmt::format("[PAD{}]", i)) {
      continue;
    }
    if (!first) vocab_text += kNext;
    first = false;
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

// The Unigram model of tokenizer.json (tokenizers' models/unigram serialization): each token
// with its score, as SentencePiece's float32 widened to double (what transformers'
// SpmConverter writes from the proto's scores).
std::string unigram_json(const Vocab& vocab, std::size_t unk_id) {
  const json model = {{"type", "Unigram"}, {"unk_id", unk_id}, {"byte_fallback", false}};
  std::string vocab_text = "[\n    ";
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    if (i) vocab_text += kNext;
    vocab_text += '[';
    append_json_string(vocab_text, vocab.tokens[i]);
    fmt::format_to(std::back_inserter(vocab_text), ", {}]", (*vocab.scores)[i]);
  }
  vocab_text += "\n  ]";
  return with_members(model.dump(2, ' ', false, json::error_handler_t::replace),
                      {{"vocab", vocab_text}});
}

// RFC 4648 base64 of `bytes` (tokenizers' Precompiled normalizer holds its charsmap so), by
// OpenSSL's EVP_EncodeBlock; `bytes` is below kMaxPrecompiledCharsmap.
std::string base64(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
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
  // AddedToken's normalized defaults to not special.
  void add(std::string_view content, bool special = true, std::optional<bool> normalized = {}) {
    if (index_.contains(content)) return;
    const auto it = vocab_.ids.find(content);
    list_.push_back({it != vocab_.ids.end() ? it->second : next_++, std::string(content), special,
                     normalized.value_or(!special)});
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

// The special tokens of the fast tokenizer (None is nullopt), and whether its post-processor
// adds bos and eos.
struct Specials {
  std::optional<std::string> bos, eos, unk, pad, cls, sep, mask;
  bool add_bos = false, add_eos = false;
};

// A token TemplateProcessing's template string can hold: it splits the template on whitespace
// and reads "$..." as a sequence.
bool templatable(std::string_view t) {
  if (t.empty() || t.front() == '$') return false;
  return t.find_first_of(" \t\n\r\f\v") == std::string_view::npos;
}

// --- The pre-tokenizers of byte-level BPE vocabularies (tokenizer.ggml.model "gpt2") ---------
//
// One row per llama.cpp pre-tokenizer type: the tokenizer.ggml.pre names llama.cpp maps to it
// (llama.cpp src/llama-vocab.cpp, llama_vocab::impl::load, the tokenizer_pre comparisons) and
// that type's pre-tokenization (llm_tokenizer_bpe's regex_exprs: each regex splits every piece
// further, keeping matches and the text between them), written as the original tokenizer.json
// spells it: a Split(Regex, "Isolated") per regex, Digits(individual_digits=true) for a lone
// "\p{N}", then ByteLevel (use_regex=false after the splits; GPT-2's own regex, use_regex=true,
// for the GPT-2 rows). Where llama.cpp rewrote a regex for std::regex (no "(?i:"), the row holds
// the original it quotes in a comment there. ignore_merges and clean_up_tokenization_spaces are
// llama.cpp's ignore_merges and clean_spaces for the type (true by default for BPE).

// Marks Digits(individual_digits=true) among a row's splits.
constexpr std::string_view kDigits = "\\p{N}";

// Llama 3's regex (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_LLAMA3, "original regex from
// tokenizer.json").
constexpr std::string_view kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen2's (LLAMA_VOCAB_PRE_TYPE_QWEN2, its original) and Qwen3.5's (LLAMA_VOCAB_PRE_TYPE_QWEN35,
// its original: [\p{L}\p{M}]+ and [^\s\p{L}\p{M}\p{N}]).
constexpr std::string_view kQwen2Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kQwen35Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| "
    "?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// GPT-2's (LLAMA_VOCAB_PRE_TYPE_GPT2): ByteLevel's own when use_regex is true.
constexpr std::string_view kGpt2Regex =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

// DeepSeek LLM's words (LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM's second regex): an optional space and
// a run of the cased letters of Latin, Greek, Cyrillic and other scripts, spelled out as ranges.
constexpr std::string_view kDeepseekLlmWords =
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-"
    "\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1"
    "\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-"
    "\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18"
    "-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4"
    "\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2"
    "-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-"
    "\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-"
    "\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-"
    "\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-"
    "\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-"
    "\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+";

// Its third: an optional space and a run of printable ASCII but digits, their fullwidth forms,
// curly quotes and the ideographic space, comma and full stop.
constexpr std::string_view kDeepseekLlmPunctuation =
    "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+";
// The CJK runs both DeepSeek rows split off (DEEPSEEK_LLM's fifth regex, DEEPSEEK_CODER's
// fourth).
constexpr std::string_view kDeepseekCjk = "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+";

struct PreTokenizerRow {
  std::vector<std::string_view> names;   // tokenizer.ggml.pre values
  std::vector<std::string_view> splits;  // Split regexes, or kDigits, in order
  bool byte_level_regex;                 // ByteLevel's use_regex (GPT-2's regex)
  bool ignore_merges;
  bool nfc;  // an NFC normalizer (Qwen2's tokenizer.json has one; llama.cpp does not normalize)
  bool clean_up;
};

const std::vector<PreTokenizerRow>& pre_tokenizer_rows() {
  static const std::vector<PreTokenizerRow> rows = {
      // LLAMA_VOCAB_PRE_TYPE_GPT2 (and MPT, OLMO, JAIS, TRILLION, GRANITE_DOCLING: the same
      // regex).
      {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
        "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling"},
       {},
       true,
       false,
       false,
       true},
      // LLAMA_VOCAB_PRE_TYPE_STARCODER, REFACT, SMOLLM, CODESHELL, EXAONE, MINERVA, MELLUM2:
      // "\p{N}", then GPT-2's regex.
      {{"starcoder", "refact", "smollm", "codeshell", "exaone", "minerva", "mellum2"},
       {kDigits},
       true,
       false,
       false,
       true},
      // LLAMA_VOCAB_PRE_TYPE_COMMAND_R: the same regexes, clean_spaces false.
      {{"command-r"}, {kDigits}, true, false, false, false},
      // LLAMA_VOCAB_PRE_TYPE_LLAMA3: ignore_merges true.
      {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
        "jina-v5-nano"},
       {kLlama3Regex},
       false,
       true,
       false,
       true},
      // LLAMA_VOCAB_PRE_TYPE_DBRX, SMAUG: "same as llama3", ignore_merges false.
      {{"dbrx", "smaug-bpe"}, {kLlama3Regex}, false, false, false, true},
      // LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM: clean_spaces false.
      {{"deepseek-llm"},
       {"[\r\n]", kDeepseekLlmWords, kDeepseekLlmPunctuation, "\\s+$", kDeepseekCjk, "\\p{N}+"},
       false,
       false,
       false,
       false},
      // LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_CODER: clean_spaces false.
      {{"deepseek-coder"},
       {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, kDigits},
       false,
       false,
       false,
       false},
      // LLAMA_VOCAB_PRE_TYPE_FALCON.
      {{"falcon"},
       {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2Regex, "[0-9][0-9][0-9]"},
       false,
       false,
       false,
       true},
      // LLAMA_VOCAB_PRE_TYPE_QWEN2: clean_spaces false; the NFC normalizer of Qwen2's
      // tokenizer.json.
      {{"qwen2", "deepseek-r1-qwen"}, {kQwen2Regex}, false, false, true, false},
      // LLAMA_VOCAB_PRE_TYPE_QWEN35: clean_spaces false; no normalizer.
      {{"qwen35"}, {kQwen35Regex}, false, false, false, false},
  };
  return rows;
}

// The row of `pre`; the GPT-2 row for a name llama.cpp does not know, for "default" and for
// none (llama.cpp's own default type splits punctuation and digits apart first, which the
// tokenizers these files come from mostly do not: GPT-2's regex, as transformers' GGUF import).
const PreTokenizerRow& pre_tokenizer_row(const std::optional<std::string>& pre) {
  const auto& rows = pre_tokenizer_rows();
  if (pre) {
    for (const PreTokenizerRow& row : rows) {
      if (std::find(row.names.begin(), row.names.end(), *pre) != row.names.end()) return row;
    }
  }
  return rows.front();
}

json pre_tokenizer_json(const PreTokenizerRow& row) {
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", row.byte_level_regex}};
  if (row.splits.empty()) return byte_level;
  json list = json::array();
  for (const std::string_view s : row.splits) {
    if (s == kDigits) {
      list.push_back({{"type", "Digits"}, {"individual_digits", true}});
    } else {
      list.push_back({{"type", "Split"},
                      {"pattern", {{"Regex", s}}},
                      {"behavior", "Isolated"},
                      {"invert", false}});
    }
  }
  list.push_back(byte_level);
  return {{"type", "Sequence"}, {"pretokenizers", list}};
}

// --- WordPiece (tokenizer.ggml.model "bert", llama.cpp's WPM) --------------------------------
//
// llama.cpp's converter (conversion/bert.py, BertModel.set_vocab) stores a WordPiece vocabulary
// in "phantom space" form: a continuing-subword token "##x" as "x", any other token "x" as
// "▁x", CONTROL tokens (token_type 3) as they are; converters before the token-type test kept
// every "[...]" token as it is instead (the [unusedN] tokens of llama.cpp's own
// ggml-vocab-bert-bge.gguf). llama.cpp's WPM tokenizer (src/llama-vocab.cpp,
// llm_tokenizer_wpm_session) matches "▁" + word greedily longest-first against these. Undone
// here, so that tokenizers' WordPiece with its "##" prefix holds the original vocabulary.
std::string wordpiece_token(std::string_view t, std::int64_t type) {
  constexpr std::string_view kPhantom = "\u2581";
  if (type == 3) return std::string(t);
  if (t.starts_with(kPhantom)) return std::string(t.substr(kPhantom.size()));
  if (t.size() >= 2 && t.front() == '[' && t.back() == ']') return std::string(t);
  return "##" + std::string(t);
}

// Rewrites vocab.tokens to the original WordPiece vocabulary (vocab.rewritten holds the strings);
// an empty string when fine, else the reason.
std::string undo_phantom_space(Vocab& vocab) {
  const std::size_t n = vocab.tokens.size();
  vocab.rewritten.clear();
  vocab.rewritten.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    vocab.rewritten.push_back(
        wordpiece_token(vocab.tokens[i], vocab.types ? (*vocab.types)[i] : 1));
  }
  vocab.ids.clear();
  for (std::size_t i = 0; i < n; ++i) {
    vocab.tokens[i] = vocab.rewritten[i];
    if (!vocab.ids.emplace(vocab.tokens[i], i).second) {
      return fmt::format(
          "tokenizer.ggml.tokens: token {} ('{}') is token {} once the converter's phantom-space "
          "rewriting is undone",
          i, printable(valid_utf8(vocab.tokens[i])), vocab.ids[vocab.tokens[i]]);
    }
  }
  return "";
}

// The WordPiece model of tokenizer.json (tokenizers' models/wordpiece serialization), as the
// original BERT tokenizers have it: "##" prefix, 100 characters at most per word.
std::string wordpiece_json(const Vocab& vocab, const std::string& unk_token) {
  const json model = {{"type", "WordPiece"},
                      {"unk_token", unk_token},
                      {"continuing_subword_prefix", "##"},
                      {"max_input_chars_per_word", 100}};
  std::string vocab_text = "{\n    ";
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
    if (i) vocab_text += kNext;
    append_json_string(vocab_text, vocab.tokens[i]);
    fmt::format_to(std::back_inserter(vocab_text), ": {}", i);
  }
  vocab_text += "\n  }";
  return with_members(model.dump(2, ' ', false, json::error_handler_t::replace),
                      {{"vocab", vocab_text}});
}

// A bool key, or `fallback` when absent; nullopt when it has another type.
std::optional<bool> bool_key(const GgufFile& file, std::string_view key, bool fallback) {
  const Value* v = find(file, key);
  if (!v) return fallback;
  if (const auto* b = std::get_if<bool>(&v->data)) return *b;
  return std::nullopt;
}

// --- render_hf_tokenizer's steps ---------------------------------------------------------------

// What the steps share: the checked vocabulary, its tokenizer model, the byte-level
// pre-tokenizer row of tokenizer.ggml.pre, the special ids Vocab does not hold (Gemma 4's and
// BERT's) and BERT's normalizer flags.
struct Facts {
  Vocab vocab;
  bool spm = false, gemma4 = false, wpm = false, ugm = false;
  const PreTokenizerRow* row = nullptr;
  std::optional<std::size_t> cls, sep, mask;
  bool lowercase = true, strip_accents = true;
};

// Reads the vocabulary and its tokenizer model; an empty string when fine, else the reason. The
// tokenizer models (llama-vocab.cpp, llama_vocab::impl::load: tokenizer.ggml.model):
// "llama" SPM, "gpt2" BPE, "gemma4" BPE over raw UTF-8 with whitespace escaped to "\u2581"
// (pre-tokenizer type GEMMA4), "bert" WPM, "t5" UGM (SentencePiece's Unigram).
std::string read_facts(const GgufFile& file, Facts& facts) {
  if (!find(file, "tokenizer.ggml.model")) return "no tokenizer.ggml.model";
  if (std::string why = read_vocab(file, facts.vocab, true); !why.empty()) return why;
  const std::string& model = *facts.vocab.model;
  facts.spm = model == "llama";
  facts.gemma4 = model == "gemma4";
  facts.wpm = model == "bert";
  facts.ugm = model == "t5";
  if (!facts.spm && !facts.gemma4 && !facts.wpm && !facts.ugm && model != "gpt2") {
    return fmt::format(
        "tokenizer.ggml.model '{}': ggufs renders the tokenizers of 'llama' (SentencePiece BPE), "
        "'gpt2' (byte-level BPE), 'gemma4' (Gemma 4's BPE), 'bert' (WordPiece) and 't5' "
        "(Unigram) only",
        printable(valid_utf8(model)));
  }
  facts.row = &pre_tokenizer_row(facts.vocab.pre);
  return "";
}

// llama.cpp's default special ids of "llama" and "t5" where a key is absent; an empty string
// when fine, else the reason ("t5" needs scores and an unknown token).
std::string default_ids(Facts& facts) {
  Vocab& vocab = facts.vocab;
  if (facts.spm) {
    // llama.cpp's default special tokens for "llama" where a key is absent (llama_vocab::impl::
    // load: unk 0, bos 1, eos 2, SentencePiece's own). Byte-level BPE has none worth taking
    // (llama.cpp's 11 is Falcon's "<|endoftext|>"); "gemma4" has none.
    if (!vocab.unk) vocab.unk = 0;  // read_vocab: 2 tokens at least
    if (!vocab.bos) vocab.bos = 1;
    if (!vocab.eos && vocab.tokens.size() > 2) vocab.eos = 2;
  }
  if (facts.ugm) {
    // llama.cpp's defaults for "t5": pad 0, eos 1, unk 2, no bos (T5's SentencePiece ids).
    if (!vocab.pad) vocab.pad = 0;
    if (!vocab.eos) vocab.eos = 1;
    if (!vocab.unk && vocab.tokens.size() > 2) vocab.unk = 2;
    if (!vocab.scores) return "tokenizer.ggml.model 't5' without tokenizer.ggml.scores";
    if (!vocab.unk) return "tokenizer.ggml.model 't5' without an unknown token";
  }
  return "";
}

// WPM: the special tokens are BERT's: [CLS] (llama.cpp's bos: tokenizer.ggml.bos_token_id;
// else tokenizer.ggml.cls_token_id, the original's cls_token as the converter writes it, which
// llama.cpp does not read; else 101), [SEP] (tokenizer.ggml.seperator_token_id, else 102),
// [UNK] (100), [PAD] (0), [MASK] (tokenizer.ggml.mask_token_id, else 103); no eos. The
// BertNormalizer's lowercase is tokenizer.ggml.normalizer.lowercase, else true; strip_accents
// is tokenizer.ggml.normalizer.strip_accents, else lowercase (llama_vocab::impl::load).
// Then the vocabulary's phantom-space rewriting undone. An empty string when fine, else the
// reason.
std::string read_bert(const GgufFile& file, Facts& facts) {
  Vocab& vocab = facts.vocab;
  const std::size_t n = vocab.tokens.size();
  facts.cls = vocab.bos;
  vocab.bos.reset();
  for (const auto& [key, out, fallback] :
       {std::tuple{"tokenizer.ggml.cls_token_id", &facts.cls, std::size_t{101}},
        std::tuple{"tokenizer.ggml.seperator_token_id", &facts.sep, std::size_t{102}},
        std::tuple{"tokenizer.ggml.mask_token_id", &facts.mask, std::size_t{103}},
        std::tuple{"", &vocab.unk, std::size_t{100}}, std::tuple{"", &vocab.pad, std::size_t{0}}}) {
    if (*out) continue;
    if (const Value* v = *key ? find(file, key) : nullptr) {
      if (std::string why = token_id(*v, key, n, *out); !why.empty()) return why;
    } else if (fallback < n) {
      *out = fallback;
    }
  }
  if (!facts.cls || !facts.sep || !vocab.unk) {
    return "tokenizer.ggml.model 'bert' without a [CLS], [SEP] or [UNK] token (tokenizer.ggml."
           "bos_token_id/cls_token_id, seperator_token_id, unknown_token_id, or llama.cpp's "
           "default ids 101, 102, 100)";
  }
  const auto lower = bool_key(file, "tokenizer.ggml.normalizer.lowercase", true);
  if (!lower) return "tokenizer.ggml.normalizer.lowercase is not a bool";
  const auto strip = bool_key(file, "tokenizer.ggml.normalizer.strip_accents", *lower);
  if (!strip) return "tokenizer.ggml.normalizer.strip_accents is not a bool";
  facts.lowercase = *lower;
  facts.strip_accents = *strip;
  return undo_phantom_space(vocab);
}

// The special ids Vocab does not hold: Gemma 4's and BERT's (read_bert); an empty string when
// fine, else the reason.
std::string read_model_ids(const GgufFile& file, Facts& facts) {
  if (facts.gemma4) {
    // Gemma's <mask> (tokenizer.ggml.mask_token_id), a special token of the original.
    if (const Value* v = find(file, "tokenizer.ggml.mask_token_id")) {
      return token_id(*v, "tokenizer.ggml.mask_token_id", facts.vocab.tokens.size(), facts.mask);
    }
  }
  return facts.wpm ? read_bert(file, facts) : "";
}

// The special tokens: the ids llama.cpp's converter wrote (the original's bos/eos/unk/pad).
Specials special_tokens(const Facts& facts) {
  const Vocab& vocab = facts.vocab;
  Specials specials;
  for (const auto& [id, out] :
       {std::pair{&vocab.bos, &specials.bos}, std::pair{&vocab.eos, &specials.eos},
        std::pair{&vocab.unk, &specials.unk}, std::pair{&vocab.pad, &specials.pad},
        std::pair{&facts.cls, &specials.cls}, std::pair{&facts.sep, &specials.sep},
        std::pair{&facts.mask, &specials.mask}}) {
    if (*id) *out = std::string(vocab.tokens[**id]);
  }
  return specials;
}

// The added tokens: llama.cpp's converter marks the original's special added tokens CONTROL
// (token_type 3) and its other added tokens USER_DEFINED (4); special tokens not so marked
// are added as transformers adds them (SPECIAL_TOKENS_ATTRIBUTES order). A SentencePiece
// model's user-defined pieces are matched in the text before the normalizer (transformers'
// convert_slow_tokenizer.py, SpmConverter.converted: AddedToken(normalized=False)): its
// Prepend("▁") would otherwise make each pattern "▁[IMG]", which "[IMG][IMG]" holds once.
void add_tokens(const Vocab& vocab, bool spm, const Specials& specials, AddedTokens& added) {
  if (vocab.types) {
    for (std::size_t i = 0; i < vocab.tokens.size(); ++i) {
      const std::int64_t t = (*vocab.types)[i];
      if (t == 3) added.add(vocab.tokens[i]);
      if (t == 4) added.add(vocab.tokens[i], false, spm ? std::optional(false) : std::nullopt);
    }
  }
  for (const auto* t : {&specials.bos, &specials.eos, &specials.unk, &specials.sep, &specials.pad,
                        &specials.cls, &specials.mask}) {
    if (*t) added.add(**t);
  }
}

// llama.cpp's add_bos/add_eos: tokenizer.ggml.add_bos_token / add_eos_token, else add_bos
// true for SentencePiece and the Llama 3 pre-tokenizer, add_eos true for UGM (T5's "$A </s>"),
// false otherwise; add_bos always true for Gemma 4
// (llama_vocab::impl::load's "workaround for Gemma 4"). The original tokenizer adds them by
// its post_processor: a TemplateProcessing (LlamaTokenizerFast.update_post_processor's). WPM
// always adds [CLS] and [SEP] (llama_vocab::impl::tokenize), as BERT's template does. An empty
// string when fine, else the reason: a token the template cannot hold.
std::string post_processor_tokens(const Facts& facts, Specials& specials) {
  const Vocab& vocab = facts.vocab;
  specials.add_bos =
      (facts.gemma4 || vocab.add_bos.value_or(facts.spm || facts.row->names.front() == "llama3")) &&
      specials.bos.has_value();
  specials.add_eos = vocab.add_eos.value_or(facts.ugm) && specials.eos.has_value();
  for (const auto& [on, token, key] :
       {std::tuple{specials.add_bos, &specials.bos, "tokenizer.ggml.bos_token_id"},
        std::tuple{specials.add_eos, &specials.eos, "tokenizer.ggml.eos_token_id"},
        std::tuple{facts.wpm, &specials.cls, "tokenizer.ggml.cls_token_id"},
        std::tuple{facts.wpm, &specials.sep, "tokenizer.ggml.seperator_token_id"}}) {
    if (on && !templatable(**token)) {
      return fmt::format("{}: its token cannot stand in a TemplateProcessing template", key);
    }
  }
  return "";
}

// One item of a TemplateProcessing template (tokenizers' processors/template serialization): the
// sequence `name` ("A" or "B") or the special token `name`.
json template_piece(int type_id, bool sequence, std::string_view name) {
  return sequence ? json{{"Sequence", {{"id", name}, {"type_id", type_id}}}}
                  : json{{"SpecialToken", {{"id", name}, {"type_id", type_id}}}};
}

// TemplateProcessing's special_tokens entry of `token`, with its id among the added tokens.
json template_special(const std::string& token, const AddedTokens& added) {
  return {
      {"id", token}, {"ids", json::array({*added.id(token)})}, {"tokens", json::array({token})}};
}

// The TemplateProcessing post-processor of these templates and special tokens.
json template_processing_json(const json& single, const json& pair, const json& special) {
  return {{"type", "TemplateProcessing"},
          {"single", single},
          {"pair", pair},
          {"special_tokens", special}};
}

// The TemplateProcessing that adds bos and eos around each sequence as `specials` says
// (LlamaTokenizerFast.update_post_processor's "bos $A eos bos $B:1 eos:1").
json template_processing(const Specials& specials, const AddedTokens& added) {
  json single = json::array(), pair = json::array(), special = json::object();
  for (int type_id = 0; type_id < 2; ++type_id) {
    json& seq = type_id == 0 ? single : pair;
    if (specials.add_bos) seq.push_back(template_piece(type_id, false, *specials.bos));
    seq.push_back(template_piece(type_id, true, type_id == 0 ? "A" : "B"));
    if (specials.add_eos) seq.push_back(template_piece(type_id, false, *specials.eos));
  }
  pair.insert(pair.begin(), single.begin(), single.end());
  for (const auto* t :
       {specials.add_bos ? &*specials.bos : nullptr, specials.add_eos ? &*specials.eos : nullptr}) {
    if (t) special[*t] = template_special(*t, added);
  }
  return template_processing_json(single, pair, special);
}

// One tokenizer model's part of the files: tokenizer.json's members but "model" and
// "added_tokens", the model's JSON text, tokenizer_config.json's members of its own and its
// clean_up_tokenization_spaces.
struct ModelParts {
  json tok = json::object();  // all but "model" and "added_tokens"
  std::string model_text;
  json config = json::object();  // all but "added_tokens_decoder"
  bool clean_up = false;
};

// SentencePiece BPE as transformers' LlamaConverter writes it (convert_slow_tokenizer.py:
// normalizer Prepend("\u2581") when add_prefix_space, Replace(" ", "\u2581"); BPE with unk,
// fuse_unk, byte_fallback; decoder Replace, ByteFallback, Fuse, Strip). add_prefix_space
// is llama.cpp's add_space_prefix: tokenizer.ggml.add_space_prefix, else true. Gemma 4's is
// the same BPE over the whole text (llama-vocab.cpp, LLAMA_VOCAB_PRE_TYPE_GEMMA4: whitespace
// escaped to "\u2581", raw UTF-8, no word splitting), with the file's merges (llama.cpp
// requires them), no prefix (BPE's add_space_prefix is false) and no defaults for the special
// tokens. An empty string when fine, else the reason.
std::string sentencepiece_bpe(Facts& facts, const Specials& specials, const AddedTokens& added,
                              ModelParts& parts) {
  Vocab& vocab = facts.vocab;
  if (!vocab.merges) {
    if (facts.gemma4) return "tokenizer.ggml.model 'gemma4' without tokenizer.ggml.merges";
    if (!vocab.scores) return "no tokenizer.ggml.merges and no tokenizer.ggml.scores";
    if (std::string why = build_merges(vocab); !why.empty()) return why;
  }
  const bool prefix = facts.spm && vocab.add_space_prefix.value_or(true);
  parts.model_text = bpe_json(vocab, specials.unk, kSpmBpe, false);
  json seq = json::array();
  if (prefix) seq.push_back({{"type", "Prepend"}, {"prepend", "\u2581"}});
  seq.push_back(replace(" ", "\u2581"));
  parts.tok["normalizer"] =
      facts.gemma4 ? seq.back() : json{{"type", "Sequence"}, {"normalizers", seq}};
  parts.tok["pre_tokenizer"] = nullptr;
  json decoders =
      json::array({replace("\u2581", " "), {{"type", "ByteFallback"}}, {{"type", "Fuse"}}});
  if (prefix) decoders.push_back({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}});
  parts.tok["decoder"] = {{"type", "Sequence"}, {"decoders", decoders}};
  parts.tok["post_processor"] = template_processing(specials, added);
  // llama.cpp's clean_spaces is false for SPM; for Gemma 4 (BPE: true by default) the
  // original's, GemmaTokenizerFast's default false (transformers 4.57.6), which transformers
  // 5 also keeps for BPE (it ignores true there, as destructive).
  parts.clean_up = false;
  return "";
}

// Unigram as transformers' SpmConverter writes it (convert_slow_tokenizer.py, T5Converter):
// normalizer Precompiled(the SentencePiece model's charsmap, where the file has one),
// Strip(right), Replace(Regex(" {2,}"), "\u2581"); pre-tokenizer and decoder Metaspace,
// prepend_scheme "always" where add_space_prefix (SentencePiece's add_dummy_prefix, which
// the converter writes; llama.cpp's default false), else "never". llama.cpp's clean_spaces
// is true for UGM.
void unigram(const Vocab& vocab, const Specials& specials, const AddedTokens& added,
             ModelParts& parts) {
  parts.model_text = unigram_json(vocab, *vocab.unk);
  json seq = json::array();
  if (vocab.precompiled_charsmap) {
    seq.push_back(
        {{"type", "Precompiled"}, {"precompiled_charsmap", base64(*vocab.precompiled_charsmap)}});
  }
  seq.push_back({{"type", "Strip"}, {"strip_left", false}, {"strip_right", true}});
  seq.push_back({{"type", "Replace"}, {"pattern", {{"Regex", " {2,}"}}}, {"content", "\u2581"}});
  parts.tok["normalizer"] = {{"type", "Sequence"}, {"normalizers", seq}};
  const json metaspace = {
      {"type", "Metaspace"},
      {"replacement", "\u2581"},
      {"prepend_scheme", vocab.add_space_prefix.value_or(false) ? "always" : "never"},
      {"split", true}};
  parts.tok["pre_tokenizer"] = metaspace;
  parts.tok["decoder"] = metaspace;
  parts.tok["post_processor"] = template_processing(specials, added);
  parts.clean_up = true;
}

// WordPiece as the original BERT tokenizer.json has it (transformers' BertConverter):
// BertNormalizer (clean_text, handle_chinese_chars, strip_accents, lowercase),
// BertPreTokenizer, TemplateProcessing "[CLS] $A [SEP]" / "[CLS] $A [SEP] $B:1 [SEP]:1",
// WordPiece decoder; clean_up_tokenization_spaces true (llama.cpp's clean_spaces for WPM).
void wordpiece(const Facts& facts, const Specials& specials, const AddedTokens& added,
               ModelParts& parts) {
  parts.model_text = wordpiece_json(facts.vocab, *specials.unk);
  parts.tok["normalizer"] = {{"type", "BertNormalizer"},
                             {"clean_text", true},
                             {"handle_chinese_chars", true},
                             {"strip_accents", facts.strip_accents},
                             {"lowercase", facts.lowercase}};
  parts.tok["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  parts.tok["decoder"] = {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}};
  const json single = {template_piece(0, false, *specials.cls), template_piece(0, true, "A"),
                       template_piece(0, false, *specials.sep)};
  json pair = single;
  pair.push_back(template_piece(1, true, "B"));
  pair.push_back(template_piece(1, false, *specials.sep));
  json special = json::object();
  for (const std::string* t : {&*specials.cls, &*specials.sep}) {
    special[*t] = template_special(*t, added);
  }
  parts.tok["post_processor"] = template_processing_json(single, pair, special);
  parts.clean_up = true;
  parts.config["do_lower_case"] = facts.lowercase;
}

// Byte-level BPE (GPT2Converter's model and decoder) with the row's pre-tokenizer; an empty
// string when fine, else the reason.
std::string byte_level_bpe(const Facts& facts, const Specials& specials, const AddedTokens& added,
                           ModelParts& parts) {
  const Vocab& vocab = facts.vocab;
  const PreTokenizerRow& row = *facts.row;
  if (!vocab.merges) return "no tokenizer.ggml.merges";
  parts.model_text = bpe_json(vocab, std::nullopt, kByteLevelBpe, row.ignore_merges);
  parts.tok["normalizer"] = row.nfc ? json{{"type", "NFC"}} : json(nullptr);
  parts.tok["pre_tokenizer"] = pre_tokenizer_json(row);
  parts.tok["decoder"] = byte_level(true, true);
  parts.tok["post_processor"] = specials.add_bos || specials.add_eos
                                    ? template_processing(specials, added)
                                    : byte_level(true, false);
  parts.clean_up = row.clean_up;
  return "";
}

// The tokenizer model's part of the files; an empty string when fine, else the reason.
std::string model_parts(Facts& facts, const Specials& specials, const AddedTokens& added,
                        ModelParts& parts) {
  if (facts.spm || facts.gemma4) return sentencepiece_bpe(facts, specials, added, parts);
  if (facts.ugm) {
    unigram(facts.vocab, specials, added, parts);
  } else if (facts.wpm) {
    wordpiece(facts, specials, added, parts);
  } else {
    return byte_level_bpe(facts, specials, added, parts);
  }
  return "";
}

// The added tokens in id order: tokenizer.json's list, and tokenizer_config.json's
// added_tokens_decoder (save_pretrained writes it sorted by id).
std::string added_tokens_json(const std::vector<Added>& sorted) {
  std::string text = "[\n    ";
  for (const Added& a : sorted) {
    if (&a != &sorted.front()) text += kNext;
    fmt::format_to(std::back_inserter(text), R"({{"id": {}, "content": )", a.id);
    append_json_string(text, a.content);
    fmt::format_to(std::back_inserter(text),
                   R"(, "single_word": false, "lstrip": false, "rstrip": false, )"
                   R"("normalized": {}, "special": {}}})",
                   a.normalized, a.special);
  }
  return text + "\n  ]";
}

// tokenizer_config.json's added_tokens_decoder: the same tokens, keyed by id (added_tokens_json).
std::string added_tokens_decoder_json(const std::vector<Added>& sorted) {
  std::string text = "{\n    ";
  for (const Added& a : sorted) {
    if (&a != &sorted.front()) text += kNext;
    fmt::format_to(std::back_inserter(text), R"("{}": {{"content": )", a.id);
    append_json_string(text, a.content);
    fmt::format_to(std::back_inserter(text),
                   R"(, "lstrip": false, "normalized": {}, "rstrip": false, )"
                   R"("single_word": false, "special": {}}})",
                   a.normalized, a.special);
  }
  return text + "\n  }";
}

// tokenizer_config.json: tokenizer_class PreTrainedTokenizerFast, which transformers 4.57.6
// and 5.24.0 both build from tokenizer.json as written (a named class such as
// LlamaTokenizer or GPT2Tokenizer makes transformers 5 rebuild its own normalizer and
// pre-tokenizer); the special tokens (also special_tokens_map.json's, `map`); chat_template.
void config_members(const Facts& facts, const Specials& specials, ModelParts& parts, json& map) {
  json& config = parts.config;
  for (const auto& [name, value] :
       {std::pair{"bos_token", &specials.bos}, std::pair{"eos_token", &specials.eos},
        std::pair{"unk_token", &specials.unk}, std::pair{"sep_token", &specials.sep},
        std::pair{"pad_token", &specials.pad}, std::pair{"cls_token", &specials.cls},
        std::pair{"mask_token", &specials.mask}}) {
    if (*value) {
      config[name] = **value;
      map[name] = **value;
    }
  }
  // No unknown token: said so, as Qwen2's own tokenizer_config.json does ("unk_token": null).
  // transformers 5 loads a model_type's own tokenizer class whatever tokenizer_class says
  // (tokenization_auto.py, MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS), and a class default such
  // as Qwen2Tokenizer's unk_token "<|endoftext|>" would otherwise apply.
  if (!specials.unk) config["unk_token"] = nullptr;
  config["clean_up_tokenization_spaces"] = parts.clean_up;
  config["extra_special_tokens"] = json::object();
  if (facts.vocab.chat_template) config["chat_template"] = *facts.vocab.chat_template;
  config["tokenizer_class"] = "PreTrainedTokenizerFast";
  // PreTrainedTokenizerFast's default model_input_names include token_type_ids, which the
  // causal LMs' generate() refuses; LlamaTokenizerFast, GPT2TokenizerFast, Qwen2TokenizerFast
  // and GemmaTokenizerFast name these two (their model_input_names); BertTokenizerFast has
  // token_type_ids too.
  config["model_input_names"] = facts.wpm ? json{"input_ids", "token_type_ids", "attention_mask"}
                                          : json{"input_ids", "attention_mask"};
}

// The three files: the model's parts with the members shared by every model, the added tokens
// and the special tokens.
HfTokenizer tokenizer_files(const Facts& facts, const Specials& specials, const AddedTokens& added,
                            ModelParts& parts) {
  parts.tok["version"] = "1.0";
  parts.tok["truncation"] = nullptr;
  parts.tok["padding"] = nullptr;
  json map = json::object();
  config_members(facts, specials, parts, map);
  const std::vector<Added> sorted = added.sorted();
  const std::string added_list = added_tokens_json(sorted);
  const std::string decoder = added_tokens_decoder_json(sorted);
  HfTokenizer out;
  out.tokenizer_json = with_members(parts.tok.dump(2, ' ', false, json::error_handler_t::replace),
                                    {{"added_tokens", added_list}, {"model", parts.model_text}}) +
                       "\n";
  out.tokenizer_config_json =
      with_members(parts.config.dump(2, ' ', false, json::error_handler_t::replace),
                   {{"added_tokens_decoder", decoder}}) +
      "\n";
  out.special_tokens_map_json = dump(map);
  return out;
}

}  // namespace

HfTokenizerResult render_hf_tokenizer(const GgufFile& file) {
  Facts facts;
  std::string why = read_facts(file, facts);
  if (why.empty()) why = default_ids(facts);
  if (why.empty()) why = read_model_ids(file, facts);
  if (!why.empty()) return no_tokenizer(why);
  Specials specials = special_tokens(facts);
  AddedTokens added(facts.vocab);
  add_tokens(facts.vocab, facts.spm, specials, added);
  ModelParts parts;
  why = post_processor_tokens(facts, specials);
  if (why.empty()) why = model_parts(facts, specials, added, parts);
  if (!why.empty()) return no_tokenizer(why);
  return {tokenizer_files(facts, specials, added, parts), ""};
}

}  // namespace ggufs
