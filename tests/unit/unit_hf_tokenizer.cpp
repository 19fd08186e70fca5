// Unit tests of render_hf_tokenizer (src/hf/hf_tokenizer.cpp) on hostile and incomplete
// tokenizer metadata: no tokenizer, and a one-line reason naming the key at fault; never an
// exception; and the pre-tokenizer of each tokenizer.ggml.pre row against llama.cpp's own
// regexes. The files it renders are checked against transformers itself in
// tests/python/test_hf_tokenizer.py and against the original tokenizers' ids in
// tests/python/test_llama_vocab.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/gguf.h"
#include "ggufs/hf_tokenizer.h"
#include "metadata_builder.h"
#include "test_util.h"

namespace ggufs {
namespace {

using namespace ggufs::test;  // metadata_builder.h

// A small model of `arch` with a SentencePiece vocabulary ("llama") or a byte-level one
// ("gpt2", with merges).
GgufFile tiny(const std::string& arch, bool byte_level) {
  GgufFile f = tiny_decoder(arch, 2);
  add(f, arch + ".attention.layer_norm_epsilon", f32(1e-5f));
  if (byte_level) {
    add(f, "tokenizer.ggml.model", str("gpt2"));
    add(f, "tokenizer.ggml.tokens",
        arr(ValueType::kString, {str("a"), str("b"), str("ab"), str("\xC4\xA0"),
                                 str("\xC4\xA0"
                                     "a")}));
    add(f, "tokenizer.ggml.token_type",
        arr(ValueType::kInt32, {i32(1), i32(1), i32(1), i32(1), i32(1)}));
    add(f, "tokenizer.ggml.merges", arr(ValueType::kString, {str("a b"), str("\xC4\xA0 a")}));
  } else {
    add(f, "tokenizer.ggml.model", str("llama"));
    add(f, "tokenizer.ggml.tokens",
        arr(ValueType::kString,
            {str("<unk>"), str("<s>"), str("</s>"), str("\xE2\x96\x81"), str("a")}));
    add(f, "tokenizer.ggml.scores",
        arr(ValueType::kFloat32, {f32(0), f32(0), f32(0), f32(-1), f32(-2)}));
    add(f, "tokenizer.ggml.token_type",
        arr(ValueType::kInt32, {i32(2), i32(3), i32(3), i32(1), i32(1)}));
    add(f, "tokenizer.ggml.unknown_token_id", u32(0));
  }
  add(f, "tokenizer.ggml.bos_token_id", u32(1));
  add(f, "tokenizer.ggml.eos_token_id", u32(2));
  add(f, "tokenizer.ggml.padding_token_id", u32(2));
  add_tensor(f, "token_embd.weight", {5, 16});
  return f;
}

// No tokenizer, and a one-line reason that holds `needle` (the key at fault).
void expect_refused(const GgufFile& f, const std::string& needle) {
  HfTokenizerResult r;
  ASSERT_NO_THROW(r = render_hf_tokenizer(f));
  EXPECT_FALSE(r.tokenizer.has_value()) << "rendered although " << needle << " is at fault";
  EXPECT_NE(r.reason.find(needle), std::string::npos) << "reason: " << r.reason;
  EXPECT_EQ(r.reason.find('\n'), std::string::npos) << "reason: " << r.reason;
}

// The tokenizer depends on the tokenizer keys alone: any architecture, none, or a file without a
// config gets the same files, all for PreTrainedTokenizerFast.
TEST(HfTokenizer, TinyModelsRender) {
  for (const bool byte_level : {false, true}) {
    const HfTokenizerResult base = render_hf_tokenizer(tiny("llama", byte_level));
    ASSERT_TRUE(base.tokenizer.has_value()) << base.reason;
    for (const char* arch : {"llama", "phi3", "gemma2", "gpt2", "starcoder2", "stablelm", "qwen2",
                             "mistral", "bert", "falcon", "command-r"}) {
      const HfTokenizerResult r = render_hf_tokenizer(tiny(arch, byte_level));
      ASSERT_TRUE(r.tokenizer.has_value()) << arch << ": " << r.reason;
      EXPECT_TRUE(r.reason.empty());
      EXPECT_EQ(r.tokenizer->tokenizer_json, base.tokenizer->tokenizer_json) << arch;
      EXPECT_EQ(r.tokenizer->tokenizer_config_json, base.tokenizer->tokenizer_config_json) << arch;
      const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
      EXPECT_EQ(tok["version"], "1.0") << arch;
      EXPECT_EQ(nlohmann::json::parse(r.tokenizer->tokenizer_config_json)["tokenizer_class"],
                "PreTrainedTokenizerFast");
      EXPECT_TRUE(nlohmann::json::parse(r.tokenizer->special_tokens_map_json).is_object());
    }
    GgufFile f = tiny("llama", byte_level);
    erase(f, "general.architecture");
    const HfTokenizerResult r = render_hf_tokenizer(f);
    ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
    EXPECT_EQ(r.tokenizer->tokenizer_json, base.tokenizer->tokenizer_json);
  }
}

// tokenizer.ggml.model: absent, or a model not rendered (yet).
TEST(HfTokenizer, ModelMissingOrOther) {
  GgufFile f = tiny("llama", false);
  erase(f, "tokenizer.ggml.model");
  expect_refused(f, "tokenizer.ggml.model");
  for (const char* model : {"rwkv", "plamo2", "BERT", "T5"}) {
    f = tiny("llama", false);
    *find(f, "tokenizer.ggml.model") = str(model);
    expect_refused(f, fmt::format("tokenizer.ggml.model '{}'", model));
  }
}

TEST(HfTokenizer, TokensMissingOrWrongType) {
  GgufFile f = tiny("llama", false);
  erase(f, "tokenizer.ggml.tokens");
  erase(f, "tokenizer.ggml.scores");
  erase(f, "tokenizer.ggml.token_type");
  erase(f, "tokenizer.ggml.bos_token_id");
  erase(f, "tokenizer.ggml.eos_token_id");
  erase(f, "tokenizer.ggml.unknown_token_id");
  erase(f, "tokenizer.ggml.padding_token_id");
  add(f, "llama.vocab_size", u32(5));
  expect_refused(f, "tokenizer.ggml.tokens");
  f = tiny("llama", false);
  *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kInt32, {i32(1), i32(2), i32(3)});
  expect_refused(f, "tokenizer.ggml.tokens");
  f = tiny("llama", false);
  *find(f, "tokenizer.ggml.tokens") = str("<unk>");
  expect_refused(f, "tokenizer.ggml.tokens");
}

TEST(HfTokenizer, TokensOneElementOrRepeated) {
  GgufFile f = tiny("gpt2", true);
  *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kString, {str("a")});
  expect_refused(f, "tokenizer.ggml.tokens");
  f = tiny("gpt2", true);
  *find(f, "tokenizer.ggml.tokens") =
      arr(ValueType::kString, {str("a"), str("b"), str("ab"), str("a"), str("c")});
  expect_refused(f, "tokenizer.ggml.tokens repeats");
}

TEST(HfTokenizer, HugeVocabulary) {
  GgufFile f = tiny("gpt2", true);
  Array big(ValueType::kString);
  for (std::size_t i = 0; i <= kMaxHfTokenizerVocab; ++i) big.push_string(std::to_string(i));
  *find(f, "tokenizer.ggml.tokens") = Value{ValueType::kArray, std::move(big)};
  expect_refused(f, "tokenizer.ggml.tokens has");
}

TEST(HfTokenizer, InvalidUtf8Token) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.tokens") =
      arr(ValueType::kString, {str("<unk>"), str("<s>"), str("</s>"), str("\xE2\x96"), str("a")});
  expect_refused(f, "tokenizer.ggml.tokens");
}

TEST(HfTokenizer, ScoresWrong) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.scores") = arr(ValueType::kFloat32, {f32(0), f32(0)});
  expect_refused(f, "tokenizer.ggml.scores");
  *find(f, "tokenizer.ggml.scores") =
      arr(ValueType::kString, {str("0"), str("0"), str("0"), str("0"), str("0")});
  expect_refused(f, "tokenizer.ggml.scores");
  *find(f, "tokenizer.ggml.scores") =
      arr(ValueType::kFloat32, {f32(0), f32(0), f32(0), f32(NAN), f32(0)});
  expect_refused(f, "tokenizer.ggml.scores element 3");
  *find(f, "tokenizer.ggml.scores") = f32(0);
  expect_refused(f, "tokenizer.ggml.scores");
}

TEST(HfTokenizer, TokenTypeWrong) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.token_type") = arr(ValueType::kInt32, {i32(1), i32(1)});
  expect_refused(f, "tokenizer.ggml.token_type");
  *find(f, "tokenizer.ggml.token_type") =
      arr(ValueType::kFloat32, {f32(1), f32(1), f32(1), f32(1), f32(1)});
  expect_refused(f, "tokenizer.ggml.token_type");
}

TEST(HfTokenizer, MergesWrong) {
  GgufFile f = tiny("gpt2", true);
  // One merge is a vocabulary like any other (transformers 4.57.6's import alone fails on it).
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kString, {str("a b")});
  const HfTokenizerResult one = render_hf_tokenizer(f);
  ASSERT_TRUE(one.tokenizer.has_value()) << one.reason;
  EXPECT_EQ(nlohmann::json::parse(one.tokenizer->tokenizer_json)["model"]["merges"],
            nlohmann::json::parse(R"([["a", "b"]])"));
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kString, {str("a b"), str("ab")});
  expect_refused(f, "tokenizer.ggml.merges element 1");
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kString, {str("a b"), str("a b c")});
  expect_refused(f, "tokenizer.ggml.merges element 1");
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kString, {str("a b"), str("b a")});
  expect_refused(f, "tokenizer.ggml.merges element 1");  // "ba" is no token
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kInt32, {i32(1), i32(2)});
  expect_refused(f, "tokenizer.ggml.merges");
  erase(f, "tokenizer.ggml.merges");
  expect_refused(f, "tokenizer.ggml.merges");
}

// "t5" (UGM): Unigram with the scores, unk from the file (else llama.cpp's 2), the precompiled
// charsmap in base64 (RFC 4648: 00 ff 61 is "AP9h"), "$A </s>"; refused without scores, with a
// charsmap that is not bytes.
TEST(HfTokenizer, Unigram) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.model") = str("t5");
  add(f, "tokenizer.ggml.precompiled_charsmap",
      arr(ValueType::kUint8, {Value{ValueType::kUint8, std::uint64_t{0}},
                              Value{ValueType::kUint8, std::uint64_t{0xff}},
                              Value{ValueType::kUint8, std::uint64_t{'a'}}}));
  add(f, "tokenizer.ggml.add_space_prefix", boolean(true));
  const HfTokenizerResult r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  EXPECT_EQ(tok["model"]["type"], "Unigram");
  EXPECT_EQ(tok["model"]["unk_id"], 0);
  EXPECT_EQ(tok["model"]["vocab"][4], nlohmann::json::parse(R"(["a", -2.0])"));
  EXPECT_EQ(tok["normalizer"]["normalizers"][0]["precompiled_charsmap"], "AP9h");
  EXPECT_EQ(tok["pre_tokenizer"]["prepend_scheme"], "always");
  EXPECT_EQ(tok["post_processor"]["single"][1]["SpecialToken"]["id"], "</s>");
  *find(f, "tokenizer.ggml.precompiled_charsmap") = arr(ValueType::kString, {str("a"), str("b")});
  expect_refused(f, "tokenizer.ggml.precompiled_charsmap");
  erase(f, "tokenizer.ggml.precompiled_charsmap");
  erase(f, "tokenizer.ggml.scores");
  expect_refused(f, "tokenizer.ggml.scores");
}

TEST(HfTokenizer, LlamaNeedsMergesOrScores) {
  GgufFile f = tiny("llama", false);
  erase(f, "tokenizer.ggml.scores");
  expect_refused(f, "tokenizer.ggml.scores");
}

// The merges of a tokenizer.json built from scores, as (left, right) token pairs.
std::vector<std::pair<std::string, std::string>> built_merges(const GgufFile& f) {
  const HfTokenizerResult r = render_hf_tokenizer(f);
  if (!r.tokenizer) {
    ADD_FAILURE() << r.reason;
    return {};
  }
  const auto j = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& m : j["model"]["merges"]) out.emplace_back(m[0], m[1]);
  return out;
}

// Tokens of any length get their merges (GGUFTokenizerSkeleton splits every token): no length
// limit, since finding a token's splits costs time linear in its length.
TEST(HfTokenizer, LongTokensGetTheirMerges) {
  GgufFile f = tiny("llama", false);
  const std::string half(40000, 'x');
  *find(f, "tokenizer.ggml.tokens") =
      arr(ValueType::kString, {str("<unk>"), str("<s>"), str("</s>"), str(half + half), str(half)});
  const auto merges = built_merges(f);
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_EQ(merges[0].first, half);
  EXPECT_EQ(merges[0].second, half);
}

// A vocabulary "a", "aa", … up to k "a"s with scores has k(k-1)/2 splits into two tokens: merges
// quadratic in the tokens, bytes cubic. Refused past kMaxBuiltMergesPerToken per token.
TEST(HfTokenizer, MergesBuiltFromScoresAreBounded) {
  GgufFile f = tiny("llama", false);
  std::vector<Value> tokens = {str("<unk>"), str("<s>"), str("</s>")}, scores, types;
  for (std::size_t k = 1; k <= 200; ++k) tokens.push_back(str(std::string(k, 'a')));
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    scores.push_back(f32(-static_cast<float>(i)));
    types.push_back(i32(i < 3 ? 3 : 1));
  }
  *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kString, tokens);
  *find(f, "tokenizer.ggml.scores") = arr(ValueType::kFloat32, scores);
  *find(f, "tokenizer.ggml.token_type") = arr(ValueType::kInt32, types);
  expect_refused(f, "tokenizer.ggml.scores without tokenizer.ggml.merges");
  // Up to 20 "a"s: 190 merges of 23 tokens, under 16 per token: built, in the skeleton's order
  // (by the merged token's score, then the left token's): the last is "a"*20's split with the
  // lowest-scored left token.
  tokens.resize(23);
  scores.resize(23);
  types.resize(23);
  *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kString, tokens);
  *find(f, "tokenizer.ggml.scores") = arr(ValueType::kFloat32, scores);
  *find(f, "tokenizer.ggml.token_type") = arr(ValueType::kInt32, types);
  const auto merges = built_merges(f);
  ASSERT_EQ(merges.size(), 190u);
  EXPECT_EQ(merges.front(), (std::pair<std::string, std::string>("a", "a")));
  EXPECT_EQ(merges.back(), (std::pair<std::string, std::string>(std::string(19, 'a'), "a")));
}

// Every token special (token_type 3): each is an added token with its own id, found through an
// index (a search of the list for each token was quadratic: 25 s for 160 000 tokens).
TEST(HfTokenizer, EveryTokenSpecial) {
  GgufFile f = tiny("llama", false);
  constexpr std::size_t kTokens = 400000;
  std::vector<Value> tokens = {str("<unk>"), str("<s>"), str("</s>")}, scores, types;
  for (std::size_t i = tokens.size(); i < kTokens; ++i)
    tokens.push_back(str(fmt::format("<t{}>", i)));
  for (std::size_t i = 0; i < kTokens; ++i) {
    scores.push_back(f32(0));
    types.push_back(i32(3));
  }
  *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kString, tokens);
  *find(f, "tokenizer.ggml.scores") = arr(ValueType::kFloat32, scores);
  *find(f, "tokenizer.ggml.token_type") = arr(ValueType::kInt32, types);
  const HfTokenizerResult r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer) << r.reason;
  const auto j = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  const auto& added = j["added_tokens"];
  ASSERT_EQ(added.size(), kTokens);
  for (std::size_t i = 0; i < kTokens; i += 9973) {
    EXPECT_EQ(added[i]["id"], i);
    EXPECT_EQ(added[i]["content"], std::get<std::string>(tokens[i].data));
  }
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_EQ(config["added_tokens_decoder"].size(), kTokens);
  EXPECT_EQ(config["added_tokens_decoder"]["123456"]["content"], "<t123456>");
}

TEST(HfTokenizer, IdsOutOfRangeOrWrongType) {
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    GgufFile f = tiny("llama", false);
    if (!find(f, key)) add(f, key, u32(0));
    *find(f, key) = u32(5);
    expect_refused(f, key);
    *find(f, key) = u32(1ull << 40);
    expect_refused(f, key);
  }
  // A string id already fails the config (render_hf_config): the reason names the key too.
  GgufFile f = tiny("gpt2", true);
  *find(f, "tokenizer.ggml.bos_token_id") = str("1");
  expect_refused(f, "tokenizer.ggml.bos_token_id");
  f = tiny("gpt2", true);
  *find(f, "tokenizer.ggml.bos_token_id") = i32(-1);
  expect_refused(f, "tokenizer.ggml.bos_token_id");
}

// SentencePiece without the id keys: llama.cpp's defaults (unk 0, bos 1, eos 2), bos added.
TEST(HfTokenizer, SpmDefaultSpecialIds) {
  GgufFile f = tiny("llama", false);
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"}) {
    erase(f, key);
  }
  const HfTokenizerResult r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_EQ(config["unk_token"], "<unk>");
  EXPECT_EQ(config["bos_token"], "<s>");
  EXPECT_EQ(config["eos_token"], "</s>");
  EXPECT_FALSE(config.contains("pad_token")) << config.dump();
  const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  EXPECT_EQ(tok["post_processor"]["single"][0]["SpecialToken"]["id"], "<s>");
}

// tokenizer.ggml.add_bos_token / add_eos_token make the TemplateProcessing; a byte-level
// vocabulary without them adds nothing (ByteLevel post-processor).
TEST(HfTokenizer, AddBosEos) {
  GgufFile f = tiny("gpt2", true);
  auto post = [](const GgufFile& g) {
    const HfTokenizerResult r = render_hf_tokenizer(g);
    EXPECT_TRUE(r.tokenizer.has_value()) << r.reason;
    return r.tokenizer ? nlohmann::json::parse(r.tokenizer->tokenizer_json)["post_processor"]
                       : nlohmann::json();
  };
  EXPECT_EQ(post(f)["type"], "ByteLevel");
  add(f, "tokenizer.ggml.add_bos_token", boolean(true));
  add(f, "tokenizer.ggml.add_eos_token", boolean(true));
  const auto p = post(f);
  EXPECT_EQ(p["type"], "TemplateProcessing");
  EXPECT_EQ(p["single"].size(), 3u) << p.dump();
  EXPECT_EQ(p["pair"].size(), 6u) << p.dump();
  f = tiny("llama", false);
  add(f, "tokenizer.ggml.add_bos_token", boolean(false));
  EXPECT_EQ(post(f)["single"].size(), 1u);
}

TEST(HfTokenizer, OtherKeysWrongType) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.model") = u32(1);
  expect_refused(f, "tokenizer.ggml.model");
  f = tiny("llama", false);
  add(f, "tokenizer.ggml.add_space_prefix", u32(1));
  expect_refused(f, "tokenizer.ggml.add_space_prefix");
  f = tiny("llama", false);
  add(f, "tokenizer.chat_template", boolean(true));
  expect_refused(f, "tokenizer.chat_template");
  for (const char* key : {"tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"}) {
    f = tiny("llama", false);
    add(f, key, str("true"));
    expect_refused(f, key);
  }
  f = tiny("gpt2", true);
  add(f, "tokenizer.ggml.pre", u32(1));
  expect_refused(f, "tokenizer.ggml.pre");
}

TEST(HfTokenizer, BosTokenNotTemplatable) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.tokens") = arr(
      ValueType::kString, {str("<unk>"), str("<s> x"), str("</s>"), str("\xE2\x96\x81"), str("a")});
  expect_refused(f, "tokenizer.ggml.bos_token_id");
}

// --- The pre-tokenizer rows, against llama.cpp's src/llama-vocab.cpp ---------------------------
//
// The regexes below are llm_tokenizer_bpe's regex_exprs for each LLAMA_VOCAB_PRE_TYPE_*, copied
// from llama.cpp's source (its "original regex from tokenizer.json" where it adapted one for
// std::regex; non-ASCII characters written as \u escapes), and the tokenizer.ggml.pre names
// llama_vocab::impl::load maps to each. The expected pre_tokenizer is built from them by the rule
// the original tokenizer.json files follow: a lone "\p{N}" is Digits(individual_digits=true),
// GPT-2's regex last is ByteLevel's own (use_regex=true), every other regex a Split(Isolated),
// then ByteLevel.

const char* const kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

nlohmann::json expected_pre_tokenizer(std::vector<std::string> regexes) {
  using nlohmann::json;
  bool gpt2_regex = !regexes.empty() && regexes.back() == kGpt2;
  if (gpt2_regex) regexes.pop_back();
  const json byte_level = {{"type", "ByteLevel"},
                           {"add_prefix_space", false},
                           {"trim_offsets", true},
                           {"use_regex", gpt2_regex}};
  if (regexes.empty()) return byte_level;
  json list = json::array();
  for (const std::string& r : regexes) {
    if (r == "\\p{N}") {
      list.push_back({{"type", "Digits"}, {"individual_digits", true}});
    } else {
      list.push_back({{"type", "Split"},
                      {"pattern", {{"Regex", r}}},
                      {"behavior", "Isolated"},
                      {"invert", false}});
    }
  }
  list.push_back(byte_level);
  return {{"type", "Sequence"}, {"pretokenizers", list}};
}

nlohmann::json rendered(const std::string& pre) {
  GgufFile f = tiny("gpt2", true);
  add(f, "tokenizer.ggml.pre", str(pre));
  const HfTokenizerResult r = render_hf_tokenizer(f);
  EXPECT_TRUE(r.tokenizer.has_value()) << pre << ": " << r.reason;
  return r.tokenizer ? nlohmann::json::parse(r.tokenizer->tokenizer_json) : nlohmann::json();
}

void expect_row(const std::vector<std::string>& names, const std::vector<std::string>& regexes,
                bool ignore_merges = false, bool nfc = false) {
  const nlohmann::json want = expected_pre_tokenizer(regexes);
  for (const std::string& name : names) {
    const nlohmann::json tok = rendered(name);
    EXPECT_EQ(tok["pre_tokenizer"], want) << name;
    EXPECT_EQ(tok["model"]["ignore_merges"], ignore_merges) << name;
    const nlohmann::json normalizer = nfc ? nlohmann::json{{"type", "NFC"}} : nlohmann::json();
    EXPECT_EQ(tok["normalizer"], normalizer) << name;
  }
}

TEST(HfTokenizer, PreGpt2) {
  expect_row(
      {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
       "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling"},
      {kGpt2});
  // Unknown names, "default" and none fall back to GPT-2's regex.
  expect_row({"default", "no-such-pre"}, {kGpt2});
}

TEST(HfTokenizer, PreStarcoder) {
  expect_row(
      {"starcoder", "refact", "smollm", "codeshell", "exaone", "minerva", "mellum2", "command-r"},
      {"\\p{N}", kGpt2});
  EXPECT_EQ(
      nlohmann::json::parse(render_hf_tokenizer([] {
                              GgufFile f = tiny("gpt2", true);
                              add(f, "tokenizer.ggml.pre", str("command-r"));
                              return f;
                            }())
                                .tokenizer->tokenizer_config_json)["clean_up_tokenization_spaces"],
      false);
}

TEST(HfTokenizer, PreLlama3) {
  const std::string llama3 =
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
      "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  expect_row({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0",
              "lfm2", "jina-v5-nano"},
             {llama3}, true);
  expect_row({"dbrx", "smaug-bpe"}, {llama3}, false);
  // Llama 3 adds bos by default (llama.cpp's add_bos for the type).
  EXPECT_EQ(rendered("llama-bpe")["post_processor"]["type"], "TemplateProcessing");
}

TEST(HfTokenizer, PreDeepseekLlm) {
  expect_row(
      {"deepseek-llm"},
      {"[\r\n]",
       "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293"
       "\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C"
       "\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-"
       "\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A"
       "\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D"
       "\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3"
       "\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115"
       "\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-"
       "\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-"
       "\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06"
       "\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3"
       "\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF"
       "\U0001E900-\U0001E943]+",
       "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+", "\\s+$",
       "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", "\\p{N}+"});
}

TEST(HfTokenizer, PreDeepseekCoder) {
  expect_row({"deepseek-coder"}, {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+",
                                  "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+", "\\p{N}"});
}

TEST(HfTokenizer, PreFalcon) {
  expect_row({"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"});
}

TEST(HfTokenizer, PreQwen) {
  expect_row({"qwen2", "deepseek-r1-qwen"},
             {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
              "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
             false, true);
  expect_row({"qwen35"}, {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|"
                          "\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
                          "\\s+(?!\\S)|\\s+"});
}

// --- tokenizer.ggml.model "bert" (llama.cpp's WPM) -----------------------------------------

// A WordPiece vocabulary as llama.cpp's converter stores it (conversion/bert.py,
// BertModel.set_vocab): the original "[PAD] [UNK] [CLS] [SEP] [MASK] the ##s [unused0]" with
// "##s" as "s", "the" as "\u2581the", the CONTROL tokens as they are; `bracketed` as converters
// before the token-type test stored "[unused0]" (as it is), else "\u2581[unused0]".
GgufFile tiny_bert(bool bracketed) {
  GgufFile f = tiny_decoder("bert", 1);
  add(f, "tokenizer.ggml.model", str("bert"));
  add(f, "tokenizer.ggml.pre", str("bert-bge"));
  add(f, "tokenizer.ggml.tokens",
      arr(ValueType::kString,
          {str("[PAD]"), str("[UNK]"), str("[CLS]"), str("[SEP]"), str("[MASK]"),
           str("\xE2\x96\x81the"), str("s"), str(bracketed ? "[unused0]" : "\xE2\x96\x81[unused0]"),
           str("\xE2\x96\x81s")}));
  add(f, "tokenizer.ggml.token_type",
      arr(ValueType::kInt32,
          {i32(3), i32(3), i32(3), i32(3), i32(3), i32(1), i32(1), i32(1), i32(1)}));
  add(f, "tokenizer.ggml.unknown_token_id", u32(1));
  add(f, "tokenizer.ggml.seperator_token_id", u32(3));
  add(f, "tokenizer.ggml.padding_token_id", u32(0));
  add(f, "tokenizer.ggml.cls_token_id", u32(2));
  add(f, "tokenizer.ggml.mask_token_id", u32(4));
  return f;
}

// The original BERT tokenizer.json (transformers' BertConverter, as bge-small-en's): WordPiece
// with the "##" prefix and the original vocabulary, BertNormalizer, BertPreTokenizer,
// "[CLS] $A [SEP]", WordPiece decoder; BERT's five special tokens.
TEST(HfTokenizer, BertIsWordPiece) {
  for (const bool bracketed : {false, true}) {
    const HfTokenizerResult r = render_hf_tokenizer(tiny_bert(bracketed));
    ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
    const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
    const auto& model = tok["model"];
    EXPECT_EQ(model["type"], "WordPiece");
    EXPECT_EQ(model["unk_token"], "[UNK]");
    EXPECT_EQ(model["continuing_subword_prefix"], "##");
    EXPECT_EQ(model["max_input_chars_per_word"], 100);
    EXPECT_EQ(model["vocab"], (nlohmann::json{{"[PAD]", 0},
                                              {"[UNK]", 1},
                                              {"[CLS]", 2},
                                              {"[SEP]", 3},
                                              {"[MASK]", 4},
                                              {"the", 5},
                                              {"##s", 6},
                                              {"[unused0]", 7},
                                              {"s", 8}}))
        << bracketed;
    EXPECT_EQ(tok["normalizer"], (nlohmann::json{{"type", "BertNormalizer"},
                                                 {"clean_text", true},
                                                 {"handle_chinese_chars", true},
                                                 {"strip_accents", true},
                                                 {"lowercase", true}}));
    EXPECT_EQ(tok["pre_tokenizer"], (nlohmann::json{{"type", "BertPreTokenizer"}}));
    EXPECT_EQ(tok["decoder"],
              (nlohmann::json{{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}));
    const auto& post = tok["post_processor"];
    EXPECT_EQ(post["type"], "TemplateProcessing");
    auto ids = [](const nlohmann::json& seq) {
      std::vector<std::string> out;
      for (const auto& p : seq) {
        const bool sequence = p.contains("Sequence");
        const auto& v = sequence ? p["Sequence"] : p["SpecialToken"];
        out.push_back((sequence ? "$" : "") + v["id"].get<std::string>() + ":" +
                      std::to_string(v["type_id"].get<int>()));
      }
      return out;
    };
    EXPECT_EQ(ids(post["single"]), (std::vector<std::string>{"[CLS]:0", "$A:0", "[SEP]:0"}));
    EXPECT_EQ(ids(post["pair"]),
              (std::vector<std::string>{"[CLS]:0", "$A:0", "[SEP]:0", "$B:1", "[SEP]:1"}));
    EXPECT_EQ(post["special_tokens"]["[CLS]"]["ids"], nlohmann::json::array({2}));
    EXPECT_EQ(post["special_tokens"]["[SEP]"]["ids"], nlohmann::json::array({3}));
    std::vector<int> added;
    for (const auto& a : tok["added_tokens"]) {
      added.push_back(a["id"]);
      EXPECT_TRUE(a["special"].get<bool>()) << a.dump();
    }
    EXPECT_EQ(added, (std::vector<int>{0, 1, 2, 3, 4}));
    const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
    for (const auto& [name, value] :
         {std::pair{"cls_token", "[CLS]"}, std::pair{"sep_token", "[SEP]"},
          std::pair{"unk_token", "[UNK]"}, std::pair{"pad_token", "[PAD]"},
          std::pair{"mask_token", "[MASK]"}}) {
      EXPECT_EQ(config[name], value) << name;
    }
    EXPECT_FALSE(config.contains("bos_token"));
    EXPECT_FALSE(config.contains("eos_token"));
    EXPECT_EQ(config["do_lower_case"], true);
    EXPECT_EQ(config["clean_up_tokenization_spaces"], true);
    EXPECT_EQ(config["model_input_names"],
              (nlohmann::json{"input_ids", "token_type_ids", "attention_mask"}));
    const auto map = nlohmann::json::parse(r.tokenizer->special_tokens_map_json);
    EXPECT_EQ(map["cls_token"], "[CLS]");
    EXPECT_EQ(map["mask_token"], "[MASK]");
  }
}

// The BertNormalizer's flags: tokenizer.ggml.normalizer.lowercase, else true; strip_accents,
// else lowercase (llama.cpp's llama_vocab::impl::load, from the original's BertNormalizer).
TEST(HfTokenizer, BertNormalizerFlags) {
  auto normalizer = [](const GgufFile& f) {
    const HfTokenizerResult r = render_hf_tokenizer(f);
    EXPECT_TRUE(r.tokenizer.has_value()) << r.reason;
    return r.tokenizer ? nlohmann::json::parse(r.tokenizer->tokenizer_json)["normalizer"]
                       : nlohmann::json();
  };
  GgufFile f = tiny_bert(false);
  add(f, "tokenizer.ggml.normalizer.lowercase", boolean(false));
  EXPECT_EQ(normalizer(f)["lowercase"], false);
  EXPECT_EQ(normalizer(f)["strip_accents"], false);
  add(f, "tokenizer.ggml.normalizer.strip_accents", boolean(true));
  EXPECT_EQ(normalizer(f)["lowercase"], false);
  EXPECT_EQ(normalizer(f)["strip_accents"], true);
  f = tiny_bert(false);
  add(f, "tokenizer.ggml.normalizer.strip_accents", boolean(false));
  EXPECT_EQ(normalizer(f)["lowercase"], true);
  EXPECT_EQ(normalizer(f)["strip_accents"], false);
  f = tiny_bert(false);
  add(f, "tokenizer.ggml.normalizer.lowercase", u32(1));
  expect_refused(f, "tokenizer.ggml.normalizer.lowercase");
  f = tiny_bert(false);
  add(f, "tokenizer.ggml.normalizer.strip_accents", str("yes"));
  expect_refused(f, "tokenizer.ggml.normalizer.strip_accents");
}

// llama.cpp's defaults for "bert" where the keys are absent (llama_vocab::impl::load: bos 101,
// unk 100, sep 102, pad 0, mask 103); refused without [CLS]/[SEP]/[UNK]; tokens that collide
// once the phantom-space form is undone ("##x" and "[x]" both stored "x" is impossible, but
// "\u2581x" and a CONTROL "x" are).
TEST(HfTokenizer, BertSpecialIdsAndRefusals) {
  GgufFile f = tiny_decoder("bert", 1);
  add(f, "tokenizer.ggml.model", str("bert"));
  std::vector<Value> tokens;
  for (int i = 0; i < 104; ++i) tokens.push_back(str(fmt::format("[unused{}]", i)));
  for (const auto& [id, name] :
       {std::pair{0, "[PAD]"}, std::pair{100, "[UNK]"}, std::pair{101, "[CLS]"},
        std::pair{102, "[SEP]"}, std::pair{103, "[MASK]"}}) {
    tokens[id] = str(name);
  }
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, tokens));
  HfTokenizerResult r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_EQ(config["cls_token"], "[CLS]");
  EXPECT_EQ(config["sep_token"], "[SEP]");
  EXPECT_EQ(config["unk_token"], "[UNK]");
  EXPECT_EQ(config["pad_token"], "[PAD]");
  EXPECT_EQ(config["mask_token"], "[MASK]");
  // bos_token_id, when present, is llama.cpp's [CLS].
  add(f, "tokenizer.ggml.bos_token_id", u32(5));
  r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  EXPECT_EQ(nlohmann::json::parse(r.tokenizer->tokenizer_config_json)["cls_token"], "[unused5]");

  GgufFile g = tiny_bert(false);
  *find(g, "tokenizer.ggml.seperator_token_id") = u32(9);
  expect_refused(g, "tokenizer.ggml.seperator_token_id");
  g = tiny_bert(false);
  *find(g, "tokenizer.ggml.cls_token_id") = str("[CLS]");
  expect_refused(g, "tokenizer.ggml.cls_token_id");
  g = tiny_bert(false);
  erase(g, "tokenizer.ggml.seperator_token_id");  // and 102 is past the 9 tokens
  expect_refused(g, "[SEP]");
  g = tiny_bert(false);
  *find(g, "tokenizer.ggml.tokens") =
      arr(ValueType::kString, {str("[PAD]"), str("[UNK]"), str("[CLS]"), str("[SEP]"),
                               str("[MASK]"), str("\xE2\x96\x81the"), str("s"),
                               str("\xE2\x96\x81[unused0]"), str("\xE2\x96\x81[PAD]")});
  expect_refused(g, "token 8");
  g = tiny_bert(false);
  *find(g, "tokenizer.ggml.tokens") =
      arr(ValueType::kString,
          {str("[PAD]"), str("[UNK]"), str("[CLS]"), str("[SEP]"), str("[MASK]"),
           str("\xE2\x96\x81the"), str("s"), str("\xE2\x96\x81[unused0]"), str("\xE2\x96\x81s")});
  *find(g, "tokenizer.ggml.cls_token_id") = u32(5);  // "the": fine in a template
  EXPECT_TRUE(render_hf_tokenizer(g).tokenizer.has_value());
  *find(g, "tokenizer.ggml.tokens") =
      arr(ValueType::kString,
          {str("[PAD]"), str("[UNK]"), str("[C LS]"), str("[SEP]"), str("[MASK]"),
           str("\xE2\x96\x81the"), str("s"), str("\xE2\x96\x81[unused0]"), str("\xE2\x96\x81s")});
  *find(g, "tokenizer.ggml.cls_token_id") = u32(2);
  expect_refused(g, "tokenizer.ggml.cls_token_id");
}

// llama.cpp's ggml-vocab-bert-bge.gguf (BAAI/bge-small-en-v1.5, as in $GGUFS_TESTDATA/real):
// the original tokenizer's ids for some of llama.cpp's test texts (models/ggml-vocab-bert-bge.
// gguf.out) are, in the rendered vocabulary, the WordPiece pieces of the lowercased,
// accent-stripped, punctuation-split text: word-initial tokens plain, the rest "##".
TEST(HfTokenizer, BertBgeVocabularyIsTheOriginal) {
  GGUFS_REQUIRE_TESTDATA(data);
  const FileSource src(data / "real" / "ggml-vocab-bert-bge.gguf");
  const HfTokenizerResult r = render_hf_tokenizer(parse_gguf(src, "bert-bge.gguf"));
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  std::vector<std::string> by_id(tok["model"]["vocab"].size());
  for (const auto& [t, id] : tok["model"]["vocab"].items()) by_id.at(id.get<std::size_t>()) = t;
  auto pieces = [&](const std::vector<int>& ids) {
    std::string out;
    for (const int id : ids) {
      const std::string& t = by_id.at(static_cast<std::size_t>(id));
      if (t.starts_with("##")) {
        out += t.substr(2);
      } else {
        out += (out.empty() ? "" : " ") + t;
      }
    }
    return out;
  };
  // .inp text → .out ids, and the text as BertNormalizer + BertPreTokenizer leave it.
  EXPECT_EQ(pieces({7592, 1010, 2088, 999}), "hello , world !");  // #16 "Hello, world!"
  EXPECT_EQ(pieces({1059, 2692, 18139, 1021, 8525, 28418, 2243, 16233, 20952, 6979}),
            "w048 7tuijk dsdfhu");                                                 // #19
  EXPECT_EQ(pieces({2023, 2003, 100, 1012, 18133, 2361}), "this is [UNK] . cpp");  // #18
  EXPECT_EQ(pieces({12731, 2050, 19710}), "cua viet");         // #43 "Cửa Việt"
  EXPECT_EQ(pieces({5860, 18117}), "discards");                // #44
  EXPECT_EQ(pieces({21211, 22394, 22394, 2509}), "33333333");  // #41
  EXPECT_EQ(pieces({9706, 7959, 2140}), "apfel");              // #1 "Äpfel"
  EXPECT_EQ(tok["model"]["vocab"].size(), 30522u);
  EXPECT_EQ(tok["normalizer"]["lowercase"], true);  // #13 "Hello World" is #11's ids
  EXPECT_EQ(tok["normalizer"]["strip_accents"], true);
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_EQ(config["cls_token"], "[CLS]");
  EXPECT_EQ(config["sep_token"], "[SEP]");
  EXPECT_EQ(config["unk_token"], "[UNK]");
  EXPECT_EQ(by_id[101], "[CLS]");
  EXPECT_EQ(by_id[999], "!");
  EXPECT_EQ(by_id[1000], "\"");
}

// --- tokenizer.ggml.model "gemma4" ------------------------------------------------------------

// A Gemma 4 vocabulary as llama.cpp's converter stores it (conversion/gemma.py,
// Gemma4Model.set_vocab): Gemma's <pad> <eos> <bos> <unk> <mask>, byte tokens, merges.
GgufFile tiny_gemma4() {
  GgufFile f = tiny_decoder("gemma4", 1);
  add(f, "tokenizer.ggml.model", str("gemma4"));
  add(f, "tokenizer.ggml.tokens",
      arr(ValueType::kString,
          {str("<pad>"), str("<eos>"), str("<bos>"), str("<unk>"), str("<mask>"), str("<|turn>"),
           str("<0x0A>"), str("\xE2\x96\x81"), str("a"),
           str("\xE2\x96\x81"
               "a"),
           str("\xE2\x96\x81\xE2\x96\x81")}));
  add(f, "tokenizer.ggml.scores",
      arr(ValueType::kFloat32, {f32(-1000), f32(-1000), f32(-1000), f32(-1000), f32(-1000), f32(0),
                                f32(0), f32(0), f32(0), f32(0), f32(0)}));
  add(f, "tokenizer.ggml.token_type",
      arr(ValueType::kInt32, {i32(3), i32(3), i32(3), i32(3), i32(3), i32(4), i32(6), i32(1),
                              i32(1), i32(1), i32(1)}));
  add(f, "tokenizer.ggml.merges",
      arr(ValueType::kString, {str("\xE2\x96\x81 \xE2\x96\x81"), str("\xE2\x96\x81 a")}));
  add(f, "tokenizer.ggml.bos_token_id", u32(2));
  add(f, "tokenizer.ggml.eos_token_id", u32(1));
  add(f, "tokenizer.ggml.unknown_token_id", u32(3));
  add(f, "tokenizer.ggml.padding_token_id", u32(0));
  add(f, "tokenizer.ggml.mask_token_id", u32(4));
  add(f, "tokenizer.ggml.add_space_prefix", boolean(false));
  add(f, "tokenizer.ggml.add_bos_token", boolean(true));
  return f;
}

// Gemma's tokenizer (transformers 5.24.0's GemmaTokenizer): BPE with byte_fallback, fuse_unk and
// unk "<unk>", normalizer Replace(" ", "\u2581") and no Prepend, decoder Replace, ByteFallback,
// Fuse; the file's merges in order; <bos> added (llama.cpp forces add_bos for Gemma 4);
// <mask> a special token; model_input_names without token_type_ids.
TEST(HfTokenizer, Gemma4IsSentencePieceStyleBpe) {
  GgufFile f = tiny_gemma4();
  for (const bool add_bos_key : {true, false}) {
    *find(f, "tokenizer.ggml.add_bos_token") = boolean(add_bos_key);
    const HfTokenizerResult r = render_hf_tokenizer(f);
    ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
    const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
    const auto& model = tok["model"];
    EXPECT_EQ(model["type"], "BPE");
    EXPECT_EQ(model["byte_fallback"], true);
    EXPECT_EQ(model["fuse_unk"], true);
    EXPECT_EQ(model["unk_token"], "<unk>");
    EXPECT_EQ(model["ignore_merges"], false);
    EXPECT_EQ(model["merges"], nlohmann::json::parse(R"([["\u2581", "\u2581"], ["\u2581", "a"]])"));
    EXPECT_EQ(tok["normalizer"],
              (nlohmann::json{
                  {"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}));
    EXPECT_TRUE(tok["pre_tokenizer"].is_null());
    const auto& decoders = tok["decoder"]["decoders"];
    ASSERT_EQ(decoders.size(), 3u) << tok["decoder"].dump();
    EXPECT_EQ(decoders[0]["type"], "Replace");
    EXPECT_EQ(decoders[1]["type"], "ByteFallback");
    EXPECT_EQ(decoders[2]["type"], "Fuse");
    const auto& single = tok["post_processor"]["single"];
    ASSERT_EQ(single.size(), 2u) << tok["post_processor"].dump();
    EXPECT_EQ(single[0]["SpecialToken"]["id"], "<bos>");
    const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
    EXPECT_EQ(config["bos_token"], "<bos>");
    EXPECT_EQ(config["eos_token"], "<eos>");
    EXPECT_EQ(config["unk_token"], "<unk>");
    EXPECT_EQ(config["pad_token"], "<pad>");
    EXPECT_EQ(config["mask_token"], "<mask>");
    EXPECT_EQ(config["clean_up_tokenization_spaces"], false);
    EXPECT_EQ(config["model_input_names"], (nlohmann::json{"input_ids", "attention_mask"}));
    EXPECT_EQ(config["added_tokens_decoder"]["5"]["special"], false);  // USER_DEFINED
    EXPECT_EQ(config["added_tokens_decoder"]["4"]["special"], true);
  }
  erase(f, "tokenizer.ggml.merges");
  expect_refused(f, "tokenizer.ggml.merges");
  f = tiny_gemma4();
  *find(f, "tokenizer.ggml.mask_token_id") = u32(11);
  expect_refused(f, "tokenizer.ggml.mask_token_id");
}

// llama.cpp's ggml-vocab-gemma-4.gguf (from $GGUFS_LLAMA_CPP, else the tests' copy of llama.cpp's
// source): the rendered vocabulary and merges are the file's, and the original tokenizer's ids
// for some of llama.cpp's test texts (models/ggml-vocab-gemma-4.gguf.out) spell the texts with
// spaces as "\u2581".
TEST(HfTokenizer, Gemma4VocabularyOfLlamaCpp) {
  const char* env = std::getenv("GGUFS_LLAMA_CPP");
  const std::filesystem::path path =
      std::filesystem::path(env && *env ? env : "/var/cache/ggufs-tests/llama.cpp") / "models" /
      "ggml-vocab-gemma-4.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (set GGUFS_LLAMA_CPP)";
  const FileSource src(path);
  const HfTokenizerResult r = render_hf_tokenizer(parse_gguf(src, "gemma-4.gguf"));
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
  EXPECT_EQ(tok["model"]["vocab"].size(), 262144u);
  EXPECT_EQ(tok["model"]["merges"].size(), 514906u);
  std::vector<std::string> by_id(tok["model"]["vocab"].size());
  for (const auto& [t, id] : tok["model"]["vocab"].items()) by_id.at(id.get<std::size_t>()) = t;
  auto text = [&](const std::vector<int>& ids) {
    std::string out;
    for (const int id : ids) out += by_id.at(static_cast<std::size_t>(id));
    return out;
  };
  EXPECT_EQ(text({26352, 1902}), "\u2581Hello\u2581world");             // #12
  EXPECT_EQ(text({9259, 236764, 1902, 236888}), "Hello,\u2581world!");  // #16
  EXPECT_EQ(text({138, 9259}), "\u2581\u2581Hello");                    // #25
  EXPECT_EQ(text({140, 9259, 107, 140, 9259}),
            "\u2581\u2581\u2581\u2581Hello\n\u2581\u2581\u2581\u2581Hello");  // #28
  EXPECT_EQ(text({255968, 107}), "\t\n");                                     // #10
  EXPECT_EQ(tok["added_tokens"][0]["content"], "<pad>");
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_EQ(config["bos_token"], "<bos>");
  EXPECT_TRUE(config.contains("chat_template"));
}

}  // namespace
}  // namespace ggufs
