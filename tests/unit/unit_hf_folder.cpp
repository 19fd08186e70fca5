// Unit tests of the hf/ folder view (src/tree/hf_folder.cpp) in the tree, without a mount: which
// files it holds, why it is absent, and its weights read through ContentReader (the q/k rows
// checked against rows worked out by hand from transformers' reverse-permutation formula; partial
// reads against whole ones). Its files are checked against transformers itself, on mounts, in
// tests/python/test_hf_folder.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/content.h"
#include "ggufs/ggml_type.h"
#include "ggufs/gguf.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/half.h"
#include "ggufs/tree.h"
#include "metadata_builder.h"
#include "test_util.h"

namespace ggufs {
namespace {

constexpr std::uint64_t kHidden = 16, kHeads = 4, kKvHeads = 2, kVocab = 10, kFf = 64;

// F32 data of `n` distinct values: element k is k + base.
std::vector<std::uint8_t> distinct(std::uint64_t n, float base) {
  std::vector<std::uint8_t> out(n * 4);
  for (std::uint64_t k = 0; k < n; ++k) {
    const float v = static_cast<float>(k) + base;
    std::memcpy(out.data() + k * 4, &v, 4);
  }
  return out;
}

// A one-layer llama as llama.cpp's converter writes it (hidden 16, 4 heads of 4, 2 kv heads),
// every tensor F32, or ffn_down Q8_0 when `quantized` (blocks with scale 1/64).
std::vector<std::uint8_t> tiny_llama(std::string_view arch = "llama", bool quantized = false,
                                     bool rope_freqs = false) {
  GgufWriter g;
  g.add_string("general.architecture", std::string(arch));
  g.add_string("general.name", "tiny");
  const std::string a(arch);
  g.add_u32(a + ".block_count", 1);
  g.add_u32(a + ".context_length", 128);
  g.add_u32(a + ".embedding_length", kHidden);
  g.add_u32(a + ".feed_forward_length", kFf);
  g.add_u32(a + ".attention.head_count", kHeads);
  g.add_u32(a + ".attention.head_count_kv", kKvHeads);
  g.add_f32(a + ".rope.freq_base", 10000.0f);
  g.add_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  g.add_u32(a + ".vocab_size", kVocab);
  // A SentencePiece vocabulary of kVocab tokens, as llama.cpp's converter writes one.
  std::vector<Value> tokens, scores, types;
  for (const char* t : {"<unk>", "<s>", "</s>", "\xe2\x96\x81", "a", "b",
                        "\xe2\x96\x81"
                        "a",
                        "ab", "c", "d"}) {
    tokens.push_back(test::str(t));
    scores.push_back(test::f32(-static_cast<float>(scores.size())));
    types.push_back(test::i32(scores.size() == 1 ? 2 : scores.size() <= 3 ? 3 : 1));
  }
  g.add_string("tokenizer.ggml.model", "llama");
  g.add("tokenizer.ggml.tokens", test::arr(ValueType::kString, tokens));
  g.add("tokenizer.ggml.scores", test::arr(ValueType::kFloat32, scores));
  g.add("tokenizer.ggml.token_type", test::arr(ValueType::kInt32, types));
  g.add_u32("tokenizer.ggml.bos_token_id", 1);
  g.add_u32("tokenizer.ggml.eos_token_id", 2);
  g.add_u32("tokenizer.ggml.unknown_token_id", 0);
  float base = 0;
  const auto f32 = [&](std::string name, std::vector<std::uint64_t> ne) {
    std::uint64_t n = 1;
    for (const std::uint64_t x : ne) n *= x;
    g.add_tensor(std::move(name), GGML_TYPE_F32, ne, distinct(n, base));
    base += 1000;
  };
  const auto q8_0 = [&](std::string name, std::vector<std::uint64_t> ne) {
    const std::uint64_t blocks = ne[0] * ne[1] / 32;
    std::vector<std::uint8_t> data(blocks * 34);
    std::mt19937 rng(7);
    for (std::uint64_t b = 0; b < blocks; ++b) {
      const std::uint16_t d = float_to_half_as_numpy(1.0f / 64);
      std::memcpy(data.data() + b * 34, &d, 2);
      for (int i = 0; i < 32; ++i) data[b * 34 + 2 + i] = static_cast<std::uint8_t>(rng());
    }
    g.add_tensor(std::move(name), GGML_TYPE_Q8_0, ne, data);
  };
  f32("token_embd.weight", {kHidden, kVocab});
  f32("blk.0.attn_norm.weight", {kHidden});
  f32("blk.0.attn_q.weight", {kHidden, kHidden});
  f32("blk.0.attn_k.weight", {kHidden, kHidden / kHeads * kKvHeads});
  f32("blk.0.attn_v.weight", {kHidden, kHidden / kHeads * kKvHeads});
  f32("blk.0.attn_output.weight", {kHidden, kHidden});
  f32("blk.0.ffn_norm.weight", {kHidden});
  f32("blk.0.ffn_gate.weight", {kHidden, kFf});
  f32("blk.0.ffn_up.weight", {kHidden, kFf});
  quantized ? q8_0("blk.0.ffn_down.weight", {kFf, kHidden})
            : f32("blk.0.ffn_down.weight", {kFf, kHidden});
  f32("output_norm.weight", {kHidden});
  f32("output.weight", {kHidden, kVocab});
  if (rope_freqs) f32("rope_freqs.weight", {kHidden / kHeads / 2});  // llama3's rope factors
  return g.finish();
}

std::vector<std::string> children(const Tree& tree, Ino dir) {
  std::vector<std::string> out;
  for (const Ino c : tree.node(dir)->children) out.push_back(tree.node(c)->name);
  return out;
}

std::string read_all(const ContentReader& reader, const Node& n) {
  std::string out(n.size, '\0');
  EXPECT_EQ(reader.read(n, out.data(), out.size(), 0), n.size);
  return out;
}

// Reads of `lengths` bytes from every `step`-th byte of `n` equal `want`'s bytes there.
void expect_partial_reads(const ContentReader& reader, const Node& n, const std::string& want,
                          std::uint64_t step, std::initializer_list<std::size_t> lengths) {
  for (std::uint64_t off = 0; off < n.size; off += step) {
    for (const std::size_t len : lengths) {
      std::string part(len, '\0');
      const std::size_t got = reader.read(n, part.data(), len, off);
      EXPECT_EQ(part.substr(0, got), want.substr(off, got)) << off << "+" << len;
    }
  }
}

TEST(HfFolder, HoldsWhatSavePretrainedWrites) {
  GGUFS_REQUIRE_TESTDATA(dir);
  const FileSource src(dir / "real" / "llama-2-tiny-random.gguf");
  const GgufFile f = parse_gguf(src, "tiny.gguf");
  const Tree tree(f);
  const Ino hf = tree.lookup(kRootIno, "hf");
  ASSERT_NE(hf, 0u);
  EXPECT_EQ(
      children(tree, hf),
      (std::vector<std::string>{"config.json", "generation_config.json", "special_tokens_map.json",
                                "tokenizer.json", "tokenizer_config.json", "model.safetensors"}));
  EXPECT_TRUE(tree.node(kRootIno)->xattrs.empty());
  EXPECT_NE(tree.node(hf)->what.find("llama"), std::string::npos);
}

nlohmann::json header_of(const std::string& bytes, std::uint64_t& buffer) {
  std::uint64_t n = 0;
  for (int b = 0; b < 8; ++b) n |= std::uint64_t{static_cast<std::uint8_t>(bytes[b])} << (8 * b);
  buffer = 8 + n;
  return nlohmann::json::parse(bytes.substr(8, n));
}

// A tensor no state_dict entry maps (llama3's rope_freqs.weight: transformers' LlamaConfig holds
// its rope scaling as numbers, modeling_rope_utils.py) is named, as model.safetensors names the
// tensors it leaves out: one warning, and the list in the weight file's __metadata__.
TEST(HfFolder, TensorsNoEntryMapsAreListed) {
  for (const bool extra : {false, true}) {
    const MemorySource src(tiny_llama("llama", false, extra));
    const GgufFile f = parse_gguf(src, "m.gguf");
    const Tree tree(f);
    const ContentReader reader(f, src);
    const Node* st = tree.node(tree.lookup(tree.lookup(kRootIno, "hf"), "model.safetensors"));
    ASSERT_NE(st, nullptr);
    std::uint64_t buffer = 0;
    const nlohmann::json h = header_of(read_all(reader, *st), buffer);
    std::vector<std::string> said;
    for (const std::string& w : tree.warnings()) {
      if (w.starts_with("hf/")) said.push_back(w);
    }
    if (!extra) {
      EXPECT_EQ(h["__metadata__"], nlohmann::json({{"format", "pt"}}));
      EXPECT_TRUE(said.empty()) << said[0];
      continue;
    }
    EXPECT_EQ(
        h["__metadata__"],
        nlohmann::json({{"format", "pt"}, {"ggufs.omitted_tensors", R"(["rope_freqs.weight"])"}}));
    ASSERT_EQ(said.size(), 1u);
    EXPECT_EQ(said[0],
              "hf/ leaves out 1 tensor(s) no state_dict entry of llama maps: 'rope_freqs.weight'; "
              "listed in the __metadata__ of its first weight file under ggufs.omitted_tensors");
    EXPECT_FALSE(h.contains("rope_freqs.weight"));
  }
}

TEST(HfFolder, AbsentForOtherArchitecturesWithOneWarningAndAnAttribute) {
  const MemorySource src(tiny_llama("bert"));
  const GgufFile f = parse_gguf(src, "m.gguf");
  const Tree tree(f);
  EXPECT_EQ(tree.lookup(kRootIno, "hf"), 0u);
  std::size_t lines = 0;
  for (const std::string& w : tree.warnings()) {
    if (w.starts_with("hf/ is not offered: ")) {
      ++lines;
      EXPECT_NE(w.find("'bert'"), std::string::npos) << w;
    }
  }
  EXPECT_EQ(lines, 1u);
  // mlx/, hf/'s folder in MLX's form, is absent for the same reason.
  const auto& attrs = tree.node(kRootIno)->xattrs;
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].first, "user.ggufs.hf");
  EXPECT_TRUE(attrs[0].second.starts_with("not offered: ")) << attrs[0].second;
  EXPECT_NE(attrs[0].second.find("'bert'"), std::string::npos) << attrs[0].second;
  EXPECT_EQ(attrs[1].first, "user.ggufs.mlx");
  EXPECT_EQ(attrs[1].second, attrs[0].second);
  EXPECT_EQ(tree.lookup(kRootIno, "mlx"), 0u);
  // The rest of the tree is served.
  EXPECT_NE(tree.lookup(kRootIno, "model.safetensors"), 0u);
}

TEST(HfFolder, AbsentWithAVocabularyThatMakesNoTokenizer) {
  const MemorySource src(tiny_llama());
  GgufFile f = parse_gguf(src, "m.gguf");
  ASSERT_NE(Tree(f).lookup(kRootIno, "hf"), 0u);
  // A score array shorter than the tokens: transformers' converter would index past it.
  *test::find(f, "tokenizer.ggml.scores") =
      test::arr(ValueType::kFloat32, std::vector<Value>(kVocab - 1, test::f32(0)));
  const Tree tree(f);
  EXPECT_EQ(tree.lookup(kRootIno, "hf"), 0u);
  ASSERT_EQ(tree.node(kRootIno)->xattrs.size(), 2u);  // hf/'s and mlx/'s
  EXPECT_NE(tree.node(kRootIno)->xattrs[0].second.find("tokenizer.ggml.scores"), std::string::npos)
      << tree.node(kRootIno)->xattrs[0].second;
  // Without any vocabulary: the folder, without tokenizer files, and a warning.
  test::erase(f, "tokenizer.ggml.tokens");
  const Tree bare(f);
  const Ino hf = bare.lookup(kRootIno, "hf");
  ASSERT_NE(hf, 0u);
  EXPECT_EQ(bare.lookup(hf, "tokenizer.json"), 0u);
  EXPECT_NE(bare.lookup(hf, "config.json"), 0u);
  EXPECT_EQ(
      std::count_if(bare.warnings().begin(), bare.warnings().end(),
                    [](const std::string& w) { return w.starts_with("hf/ has no tokenizer"); }),
      1);
}

// The header of a safetensors file's bytes, and where its buffer begins.
TEST(HfFolder, QAndKRowsAreTheGgufRowsReversePermuted) {
  const MemorySource src(tiny_llama());
  const GgufFile f = parse_gguf(src, "m.gguf");
  const Tree tree(f);
  const ContentReader reader(f, src);
  const Node* st = tree.node(tree.lookup(tree.lookup(kRootIno, "hf"), "model.safetensors"));
  ASSERT_NE(st, nullptr);
  const std::string bytes = read_all(reader, *st);
  std::uint64_t buffer = 0;
  const nlohmann::json h = header_of(bytes, buffer);
  // Worked out by hand from transformers' _reverse_permute_weights (reshape to
  // (n, d, 2, cols), swap axes 1 and 2): with d = rows / n / 2, HF row h·2d + j·d + i holds GGUF
  // row h·2d + 2i + j. q: n = 4, d = 2; k: n = 2 (the kv heads), 8 rows, d = 2.
  const std::vector<std::uint64_t> q_rows = {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15};
  const std::vector<std::uint64_t> k_rows = {0, 2, 1, 3, 4, 6, 5, 7};
  // The GGUF tensors' values: element k of the n-th F32 tensor written is k + 1000·n.
  const struct {
    const char* name;
    float base;
    const std::vector<std::uint64_t>& rows;
  } cases[] = {{"model.layers.0.self_attn.q_proj.weight", 2000, q_rows},
               {"model.layers.0.self_attn.k_proj.weight", 3000, k_rows}};
  for (const auto& c : cases) {
    ASSERT_TRUE(h.contains(c.name)) << h.dump();
    const std::uint64_t at = buffer + h[c.name]["data_offsets"][0].get<std::uint64_t>();
    for (std::uint64_t r = 0; r < c.rows.size(); ++r) {
      for (std::uint64_t col = 0; col < kHidden; ++col) {
        float v;
        std::memcpy(&v, bytes.data() + at + (r * kHidden + col) * 4, 4);
        EXPECT_EQ(v, c.base + static_cast<float>(c.rows[r] * kHidden + col)) << c.name << r;
      }
    }
  }
  // v is not permuted.
  const std::uint64_t v_at =
      buffer + h["model.layers.0.self_attn.v_proj.weight"]["data_offsets"][0].get<std::uint64_t>();
  float v5;
  std::memcpy(&v5, bytes.data() + v_at + 5 * kHidden * 4, 4);
  EXPECT_EQ(v5, 4000.0f + 5 * kHidden);
}

TEST(HfFolder, PartialReadsEqualTheWholeFileInEveryDtype) {
  const MemorySource src(tiny_llama("llama", /*quantized=*/true));
  const GgufFile f = parse_gguf(src, "m.gguf");
  const ContentReader reader(f, src);
  for (const ViewData d : {ViewData::kFloat32, ViewData::kFloat16, ViewData::kBFloat16}) {
    TreeOptions o;
    o.hf_dtype = d;
    const Tree tree(f, o);
    const Node* st = tree.node(tree.lookup(tree.lookup(kRootIno, "hf"), "model.safetensors"));
    ASSERT_NE(st, nullptr);
    const std::string whole = read_all(reader, *st);
    std::mt19937_64 rng(1);
    for (int k = 0; k < 300; ++k) {
      const std::uint64_t at = rng() % st->size;
      const std::size_t n = static_cast<std::size_t>(1 + rng() % (st->size - at));
      std::string part(n, '\0');
      ASSERT_EQ(reader.read(*st, part.data(), n, at), n);
      ASSERT_EQ(part, whole.substr(at, n)) << "offset " << at << ", " << n << " bytes";
    }
  }
}

TEST(HfFolder, DtypeIsNamedInConfigAndHeader) {
  const MemorySource src(tiny_llama());
  const GgufFile f = parse_gguf(src, "m.gguf");
  TreeOptions o;
  const Tree f32_tree(f, o);
  o.hf_dtype = ViewData::kBFloat16;
  const Tree bf16_tree(f, o);
  const auto config = [](const Tree& t) {
    return nlohmann::json::parse(t.node(t.lookup(t.lookup(kRootIno, "hf"), "config.json"))->text);
  };
  EXPECT_FALSE(config(f32_tree).contains("dtype"));  // as transformers' import: none given
  EXPECT_EQ(config(bf16_tree)["dtype"], "bfloat16");
  const ContentReader reader(f, src);
  const Node* st =
      bf16_tree.node(bf16_tree.lookup(bf16_tree.lookup(kRootIno, "hf"), "model.safetensors"));
  std::uint64_t buffer = 0;
  const nlohmann::json h = header_of(read_all(reader, *st), buffer);
  EXPECT_EQ(h["model.norm.weight"]["dtype"], "BF16");
  EXPECT_EQ(h["__metadata__"], (nlohmann::json{{"format", "pt"}}));
}

// hf-mxfp4/'s pieces: transformers' MXFP4 layout (integrations/mxfp4.py,
// convert_moe_packed_tensors: byte i of a block holds element 2i in its low nibble, 2i + 1 in its
// high one; a row's blocks in turn, then its E8M0 scales) of ggml's blocks (ggml-common.h,
// block_mxfp4: e, then qs[j] = element j | element j + 16 << 4), rows of two tensors alternating.
// The expected bytes are built from the codes by those definitions, not by ggufs.
TEST(HfFolder, Mxfp4BlocksAndScalesAreTransformersLayout) {
  constexpr std::uint64_t kCols = 2, kRows = 3, kExperts = 2;  // blocks a row, rows an expert
  std::mt19937 rng(11);
  // codes[t][expert][row][block][k], scales[t][expert][row][block]
  std::vector<std::uint8_t> codes(2 * kExperts * kRows * kCols * 32), scales(codes.size() / 32);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng() % 16);
  for (auto& e : scales) e = static_cast<std::uint8_t>(rng());
  const auto block = [&](std::uint64_t t, std::uint64_t m, std::uint64_t r, std::uint64_t b) {
    return ((t * kExperts + m) * kRows + r) * kCols + b;
  };
  GgufWriter g;
  g.add_string("general.architecture", "gpt-oss");
  for (std::uint64_t t = 0; t < 2; ++t) {
    std::vector<std::uint8_t> data;
    for (std::uint64_t k = 0; k < kExperts * kRows * kCols; ++k) {
      const std::uint64_t id = t * kExperts * kRows * kCols + k;
      data.push_back(scales[id]);
      for (int j = 0; j < 16; ++j) {
        data.push_back(
            static_cast<std::uint8_t>(codes[id * 32 + j] | codes[id * 32 + j + 16] << 4));
      }
    }
    g.add_tensor(t ? "blk.0.ffn_up_exps.weight" : "blk.0.ffn_gate_exps.weight", GGML_TYPE_MXFP4,
                 {kCols * 32, kRows, kExperts}, data);
  }
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "m.gguf");
  ASSERT_EQ(f.tensors.size(), 2u);
  const ContentReader reader(f, src);
  for (const bool blocks : {true, false}) {
    const std::uint64_t unit = blocks ? 16 : 1;
    Node n;
    n.kind = NodeKind::kComposite;
    std::string want;
    for (std::uint64_t m = 0; m < kExperts; ++m) {
      Piece p;
      p.kind = blocks ? Piece::Kind::kMxfp4Blocks : Piece::Kind::kMxfp4Scales;
      p.tensor = 0;
      p.tensor2 = 1;
      p.rows = 2;
      p.cols = kCols;
      p.from = m * kRows * kCols;
      p.at = n.size;
      p.size = 2 * kRows * kCols * unit;
      n.size += p.size;
      n.pieces.push_back(p);
      for (std::uint64_t q = 0; q < 2 * kRows; ++q) {  // gate row q / 2, then up row q / 2
        for (std::uint64_t b = 0; b < kCols; ++b) {
          const std::uint64_t id = block(q % 2, m, q / 2, b);
          if (!blocks) {
            want.push_back(static_cast<char>(scales[id]));
            continue;
          }
          for (int i = 0; i < 16; ++i) {
            want.push_back(
                static_cast<char>(codes[id * 32 + 2 * i] | codes[id * 32 + 2 * i + 1] << 4));
          }
        }
      }
    }
    ASSERT_EQ(read_all(reader, n), want);
    expect_partial_reads(reader, n, want, 7, {1, 5, 16, 40});  // across blocks and rows
  }
}

// qwen35's out_proj columns back in HF order from a Q8_0 tensor (kUntileHeads): 2 rows of 64
// columns, each row 4 value heads of 16 (2 key heads), which the converter tiled (qwen.py,
// _LinearAttentionVReorderBase: HF heads 0, 1, 2, 3 are GGUF heads 0, 2, 1, 3). Expected
// values from ggml's Q8_0 (ggml-quants.c, dequantize_row_q8_0: d · qs[j]), decoded by hand.
TEST(HfFolder, ValueHeadsComeBackGroupedFromQuantizedRuns) {
  constexpr std::uint64_t kCols = 64, kRows = 2, kHead = 16;
  const std::uint64_t gguf_head[] = {0, 2, 1, 3};
  std::mt19937 rng(5);
  std::vector<std::uint8_t> data(kRows * kCols / 32 * 34);
  std::vector<float> value(kRows * kCols);  // GGUF order
  for (std::uint64_t b = 0; b < kRows * kCols / 32; ++b) {
    const float d = static_cast<float>(1 + b) / 64;  // exact in half precision
    const std::uint16_t h = float_to_half_as_numpy(d);
    std::memcpy(data.data() + b * 34, &h, 2);
    for (std::uint64_t j = 0; j < 32; ++j) {
      const auto q = static_cast<std::int8_t>(rng());
      data[b * 34 + 2 + j] = static_cast<std::uint8_t>(q);
      value[b * 32 + j] = d * q;
    }
  }
  GgufWriter g;
  g.add_string("general.architecture", "qwen35");
  g.add_tensor("blk.0.ssm_out.weight", GGML_TYPE_Q8_0, {kCols, kRows}, data);
  const MemorySource src(g.finish());
  const GgufFile f = parse_gguf(src, "m.gguf");
  const ContentReader reader(f, src);
  Node n;
  n.kind = NodeKind::kComposite;
  Piece p;
  p.kind = Piece::Kind::kTensor;
  p.data = ViewData::kFloat32;
  p.order = Piece::Order::kUntileHeads;
  p.n_head = 2;
  p.rows = 4;
  p.cols = kHead;
  p.size = n.size = kRows * kCols * 4;
  n.pieces.push_back(p);
  std::string want;
  for (std::uint64_t r = 0; r < kRows; ++r) {
    for (std::uint64_t c = 0; c < kCols; ++c) {
      const float v = value[r * kCols + gguf_head[c / kHead] * kHead + c % kHead];
      want.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  ASSERT_EQ(read_all(reader, n), want);
  expect_partial_reads(reader, n, want, 13, {1, 7, 64, 300});  // across heads and rows
}

// Gemma 3n's per-layer embeddings as llama.cpp's converter writes them: Google's 262144 rows
// (vocab_size_per_layer_input) zero-padded to vocab_size 262400 (gemma.py,
// Gemma3NModel.modify_tensors). hf/ serves the rows before the padding, as stored (F32: spliced)
// and decoded (Q8_0).
TEST(HfFolder, Gemma3nPerLayerEmbeddingsWithoutTheConvertersPadding) {
  constexpr std::uint64_t kVocabPadded = 262400, kPerLayerVocab = 262144, kWidth = 32;
  for (const bool quantized : {false, true}) {
    GgufWriter g;
    g.add_string("general.architecture", "gemma3n");
    g.add_u32("gemma3n.block_count", 1);
    g.add_u32("gemma3n.context_length", 128);
    g.add_u32("gemma3n.embedding_length", kHidden);
    g.add_u32("gemma3n.feed_forward_length", kFf);
    g.add_u32("gemma3n.attention.head_count", kHeads);
    g.add_u32("gemma3n.attention.head_count_kv", kKvHeads);
    g.add_u32("gemma3n.attention.key_length", kHidden / kHeads);
    g.add_f32("gemma3n.attention.layer_norm_rms_epsilon", 1e-6f);
    g.add_u32("gemma3n.altup.num_inputs", 4);
    g.add_u32("gemma3n.embedding_length_per_layer_input", kWidth);
    std::vector<Value> tokens, scores, types;
    for (std::uint64_t i = 0; i < kVocabPadded; ++i) {
      tokens.push_back(test::str(i < 3 ? std::vector<std::string>{"<pad>", "<eos>", "<bos>"}[i]
                                       : "t" + std::to_string(i)));
      scores.push_back(test::f32(-static_cast<float>(i)));
      types.push_back(test::i32(i < 3 ? 3 : 1));
    }
    g.add_string("tokenizer.ggml.model", "llama");
    g.add("tokenizer.ggml.tokens", test::arr(ValueType::kString, tokens));
    g.add("tokenizer.ggml.scores", test::arr(ValueType::kFloat32, scores));
    g.add("tokenizer.ggml.token_type", test::arr(ValueType::kInt32, types));
    g.add_u32("tokenizer.ggml.bos_token_id", 2);
    g.add_u32("tokenizer.ggml.eos_token_id", 1);
    // Row r holds (r mod 100) + k/64 in column k (exact in F32); the padding rows are zero.
    std::vector<float> values(kVocabPadded * kWidth, 0.0f);
    for (std::uint64_t r = 0; r < kPerLayerVocab; ++r) {
      for (std::uint64_t k = 0; k < kWidth; ++k) {
        values[r * kWidth + k] = static_cast<float>(r % 100) + static_cast<float>(k) / 64;
      }
    }
    std::vector<std::uint8_t> data(values.size() * 4);
    std::memcpy(data.data(), values.data(), data.size());
    std::vector<float> want_values(values.begin(), values.begin() + kPerLayerVocab * kWidth);
    if (quantized) {
      // Q8_0, one block a row: scale max/127 in half precision, rounded codes (as ggml's
      // quantize_row_q8_0_ref); the expected values are the blocks' decoded ones.
      data.assign(kVocabPadded * 34, 0);
      for (std::uint64_t r = 0; r < kVocabPadded; ++r) {
        float amax = 0;
        for (std::uint64_t k = 0; k < kWidth; ++k) {
          amax = std::max(amax, std::fabs(values[r * kWidth + k]));
        }
        const std::uint16_t h = float_to_half_as_numpy(amax / 127);
        const float d = half_to_float(h);
        std::memcpy(data.data() + r * 34, &h, 2);
        for (std::uint64_t k = 0; k < kWidth; ++k) {
          const float x = values[r * kWidth + k];
          const auto q = static_cast<std::int8_t>(d ? std::nearbyint(x / d) : 0);
          data[r * 34 + 2 + k] = static_cast<std::uint8_t>(q);
          if (r < kPerLayerVocab) want_values[r * kWidth + k] = d * q;
        }
      }
    }
    g.add_tensor("per_layer_token_embd.weight", quantized ? GGML_TYPE_Q8_0 : GGML_TYPE_F32,
                 {kWidth, kVocabPadded}, data);
    // Its one layer: what Gemma3nTextDecoderLayer builds in a layer of its own keys and values
    // (modeling_gemma3n.py), zeros, each shape as GGUF's ne (LAuReL rank 2).
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> layer = {
        {"attn_q.weight", {kHidden, kHidden}},
        {"attn_k.weight", {kHidden, kKvHeads * (kHidden / kHeads)}},
        {"attn_v.weight", {kHidden, kKvHeads * (kHidden / kHeads)}},
        {"attn_k_norm.weight", {kHidden / kHeads}},
        {"attn_output.weight", {kHidden, kHidden}},
        {"attn_q_norm.weight", {kHidden / kHeads}},
        {"ffn_gate.weight", {kHidden, kFf}},
        {"ffn_up.weight", {kHidden, kFf}},
        {"ffn_down.weight", {kFf, kHidden}},
        {"attn_norm.weight", {kHidden}},
        {"post_attention_norm.weight", {kHidden}},
        {"ffn_norm.weight", {kHidden}},
        {"post_ffw_norm.weight", {kHidden}},
        {"altup_correct_coef.weight", {4, 4}},
        {"altup_predict_coef.weight", {4, 16}},
        {"altup_router.weight", {kHidden, 4}},
        {"altup_router_norm.weight", {kHidden}},
        {"laurel_l.weight", {kHidden, 2}},
        {"laurel_r.weight", {2, kHidden}},
        {"laurel_post_norm.weight", {kHidden}},
        {"inp_gate.weight", {kHidden, kWidth}},
        {"proj.weight", {kWidth, kHidden}},
        {"post_norm.weight", {kHidden}}};
    for (const auto& [name, ne] : layer) {
      std::uint64_t n = 1;
      for (const std::uint64_t d : ne) n *= d;
      g.add_tensor("blk.0." + name, GGML_TYPE_F32, ne, std::vector<std::uint8_t>(n * 4, 0));
    }
    const MemorySource src(g.finish());
    const GgufFile f = parse_gguf(src, "m.gguf");
    const Tree tree(f);
    const ContentReader reader(f, src);
    const Ino hf = tree.lookup(kRootIno, "hf");
    ASSERT_NE(hf, 0u) << "no hf/";
    const Node* st = tree.node(tree.lookup(hf, "model.safetensors"));
    ASSERT_NE(st, nullptr);
    const std::string bytes = read_all(reader, *st);
    std::uint64_t buffer = 0;
    const nlohmann::json h = header_of(bytes, buffer);
    const nlohmann::json& t = h["model.embed_tokens_per_layer.weight"];
    ASSERT_EQ(t["shape"], nlohmann::json({kPerLayerVocab, kWidth})) << h.dump();
    const auto from = t["data_offsets"][0].get<std::uint64_t>();
    ASSERT_EQ(t["data_offsets"][1].get<std::uint64_t>() - from, kPerLayerVocab * kWidth * 4);
    EXPECT_EQ(std::memcmp(bytes.data() + buffer + from, want_values.data(), want_values.size() * 4),
              0)
        << (quantized ? "Q8_0" : "F32");
    const nlohmann::json config =
        nlohmann::json::parse(read_all(reader, *tree.node(tree.lookup(hf, "config.json"))));
    EXPECT_EQ(config["vocab_size_per_layer_input"], kPerLayerVocab);
  }
}

// mlx/ (folder_views.h, mlx_folder_layout): the Q8_0 ffn_down as MLX's affine form (8 bits,
// group 32: mlx/ops.cpp affine_dequantize gives scale·w + bias, w the byte of a row's LSB-first
// stream), which must give ggml's d·q for every element (ggml-quants.c dequantize_row_q8_0,
// worked from the GGUF bytes here); every float matrix named false in config.json's
// "quantization", the rest hf/'s; partial reads equal the whole file.
TEST(MlxFolder, Q8_0RowsInMlxFormAndFloatModulesNamedFalse) {
  const MemorySource src(tiny_llama("llama", /*quantized=*/true));
  const GgufFile f = parse_gguf(src, "m.gguf");
  const Tree tree(f);
  const ContentReader reader(f, src);
  const Ino mlx = tree.lookup(kRootIno, "mlx");
  ASSERT_NE(mlx, 0u);
  EXPECT_EQ(children(tree, mlx), children(tree, tree.lookup(kRootIno, "hf")));
  const nlohmann::json config =
      nlohmann::json::parse(tree.node(tree.lookup(mlx, "config.json"))->text);
  nlohmann::json want = {{"group_size", 32}, {"bits", 8}, {"mode", "affine"}};
  for (const char* m : {"model.embed_tokens", "lm_head", "model.layers.0.mlp.gate_proj",
                        "model.layers.0.mlp.up_proj", "model.layers.0.self_attn.q_proj",
                        "model.layers.0.self_attn.k_proj", "model.layers.0.self_attn.v_proj",
                        "model.layers.0.self_attn.o_proj"}) {
    want[m] = false;
  }
  EXPECT_EQ(config["quantization"], want);
  EXPECT_EQ(config["quantization_config"], want);
  const Node* st = tree.node(tree.lookup(mlx, "model.safetensors"));
  const std::string bytes = read_all(reader, *st);
  std::uint64_t buffer = 0;
  const nlohmann::json h = header_of(bytes, buffer);
  const std::string down = "model.layers.0.mlp.down_proj";
  EXPECT_EQ(h[down + ".weight"]["dtype"], "U32");
  EXPECT_EQ(h[down + ".weight"]["shape"], (nlohmann::json{kHidden, kFf / 4}));
  EXPECT_EQ(h[down + ".scales"]["shape"], (nlohmann::json{kHidden, kFf / 32}));
  EXPECT_EQ(h[down + ".biases"]["dtype"], "F32");
  EXPECT_EQ(h["model.layers.0.mlp.up_proj.weight"]["dtype"], "F32");
  const auto at = [&](const std::string& key) {
    return bytes.data() + buffer + h[key]["data_offsets"][0].get<std::uint64_t>();
  };
  const TensorInfo& t = *std::find_if(f.tensors.begin(), f.tensors.end(), [](const TensorInfo& x) {
    return x.name == "blk.0.ffn_down.weight";
  });
  std::vector<std::uint8_t> blocks(*t.n_bytes);
  ASSERT_EQ(src.read_at(t.file_offset, blocks.data(), blocks.size()), blocks.size());
  for (std::uint64_t e = 0; e < kHidden * kFf; ++e) {
    const std::uint8_t* block = blocks.data() + e / 32 * 34;
    std::uint16_t d;
    std::memcpy(&d, block, 2);
    const float ggml =
        half_to_float(d) * static_cast<float>(static_cast<std::int8_t>(block[2 + e % 32]));
    const std::uint64_t row = e / kFf, g = row * (kFf / 32) + e % kFf / 32;
    float scale, bias;
    std::memcpy(&scale, at(down + ".scales") + g * 4, 4);
    std::memcpy(&bias, at(down + ".biases") + g * 4, 4);
    const auto w = static_cast<std::uint8_t>(*(at(down + ".weight") + e));  // LSB-first bytes
    EXPECT_EQ(scale * static_cast<float>(w) + bias, ggml) << e;
  }
  expect_partial_reads(reader, *st, bytes, 97, {1, 5, 64, 1000, 5000});
}

}  // namespace
}  // namespace ggufs
