// Unit tests of render_hf_tokenizer (src/hf/hf_tokenizer.cpp) on hostile and incomplete
// tokenizer metadata: no tokenizer, and a one-line reason naming the key at fault; never an
// exception. The files it renders are checked against transformers itself in
// tests/python/test_hf_tokenizer.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_tokenizer.h"
#include "metadata_builder.h"

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

TEST(HfTokenizer, TinyModelsRender) {
  for (const auto& [arch, byte_level, cls] : {std::tuple{"llama", false, "LlamaTokenizerFast"},
                                              std::tuple{"phi3", false, "LlamaTokenizerFast"},
                                              std::tuple{"gemma2", false, "GemmaTokenizerFast"},
                                              std::tuple{"gpt2", true, "GPT2TokenizerFast"},
                                              std::tuple{"starcoder2", true, "GPT2TokenizerFast"},
                                              std::tuple{"stablelm", true, "GPTNeoXTokenizerFast"},
                                              std::tuple{"qwen2", true, "Qwen2TokenizerFast"}}) {
    const HfTokenizerResult r = render_hf_tokenizer(tiny(arch, byte_level));
    ASSERT_TRUE(r.tokenizer.has_value()) << arch << ": " << r.reason;
    EXPECT_EQ(r.tokenizer->tokenizer_class, cls) << arch;
    EXPECT_TRUE(r.reason.empty());
    const auto tok = nlohmann::json::parse(r.tokenizer->tokenizer_json);
    EXPECT_EQ(tok["version"], "1.0") << arch;
    EXPECT_EQ(nlohmann::json::parse(r.tokenizer->tokenizer_config_json)["tokenizer_class"]
                      .get<std::string>() +
                  "Fast",
              cls);
    EXPECT_TRUE(nlohmann::json::parse(r.tokenizer->special_tokens_map_json).is_object());
  }
}

TEST(HfTokenizer, NoConfigNoTokenizer) {
  GgufFile f = tiny("llama", false);
  erase(f, "general.architecture");
  expect_refused(f, "general.architecture");
  f = tiny("bert", false);
  expect_refused(f, "general.architecture");
}

TEST(HfTokenizer, MistralHasNoConverter) {
  GgufFile f = tiny("mistral", false);
  expect_refused(f, "mistral");
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
  *find(f, "tokenizer.ggml.merges") = arr(ValueType::kString, {str("a b")});
  expect_refused(f, "tokenizer.ggml.merges");
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

TEST(HfTokenizer, LlamaBosEosMissing) {
  GgufFile f = tiny("llama", false);
  erase(f, "tokenizer.ggml.bos_token_id");
  expect_refused(f, "tokenizer.ggml.bos_token_id");
  f = tiny("llama", false);
  erase(f, "tokenizer.ggml.eos_token_id");
  expect_refused(f, "tokenizer.ggml.eos_token_id");
}

// llama.cpp's converter writes no padding id where the original has no pad token: the
// tokenizer is rendered without one (transformers 4.57.6's own import fails on such a file).
TEST(HfTokenizer, Phi3WithoutPad) {
  GgufFile f = tiny("phi3", false);
  erase(f, "tokenizer.ggml.padding_token_id");
  const HfTokenizerResult r = render_hf_tokenizer(f);
  ASSERT_TRUE(r.tokenizer.has_value()) << r.reason;
  const auto config = nlohmann::json::parse(r.tokenizer->tokenizer_config_json);
  EXPECT_TRUE(config.value("pad_token", nlohmann::json()).is_null()) << config.dump();
  GgufFile g = tiny("phi3", false);
  erase(g, "tokenizer.ggml.eos_token_id");
  expect_refused(g, "tokenizer.ggml.eos_token_id");
}

TEST(HfTokenizer, GemmaNeedsScoresAndDistinctRenamedTokens) {
  GgufFile f = tiny("gemma2", false);
  erase(f, "tokenizer.ggml.scores");
  expect_refused(f, "tokenizer.ggml.scores");
  f = tiny("gemma2", false);
  *find(f, "tokenizer.ggml.tokens") =
      arr(ValueType::kString, {str("<unk>"), str("<s>"), str("</s>"), str("\t"), str("<0x09>")});
  expect_refused(f, "tokenizer.ggml.tokens");
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
}

TEST(HfTokenizer, BosTokenNotTemplatable) {
  GgufFile f = tiny("llama", false);
  *find(f, "tokenizer.ggml.tokens") = arr(
      ValueType::kString, {str("<unk>"), str("<s> x"), str("</s>"), str("\xE2\x96\x81"), str("a")});
  expect_refused(f, "tokenizer.ggml.bos_token_id");
}

}  // namespace
}  // namespace ggufs
