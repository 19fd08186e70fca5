// Unit tests of render_hf_config (src/hf/hf_config.cpp) on hostile and incomplete metadata: no
// config, and a one-line reason naming the key at fault; never an exception. The values of the
// configs it renders are checked against transformers itself in tests/python/test_hf_config.py.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "architectures/table.h"
#include "ggufs/gguf.h"
#include "ggufs/hf_config.h"
#include "hf_architectures.h"
#include "metadata_builder.h"

namespace ggufs {
namespace {

using namespace ggufs::test;  // metadata_builder.h

// A small llama as llama.cpp's converter writes it: every key the config needs, a tokenizer.
GgufFile tiny_llama() {
  GgufFile f = tiny_decoder("llama", 2);
  add(f, "general.name", str("tiny"));
  add(f, "llama.rope.dimension_count", u32(4));
  add(f, "tokenizer.ggml.model", str("llama"));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("<unk>"), str("<s>"), str("</s>")}));
  add(f, "tokenizer.ggml.scores", arr(ValueType::kFloat32, {f32(0), f32(0), f32(0)}));
  add(f, "tokenizer.ggml.token_type", arr(ValueType::kInt32, {i32(2), i32(3), i32(3)}));
  add(f, "tokenizer.ggml.bos_token_id", u32(1));
  add(f, "tokenizer.ggml.eos_token_id", u32(2));
  add_tensor(f, "token_embd.weight", {3, 16});
  return f;
}

// No config, and a one-line reason that holds `needle` (the key at fault).
void expect_refused(const GgufFile& f, const std::string& needle) {
  const HfConfigResult r = render_hf_config(f);
  EXPECT_FALSE(r.config.has_value()) << "rendered although " << needle << " is at fault";
  EXPECT_NE(r.reason.find(needle), std::string::npos) << "reason: " << r.reason;
  EXPECT_EQ(r.reason.find('\n'), std::string::npos) << "reason: " << r.reason;
}

TEST(HfConfig, TinyLlamaRenders) {
  const HfConfigResult r = render_hf_config(tiny_llama());
  ASSERT_TRUE(r.config.has_value()) << r.reason;
  EXPECT_TRUE(r.reason.empty());
  EXPECT_TRUE(nlohmann::json::accept(r.config->config_json));
  EXPECT_TRUE(nlohmann::json::accept(r.config->generation_config_json));
  EXPECT_EQ(r.config->model_type, "llama");
  EXPECT_EQ(r.config->torch_dtype, "float32");
}

// llama.cpp's converter writes general.architecture "mamba" for FalconMambaForCausalLM too, with
// ssm.dt_b_c_rms true (mamba.py, MambaModel.set_gguf_parameters): a model MambaForCausalLM
// would run without those RMS norms, so it gets no config.
TEST(HfConfig, AFalconMambaIsNotAMamba) {
  GgufFile f = tiny_decoder("mamba", 2);
  add(f, "mamba.ssm.conv_kernel", u32(4));
  add(f, "mamba.ssm.inner_size", u32(32));
  add(f, "mamba.ssm.state_size", u32(16));
  add(f, "mamba.ssm.time_step_rank", u32(1));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add(f, "mamba.ssm.dt_b_c_rms", boolean(false));
  const HfConfigResult mamba = render_hf_config(f);
  ASSERT_TRUE(mamba.config.has_value()) << mamba.reason;
  EXPECT_EQ(mamba.config->model_type, "mamba");
  *find(f, "mamba.ssm.dt_b_c_rms") = boolean(true);
  expect_refused(f, "mamba.ssm.dt_b_c_rms is true: a FalconMamba");
}

// hunyuan.py (HYV3Model.set_gguf_parameters) writes the Hub config's route_norm as
// expert_weights_norm; HYV3ForCausalLM always normalises the chosen experts' weights
// (modeling_hy_v3.py, HYV3TopKRouter), so a file with it false is no such model.
TEST(HfConfig, AHy3WithoutRouteNormIsRefused) {
  GgufFile f = tiny_decoder("hy_v3", 2);
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add(f, "hy_v3.expert_weights_norm", boolean(true));
  const HfConfigResult hy = render_hf_config(f);
  ASSERT_TRUE(hy.config.has_value()) << hy.reason;
  EXPECT_EQ(hy.config->model_type, "hy_v3");
  *find(f, "hy_v3.expert_weights_norm") = boolean(false);
  expect_refused(f, "hy_v3.expert_weights_norm is false: HYV3ForCausalLM always normalises");
}

// The converter writes general.architecture "granitehybrid" for BambaForCausalLM too, with
// rope.scaling.finetuned true (granite.py, GraniteHybridModel.set_gguf_parameters): a model with
// rope, which GraniteMoeHybridForCausalLM (no position_embedding_type) would run without.
TEST(HfConfig, ABambaIsNotAGraniteMoeHybrid) {
  GgufFile f = tiny_decoder("granitehybrid", 2);
  erase(f, "granitehybrid.attention.head_count_kv");
  add(f, "granitehybrid.attention.head_count_kv", arr(ValueType::kUint32, {u32(0), u32(2)}));
  add(f, "granitehybrid.ssm.conv_kernel", u32(4));
  add(f, "granitehybrid.ssm.inner_size", u32(32));
  add(f, "granitehybrid.ssm.state_size", u32(16));
  add(f, "granitehybrid.ssm.time_step_rank", u32(4));
  add(f, "granitehybrid.ssm.group_count", u32(1));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  add(f, "granitehybrid.rope.scaling.finetuned", boolean(false));
  const HfConfigResult granite = render_hf_config(f);
  ASSERT_TRUE(granite.config.has_value()) << granite.reason;
  EXPECT_EQ(granite.config->model_type, "granitemoehybrid");
  const auto config = nlohmann::json::parse(granite.config->config_json);
  EXPECT_EQ(config["layer_types"], nlohmann::json({"mamba", "attention"}));
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["mamba_expand"], 2);
  EXPECT_EQ(config["mamba_d_head"], 8);
  *find(f, "granitehybrid.rope.scaling.finetuned") = boolean(true);
  expect_refused(f, "granitehybrid.rope.scaling.finetuned is true: a Bamba");
}

// jamba.py, JambaModel.set_gguf_parameters writes no attn_layer_offset/_period nor
// expert_layer_offset/_period: the attention layers are the non-zero head_count_kv elements, the
// expert layers those holding ffn_gate_inp (hf_architectures.h, LayerPeriod). A pattern one
// offset and period give comes back as them; any other gets no config.
TEST(HfConfig, AJambaLayerPatternFromItsLayers) {
  GgufFile f = tiny_decoder("jamba", 6);
  add(f, "jamba.ssm.conv_kernel", u32(3));
  add(f, "jamba.ssm.inner_size", u32(32));
  add(f, "jamba.ssm.state_size", u32(8));
  add(f, "jamba.ssm.time_step_rank", u32(4));
  add(f, "jamba.expert_count", u32(4));
  add(f, "jamba.expert_used_count", u32(2));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  auto kv = [&](std::initializer_list<std::uint32_t> heads) {
    std::vector<Value> v;
    for (const std::uint32_t h : heads) v.push_back(u32(h));
    *find(f, "jamba.attention.head_count_kv") = arr(ValueType::kUint32, v);
  };
  auto config = [&] {
    const HfConfigResult r = render_hf_config(f);
    EXPECT_TRUE(r.config.has_value()) << r.reason;
    return r.config ? nlohmann::json::parse(r.config->config_json) : nlohmann::json::object();
  };
  auto periods = [&](const char* what) {
    const nlohmann::json c = config();
    const std::string w(what);
    return std::pair{c.value(w + "_layer_offset", -1), c.value(w + "_layer_period", -1)};
  };
  using P = std::pair<int, int>;
  kv({0, 2, 0, 0, 2, 0});
  for (const int i : {1, 3, 5})
    add_tensor(f, fmt::format("blk.{}.ffn_gate_inp.weight", i), {4, 16});
  const nlohmann::json c = config();
  EXPECT_EQ(c["model_type"], "jamba");
  EXPECT_EQ(c["num_key_value_heads"], 2);
  EXPECT_EQ(c["mamba_expand"], 2);
  EXPECT_EQ(c["use_mamba_kernels"], false);
  EXPECT_EQ(periods("attn"), P(1, 3));
  EXPECT_EQ(periods("expert"), P(1, 2));
  kv({2, 2, 2, 2, 2, 2});  // every layer
  EXPECT_EQ(periods("attn"), P(0, 1));
  kv({0, 0, 0, 0, 0, 2});  // one layer: the smallest period that gives it alone
  EXPECT_EQ(periods("attn"), P(5, 6));
  kv({0, 2, 0, 0, 0, 0});
  EXPECT_EQ(periods("attn"), P(1, 5));
  kv({0, 0, 0, 0, 0, 0});  // none: an offset past the last layer
  EXPECT_EQ(periods("attn"), P(6, 7));
  // Not one offset and period: uneven gaps, an offset not below the period, a layer missing at
  // the end.
  for (const auto heads : {std::initializer_list<std::uint32_t>{0, 2, 2, 0, 2, 0},
                           std::initializer_list<std::uint32_t>{0, 0, 0, 2, 0, 2},
                           std::initializer_list<std::uint32_t>{2, 0, 2, 0, 0, 0}}) {
    kv(heads);
    expect_refused(f, "jamba.attention.head_count_kv: its");
  }
  *find(f, "jamba.attention.head_count_kv") = u32(2);
  expect_refused(f, "jamba.attention.head_count_kv is not an array of one value per layer");
  kv({0, 2, 0, 0, 2, 0});
  add_tensor(f, "blk.2.ffn_gate_inp.weight", {4, 16});  // experts in layers 1, 2, 3, 5
  expect_refused(f, "the layers holding ffn_gate_inp.weight: its 4 of 6 layers");
}

TEST(HfConfig, MissingArchitecture) {
  GgufFile f = tiny_llama();
  erase(f, "general.architecture");
  expect_refused(f, "general.architecture");
}

TEST(HfConfig, ArchitectureNotAString) {
  GgufFile f = tiny_llama();
  *find(f, "general.architecture") = u32(7);
  expect_refused(f, "general.architecture");
  *find(f, "general.architecture") = arr(ValueType::kString, {str("llama"), str("gpt2")});
  expect_refused(f, "general.architecture");
}

TEST(HfConfig, UnsupportedArchitectures) {
  // Architectures with no row in the table (bert, gemma, llama4, a made-up one; mixtral's row
  // is llama's with experts, never written as mixtral), and an empty name.
  for (const char* arch : {"bert", "gemma", "no-such-arch", "", "llama4", "mixtral"}) {
    GgufFile f = tiny_llama();
    *find(f, "general.architecture") = str(arch);
    expect_refused(f, "general.architecture");
  }
  // t5's row renders T5's gated MLP only: a file without enc.blk.0.ffn_gate is refused.
  GgufFile f = tiny_llama();
  *find(f, "general.architecture") = str("t5");
  expect_refused(f, "enc.blk.0.ffn_gate.weight");
}

TEST(HfConfig, MissingOrInvalidStructuralKeys) {
  for (const char* key : {"llama.block_count", "llama.embedding_length",
                          "llama.attention.head_count", "llama.context_length"}) {
    SCOPED_TRACE(key);
    GgufFile f = tiny_llama();
    erase(f, key);
    expect_refused(f, key);
    for (const Value& bad : {u32(0), i32(-4), f32(4.0f), str("4"), boolean(true),
                             arr(ValueType::kUint32, {u32(4), u32(4)})}) {
      GgufFile g = tiny_llama();
      *find(g, key) = bad;
      expect_refused(g, key);
    }
  }
}

TEST(HfConfig, InvalidCountsNumbersAndTokenIds) {
  const std::vector<std::pair<std::string, Value>> bad = {
      {"llama.attention.head_count_kv", i32(-1)},
      {"llama.attention.head_count_kv", arr(ValueType::kUint32, {u32(2), u32(0)})},
      {"llama.feed_forward_length", str("40")},
      {"llama.rope.dimension_count", f32(4.5f)},
      {"llama.rope.freq_base", str("10000")},
      {"llama.rope.freq_base", f32(std::numeric_limits<float>::quiet_NaN())},
      {"llama.attention.layer_norm_rms_epsilon", f32(std::numeric_limits<float>::infinity())},
      {"llama.attention.layer_norm_rms_epsilon", boolean(false)},
      {"tokenizer.ggml.bos_token_id", str("<s>")},
      {"tokenizer.ggml.eos_token_id", f32(2.0f)},
  };
  for (const auto& [key, value] : bad) {
    SCOPED_TRACE(key);
    GgufFile f = tiny_llama();
    *find(f, key) = value;
    expect_refused(f, key);
  }
}

TEST(HfConfig, NoVocabulary) {
  GgufFile f = tiny_llama();
  erase(f, "tokenizer.ggml.tokens");
  expect_refused(f, "tokenizer.ggml.tokens");
  GgufFile g = tiny_llama();
  *find(g, "tokenizer.ggml.tokens") = u32(3);  // len() of an int fails in transformers
  expect_refused(g, "tokenizer.ggml.tokens");
  GgufFile h = tiny_llama();
  *find(h, "tokenizer.ggml.tokens") = arr(ValueType::kString, {});
  expect_refused(h, "tokenizer.ggml.tokens");
  GgufFile k = tiny_llama();
  add(k, "llama.vocab_size", u32(0));
  expect_refused(k, "llama.vocab_size");
}

TEST(HfConfig, InvalidUtf8) {
  // Python's strict decode refuses stray continuation bytes, overlong forms and surrogates.
  for (const std::string& bad : {std::string("caf\xe9"), std::string("\xc0\xaf"),
                                 std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80")}) {
    GgufFile f = tiny_llama();
    *find(f, "tokenizer.ggml.tokens") = arr(ValueType::kString, {str("a"), str(bad), str("c")});
    expect_refused(f, "tokenizer.ggml.tokens");
    GgufFile g = tiny_llama();
    add(g, "general.description", str(bad));
    expect_refused(g, "general.description");
    GgufFile h = tiny_llama();
    add(h, "general.x" + bad, u32(1));
    expect_refused(h, "general.x");
    GgufFile k = tiny_llama();
    k.tensors[0].name = "token_embd" + bad;
    expect_refused(k, "token_embd");
  }
}

TEST(HfConfig, ReaderFailures) {
  GgufFile f = tiny_llama();
  Array outer(ValueType::kArray);
  outer.push_array(Array(ValueType::kUint32, {u32(1)}));
  add(f, "general.nested", Value{ValueType::kArray, outer});
  expect_refused(f, "general.nested");

  GgufFile g = tiny_llama();
  g.tensors[0].type = 4;  // Q4_2, removed: gguf-py's GGUFReader refuses the file
  expect_refused(g, "token_embd.weight");

  GgufFile h = tiny_llama();
  h.version = 1;
  expect_refused(h, "version 1");
}

// Every key of the tiny llama, replaced by each of many hostile values: render_hf_config never
// throws, and gives either a config or a reason.
TEST(HfConfig, HostileValuesNeverThrow) {
  const std::vector<Value> hostile = {
      u32(0),
      Value{ValueType::kUint64, std::numeric_limits<std::uint64_t>::max()},
      Value{ValueType::kInt64, std::numeric_limits<std::int64_t>::min()},
      f32(std::numeric_limits<float>::quiet_NaN()),
      Value{ValueType::kFloat64, -std::numeric_limits<double>::infinity()},
      boolean(true),
      str(""),
      str("\xff\xfe"),
      str("llama"),
      arr(ValueType::kString, {}),
      arr(ValueType::kString, {str("x")}),
      arr(ValueType::kFloat32, {f32(1.0f)}),
      arr(ValueType::kUint8, {}),
  };
  const GgufFile base = tiny_llama();
  for (std::size_t k = 0; k < base.kv.size(); ++k) {
    for (const Value& v : hostile) {
      GgufFile f = base;
      f.kv[k].value = v;
      HfConfigResult r;
      EXPECT_NO_THROW(r = render_hf_config(f)) << f.kv[k].key;
      EXPECT_NE(r.config.has_value(), !r.reason.empty()) << f.kv[k].key;
    }
  }
  EXPECT_NO_THROW(render_hf_config(GgufFile{}));
}

// rope_scaling as base.py (TextModel.set_gguf_parameters) wrote it: the linear factor, YaRN's
// factor and original context length, the float32 factor as its shortest decimal; types whose
// parameters live in tensors (llama3, longrope) give none; hostile kinds are refused by key.
TEST(HfConfig, RopeScaling) {
  auto scaling = [](const GgufFile& f) {
    const HfConfigResult r = render_hf_config(f);
    EXPECT_TRUE(r.config.has_value()) << r.reason;
    const auto config = nlohmann::json::parse(r.config ? r.config->config_json : "{}");
    return config.value("rope_scaling", nlohmann::json());
  };
  GgufFile f = tiny_llama();
  add(f, "llama.rope.scaling.type", str("linear"));
  add(f, "llama.rope.scaling.factor", f32(8.0f));
  EXPECT_EQ(scaling(f), nlohmann::json::parse(R"({"rope_type": "linear", "factor": 8.0})"));

  *find(f, "llama.rope.scaling.type") = str("yarn");
  *find(f, "llama.rope.scaling.factor") = f32(1.1f);  // float32 1.10000002384…
  add(f, "llama.rope.scaling.original_context_length", u32(4096));
  add(f, "llama.rope.scaling.yarn_beta_fast", f32(32.0f));
  EXPECT_EQ(scaling(f), nlohmann::json::parse(R"({"rope_type": "yarn", "factor": 1.1,
      "original_max_position_embeddings": 4096, "beta_fast": 32.0})"));

  *find(f, "llama.rope.scaling.type") = str("longrope");
  EXPECT_TRUE(scaling(f).is_null());

  *find(f, "llama.rope.scaling.type") = str("yarn");
  *find(f, "llama.rope.scaling.factor") = f32(std::numeric_limits<float>::quiet_NaN());
  expect_refused(f, "llama.rope.scaling.factor");
  *find(f, "llama.rope.scaling.factor") = str("8");
  expect_refused(f, "llama.rope.scaling.factor");
  *find(f, "llama.rope.scaling.factor") = f32(4.0f);
  erase(f, "llama.rope.scaling.original_context_length");
  expect_refused(f, "llama.rope.scaling.original_context_length");
  *find(f, "llama.rope.scaling.type") = u32(2);
  expect_refused(f, "llama.rope.scaling.type");
}

// deepseek.py (DeepseekV2Model.set_gguf_parameters) stores YaRN's mscale_all_dim as
// yarn_log_multiplier = float32(0.1 · mscale_all_dim) and mscale not at all: the config gets
// both back as the DeepSeek configs have them (DeepSeek-V2-Lite's config.json: 0.707 and 0.707;
// DeepSeek-V3's: 1.0 and 1.0).
TEST(HfConfig, DeepseekYarnMscaleFromTheTenthTheConverterStored) {
  GgufFile f = tiny_decoder("deepseek2", 2);
  add(f, "deepseek2.vocab_size", u32(3));
  add(f, "deepseek2.rope.scaling.type", str("yarn"));
  add(f, "deepseek2.rope.scaling.factor", f32(40.0f));
  add(f, "deepseek2.rope.scaling.original_context_length", u32(4096));
  auto scaling = [](const GgufFile& g) {
    const HfConfigResult r = render_hf_config(g);
    EXPECT_TRUE(r.config.has_value()) << r.reason;
    return nlohmann::json::parse(r.config ? r.config->config_json : "{}")
        .value("rope_scaling", nlohmann::json());
  };
  add(f, "deepseek2.rope.scaling.yarn_log_multiplier", f32(static_cast<float>(0.1 * 0.707)));
  nlohmann::json s = scaling(f);
  EXPECT_EQ(s.value("mscale_all_dim", nlohmann::json()), nlohmann::json(0.707)) << s;
  EXPECT_EQ(s.value("mscale", nlohmann::json()), nlohmann::json(0.707)) << s;
  *find(f, "deepseek2.rope.scaling.yarn_log_multiplier") = f32(static_cast<float>(0.1 * 1.0));
  s = scaling(f);
  EXPECT_EQ(s.value("mscale_all_dim", nlohmann::json()), nlohmann::json(1.0)) << s;
  EXPECT_EQ(s.value("mscale", nlohmann::json()), nlohmann::json(1.0)) << s;
  // A llama's yarn_log_multiplier is no field of its config (llama.py writes none).
  GgufFile l = tiny_llama();
  add(l, "llama.rope.scaling.type", str("yarn"));
  add(l, "llama.rope.scaling.factor", f32(40.0f));
  add(l, "llama.rope.scaling.original_context_length", u32(4096));
  add(l, "llama.rope.scaling.yarn_log_multiplier", f32(0.1f));
  EXPECT_FALSE(scaling(l).contains("mscale_all_dim"));

  *find(f, "deepseek2.rope.scaling.yarn_log_multiplier") =
      f32(std::numeric_limits<float>::infinity());
  expect_refused(f, "deepseek2.rope.scaling.yarn_log_multiplier");
  *find(f, "deepseek2.rope.scaling.yarn_log_multiplier") = str("0.1");
  expect_refused(f, "deepseek2.rope.scaling.yarn_log_multiplier");
}

// Gemma 3n as llama.cpp's converter writes Google's gemma-3n-E2B (config.json: vocab_size
// 262400, vocab_size_per_layer_input 262144, laurel_rank 64, activation_sparsity_pattern 0.95 in
// the first layers and 0.0 after, intermediate_size one a layer), two of its layers.
TEST(HfConfig, Gemma3nFieldsTheFileDoesNotHold) {
  GgufFile f = tiny_decoder("gemma3n", 2);
  *find(f, "gemma3n.feed_forward_length") = arr(ValueType::kUint32, {u32(8192), u32(8192)});
  add(f, "gemma3n.altup.num_inputs", u32(4));
  add(f, "gemma3n.embedding_length_per_layer_input", u32(256));
  // torch's float32 Normal(0, 1).icdf(0.95) and icdf(0.0), as gemma.py stores them
  add(f, "gemma3n.activation_sparsity_scale",
      arr(ValueType::kFloat32,
          {f32(1.6448535919189453f), f32(-std::numeric_limits<float>::infinity())}));
  std::vector<Value> tokens(262400, str("x"));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, std::move(tokens)));
  add_tensor(f, "blk.1.laurel_l.weight", {64, 16});
  add_tensor(f, "per_layer_token_embd.weight", {262400, 512});  // zero-padded to vocab_size
  auto config = [](const GgufFile& g) {
    const HfConfigResult r = render_hf_config(g);
    EXPECT_TRUE(r.config.has_value()) << r.reason;
    return nlohmann::json::parse(r.config ? r.config->config_json : "{}");
  };
  nlohmann::json c = config(f);
  EXPECT_EQ(c["model_type"], "gemma3n_text");
  EXPECT_EQ(c["activation_sparsity_pattern"], nlohmann::json({0.95, 0.0})) << c;
  EXPECT_EQ(c["intermediate_size"], nlohmann::json({8192, 8192}));
  EXPECT_EQ(c["laurel_rank"], 64);
  EXPECT_EQ(c["vocab_size"], 262400);
  EXPECT_EQ(c["vocab_size_per_layer_input"], 262144);
  EXPECT_EQ(c["altup_correct_scale"], false);  // no altup_correct_scale.weight
  // Rows other than vocab_size: nothing was padded, the rows are the per-layer vocabulary.
  f.tensors.back().ne[1] = 262500;
  EXPECT_EQ(config(f)["vocab_size_per_layer_input"], 262500);

  *find(f, "gemma3n.activation_sparsity_scale") =
      arr(ValueType::kFloat32, {f32(0), f32(0), f32(0)});
  expect_refused(f, "gemma3n.activation_sparsity_scale has 3 elements for 2 layers");
  *find(f, "gemma3n.activation_sparsity_scale") = arr(ValueType::kString, {str("a"), str("b")});
  expect_refused(f, "gemma3n.activation_sparsity_scale");
  *find(f, "gemma3n.activation_sparsity_scale") = arr(
      ValueType::kFloat64, {Value{ValueType::kFloat64, 1e300}, Value{ValueType::kFloat64, 0.0}});
  expect_refused(f, "gemma3n.activation_sparsity_scale holds a value that is no float32");
  *find(f, "gemma3n.activation_sparsity_scale") = arr(ValueType::kFloat32, {f32(0), f32(0)});
  *find(f, "gemma3n.feed_forward_length") = arr(ValueType::kUint32, {u32(1), u32(2), u32(3)});
  expect_refused(f, "gemma3n.feed_forward_length has 3 elements for 2 layers");
  *find(f, "gemma3n.feed_forward_length") = arr(ValueType::kInt32, {i32(8192), i32(-1)});
  expect_refused(f, "gemma3n.feed_forward_length");
}

// llama.cpp's converter writes the original's special token ids (gguf-py's vocab.py,
// SpecialVocab: its tokenizer's, else its config.json's *_token_id), so a file without
// tokenizer.ggml.padding_token_id is of an original without a padding token. Its config's
// pad_token_id is then null, not the class default that config.json's silence would leave to
// transformers (4.57.6 and 5.24.0 alike): configuration_phi3.py, Phi3Config pad_token_id=32000
// and configuration_smollm3.py, SmolLM3Config 128004, both past this 3-token vocabulary (the
// embedding's padding_idx, which from_pretrained refuses); configuration_cohere.py, CohereConfig
// 0 and configuration_lfm2.py, Lfm2Config 0, a token generate masks out of a prompt.
// generation_config.json names none (GenerationConfig's default is None). The ids the file holds
// stay, in both files; a class whose default is None (LlamaConfig's pad) gets no field.
TEST(HfConfig, TokenIdsTheFileDoesNotHoldAreNull) {
  struct Row {
    const char* arch;
    const char* model_type;
  };
  for (const Row& row : {Row{"phi3", "phi3"}, Row{"smollm3", "smollm3"}, Row{"command-r", "cohere"},
                         Row{"lfm2", "lfm2"}}) {
    SCOPED_TRACE(row.arch);
    const std::string arch = row.arch;
    GgufFile f = tiny_decoder(arch, 2);
    add(f, arch + ".rope.dimension_count", u32(4));
    if (arch == "lfm2") {  // lfm2.py: the KV heads a layer, 0 for a convolution layer
      *find(f, "lfm2.attention.head_count_kv") = arr(ValueType::kUint32, {u32(0), u32(2)});
    }
    add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("!"), str("<s>"), str("</s>")}));
    add(f, "tokenizer.ggml.bos_token_id", u32(1));
    add(f, "tokenizer.ggml.eos_token_id", u32(2));
    auto render = [](const GgufFile& g) {
      const HfConfigResult r = render_hf_config(g);
      EXPECT_TRUE(r.config.has_value()) << r.reason;
      return std::pair{nlohmann::json::parse(r.config ? r.config->config_json : "{}"),
                       nlohmann::json::parse(r.config ? r.config->generation_config_json : "{}")};
    };
    // null, and not absent
    auto is_null = [](const nlohmann::json& j, const char* id) {
      return j.contains(id) && j.at(id).is_null();
    };
    auto [config, generation] = render(f);
    EXPECT_EQ(config["model_type"], row.model_type);
    EXPECT_TRUE(is_null(config, "pad_token_id")) << config;
    EXPECT_FALSE(generation.contains("pad_token_id")) << generation;
    EXPECT_EQ(config["bos_token_id"], 1);
    EXPECT_EQ(config["eos_token_id"], 2);
    EXPECT_EQ(generation["bos_token_id"], 1);
    EXPECT_EQ(generation["eos_token_id"], 2);

    // Neither bos nor eos (their class defaults: 1 and 32000, 128000 and 128001, 5 and 255001,
    // 1 and 2): null too.
    erase(f, "tokenizer.ggml.bos_token_id");
    erase(f, "tokenizer.ggml.eos_token_id");
    std::tie(config, generation) = render(f);
    for (const char* id : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
      EXPECT_TRUE(is_null(config, id)) << id << ": " << config;
      EXPECT_FALSE(generation.contains(id)) << id << ": " << generation;
    }

    add(f, "tokenizer.ggml.padding_token_id", u32(0));
    std::tie(config, generation) = render(f);
    EXPECT_EQ(config["pad_token_id"], 0);
    EXPECT_EQ(generation["pad_token_id"], 0);
  }
  // LlamaConfig's pad_token_id defaults to None: config.json's silence is the original's.
  const HfConfigResult llama = render_hf_config(tiny_llama());
  ASSERT_TRUE(llama.config.has_value()) << llama.reason;
  EXPECT_FALSE(nlohmann::json::parse(llama.config->config_json).contains("pad_token_id"));
}

// The README's table of hf/'s architectures (one row each: general.architecture, the class, its
// first transformers release, the pinned lines that load it, ...) and the architecture table of
// src/hf/architectures/ name the same architectures: a row added to one is in the other.
TEST(HfArchitectures, TheReadmeTableHasOneRowPerArchitecture) {
  std::ifstream in(std::filesystem::path(GGUFS_SOURCE_DIR) / "README.md");
  ASSERT_TRUE(in) << "cannot read README.md";
  std::vector<std::vector<std::string>> rows;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("| `general.architecture` | transformers class |")) {
      in_table = true;
    } else if (in_table && line.starts_with("| ")) {
      std::vector<std::string> cells;
      for (std::size_t at = 2, bar; (bar = line.find(" | ", at)) != std::string::npos;
           at = bar + 3) {
        cells.push_back(line.substr(at, bar - at));
      }
      rows.push_back(std::move(cells));
    } else if (in_table && !line.starts_with("|---")) {
      break;
    }
  }
  ASSERT_FALSE(rows.empty()) << "README.md has no architecture table";
  const std::regex release(R"(\d+\.\d+\.\d+.*)");
  // One README row per general.architecture and class: falcon's two layouts are two table rows.
  std::set<std::pair<std::string_view, std::string_view>> with_weights;
  for (const hf::Architecture& a : hf::architectures()) {
    if (a.layer.empty()) continue;  // described in another row (mistral: llama's)
    with_weights.emplace(a.gguf_arch, a.class_name);
    const std::string cls = "`" + std::string(a.class_name) + "`";
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& cells) {
      return cells.size() >= 5 && cells[0].starts_with(a.gguf_arch) &&
             cells[1].find(cls) != std::string::npos;
    });
    ASSERT_NE(row, rows.end()) << "no README row for " << a.gguf_arch << " " << cls;
    EXPECT_TRUE(std::regex_match((*row)[2], release)) << cls << ": " << (*row)[2];
    EXPECT_FALSE((*row)[3].empty()) << cls << ": which transformers lines load it";
  }
  EXPECT_EQ(rows.size(), with_weights.size()) << "a README row names no architecture of the table";
}

// Each family file of src/hf/architectures/ (but common.cpp) adds its rows through a function
// the table lists (table.h, kFamilies): a file whose function the list lacks would add none.
TEST(HfArchitectures, EveryFamilyFileIsInTheTable) {
  const std::filesystem::path dir =
      std::filesystem::path(GGUFS_SOURCE_DIR) / "src/hf/architectures";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".cpp" && e.path().filename() != "common.cpp") ++files;
  }
  EXPECT_EQ(std::size(hf::table::kFamilies), files);
  std::set<void (*)(hf::table::Rows&)> distinct(std::begin(hf::table::kFamilies),
                                                std::end(hf::table::kFamilies));
  EXPECT_EQ(distinct.size(), files);
  // Each family adds at least one row.
  for (const auto family : hf::table::kFamilies) {
    hf::table::Rows rows;
    family(rows);
    EXPECT_FALSE(rows.empty());
  }
}

TEST(HfConfig, AGemma4DoubleWideMlpFromItsWidthsALayer) {
  GgufFile f = tiny_decoder("gemma4", 4);
  add(f, "gemma4.attention.shared_kv_layers", u32(2));
  add(f, "gemma4.attention.key_length", u32(8));
  add(f, "gemma4.attention.sliding_window_pattern",
      arr(ValueType::kBool, {boolean(true), boolean(false), boolean(true), boolean(false)}));
  add(f, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
  *find(f, "gemma4.feed_forward_length") =
      arr(ValueType::kUint32, {u32(40), u32(40), u32(80), u32(80)});
  const HfConfigResult r = render_hf_config(f);
  ASSERT_TRUE(r.config.has_value()) << r.reason;
  const auto config = nlohmann::json::parse(r.config->config_json);
  EXPECT_EQ(config["intermediate_size"], 40);
  EXPECT_EQ(config["use_double_wide_mlp"], true);
  EXPECT_EQ(config["per_layer_config"],
            nlohmann::json::parse(R"({"1": {"head_dim": 8}, "3": {"head_dim": 8}})"));
  EXPECT_EQ(config["rope_parameters"]["full_attention"]["rope_theta"], 10000.0);
  // Widths that are not the shared layers' doubled ones: no Gemma 4.
  *find(f, "gemma4.feed_forward_length") =
      arr(ValueType::kUint32, {u32(40), u32(80), u32(80), u32(80)});
  expect_refused(f, "gemma4.feed_forward_length is not intermediate_size");
  *find(f, "gemma4.feed_forward_length") = u32(40);
  ASSERT_TRUE(render_hf_config(f).config.has_value());
  add(f, "gemma4.expert_count", u32(4));
  expect_refused(f, "mixture-of-experts");
}

// NemotronH's hybrid_override_pattern, one character a layer as configuration_nemotron_h.py
// (NemotronHConfig._pattern_to_list) reads it: 'M' a Mamba-2 mixer, 'E' the MoE, '*' attention,
// '-' the dense MLP; rebuilt from the per-layer head_count_kv and feed_forward_length the
// converter writes (nemotron.py, NemotronHModel.set_gguf_parameters) and the layers' tensors.
TEST(HfConfig, ANemotronHPatternFromItsLayerArrays) {
  // Five layers, mixer, MLP, attention, mixer, MLP, as the converter writes them under
  // general.architecture `arch`: the MLP layers of feed-forward width `width`, holding `mlp`.
  auto five_layers = [](const std::string& arch, std::uint32_t width, const std::string& mlp) {
    GgufFile g = tiny_decoder(arch, 5);
    erase(g, arch + ".attention.head_count_kv");
    erase(g, arch + ".feed_forward_length");
    add(g, arch + ".attention.head_count_kv",
        arr(ValueType::kUint32, {u32(0), u32(0), u32(2), u32(0), u32(0)}));
    add(g, arch + ".feed_forward_length",
        arr(ValueType::kUint32, {u32(0), u32(width), u32(0), u32(0), u32(width)}));
    add(g, arch + ".ssm.inner_size", u32(32));
    add(g, arch + ".ssm.time_step_rank", u32(4));
    add(g, "tokenizer.ggml.tokens", arr(ValueType::kString, {str("a"), str("b"), str("c")}));
    for (const std::string& t :
         {std::string("blk.0.ssm_in.weight"), "blk.1." + mlp, std::string("blk.2.attn_q.weight"),
          std::string("blk.3.ssm_in.weight"), "blk.4." + mlp}) {
      add_tensor(g, t, {16, 16});
    }
    return g;
  };
  const std::string a = "nemotron_h_moe";
  GgufFile f = five_layers(a, 32, "ffn_up_exps.weight");
  const HfConfigResult r = render_hf_config(f);
  ASSERT_TRUE(r.config.has_value()) << r.reason;
  EXPECT_EQ(r.config->model_type, "nemotron_h");
  const auto config = nlohmann::json::parse(r.config->config_json);
  EXPECT_EQ(config["hybrid_override_pattern"], "ME*ME");
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["mamba_head_dim"], 8);
  // Attention wins over a width (no converter writes both; the pattern's '*' has no MLP).
  *find(f, a + ".feed_forward_length") =
      arr(ValueType::kUint32, {u32(0), u32(32), u32(32), u32(0), u32(32)});
  const HfConfigResult star = render_hf_config(f);
  ASSERT_TRUE(star.config.has_value()) << star.reason;
  EXPECT_EQ(nlohmann::json::parse(star.config->config_json)["hybrid_override_pattern"], "ME*ME");
  // A width without experts, or neither width nor mixer: the dense MLP ('-'), which the MoE form
  // writes without its intermediate_size.
  *find(f, a + ".feed_forward_length") =
      arr(ValueType::kUint32, {u32(32), u32(32), u32(0), u32(0), u32(32)});
  expect_refused(f, "layer 0 is a dense MLP");
  *find(f, a + ".feed_forward_length") =
      arr(ValueType::kUint32, {u32(0), u32(32), u32(0), u32(0), u32(32)});
  f.tensors.erase(std::find_if(f.tensors.begin(), f.tensors.end(), [](const TensorInfo& t) {
    return t.name == "blk.3.ssm_in.weight";
  }));
  expect_refused(f, "layer 3 is a dense MLP");
  add_tensor(f, "blk.3.ssm_in.weight", {16, 16});
  ASSERT_TRUE(render_hf_config(f).config.has_value());
  // Arrays of another length than the layers'.
  *find(f, a + ".feed_forward_length") = arr(ValueType::kUint32, {u32(0), u32(32)});
  expect_refused(f, "are not one count a layer");
  *find(f, a + ".feed_forward_length") =
      arr(ValueType::kUint32, {u32(0), u32(32), u32(0), u32(0), u32(32)});
  // A latent MoE and an appended MTP block: not rendered.
  add(f, a + ".moe_latent_size", u32(8));
  expect_refused(f, "moe_latent_size: a latent MoE");
  erase(f, a + ".moe_latent_size");
  add(f, a + ".nextn_predict_layers", u32(1));
  expect_refused(f, "nextn_predict_layers: an MTP block");
  // The dense form, general.architecture nemotron_h (nemotron.py writes the MLP layers' width,
  // intermediate_size, in feed_forward_length): '-' where the MoE form has 'E'.
  GgufFile dense = five_layers("nemotron_h", 48, "ffn_up.weight");
  const HfConfigResult rd = render_hf_config(dense);
  ASSERT_TRUE(rd.config.has_value()) << rd.reason;
  const auto dense_config = nlohmann::json::parse(rd.config->config_json);
  EXPECT_EQ(dense_config["hybrid_override_pattern"], "M-*M-");
  EXPECT_EQ(dense_config["intermediate_size"], 48);
  EXPECT_FALSE(dense_config.contains("num_experts_per_tok"));
  // A width without the MLP's tensor.
  dense.tensors.erase(
      std::find_if(dense.tensors.begin(), dense.tensors.end(),
                   [](const TensorInfo& t) { return t.name == "blk.4.ffn_up.weight"; }));
  expect_refused(dense, "layer 4 has a feed-forward width but no ffn_up.weight");
}

}  // namespace
}  // namespace ggufs
