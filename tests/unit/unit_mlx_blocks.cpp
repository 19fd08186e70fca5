// ggml blocks in MLX's quantized form (ggufs/mlx_blocks.h). Each row of every conformance tensor
// is encoded and dequantized the way MLX does (mlx/ops.cpp affine_dequantize and fp_dequantize:
// the row's least-significant-bit-first stream of `bits`-bit values, then scale·q + bias, or the
// E2M1 value times the E8M0 or E4M3 scale), written here from MLX's definition and not from the
// encoder; the result must equal ggml's reference output (the conformance set's ref/ files, made by
// ggml). tests/python/test_mlx_blocks.py checks the same rows with MLX itself.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/mlx_blocks.h"
#include "test_util.h"

namespace ggufs {
namespace {

const TypeTraits* traits_by_name(const std::string& name) {
  for (const TypeTraits& t : all_types()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// The MLX form each exact type must have (src/ggml/README.md's layouts; MLX's groups 32, 64, 128
// for affine, 32 for mxfp4, 16 for nvfp4), and the types that must have none.
struct Expected {
  const char* type;
  MlxMode mode;
  std::uint32_t bits, group_size;
};
const Expected kExpected[] = {
    {"Q4_0", MlxMode::kAffine, 4, 32},   {"Q4_1", MlxMode::kAffine, 4, 32},
    {"Q5_0", MlxMode::kAffine, 5, 32},   {"Q5_1", MlxMode::kAffine, 5, 32},
    {"Q8_0", MlxMode::kAffine, 8, 32},   {"Q8_1", MlxMode::kAffine, 8, 32},
    {"Q4_K", MlxMode::kAffine, 4, 32},   {"Q5_K", MlxMode::kAffine, 5, 32},
    {"TQ1_0", MlxMode::kAffine, 2, 128}, {"TQ2_0", MlxMode::kAffine, 2, 128},
    {"MXFP4", MlxMode::kMxfp4, 4, 32},   {"NVFP4", MlxMode::kNvfp4, 4, 16},
    {"Q1_0", MlxMode::kAffine, 2, 128},  {"Q2_0", MlxMode::kAffine, 2, 64},
};
const char* const kWithoutForm[] = {"F32",     "F16",    "BF16",    "F64",   "I8",     "I16",
                                    "I32",     "I64",    "Q2_K",    "Q3_K",  "Q6_K",   "Q8_K",
                                    "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
                                    "IQ2_S",   "IQ4_XS", "IQ1_M"};

TEST(MlxBlocks, TableHasTheExactForms) {
  ASSERT_EQ(mlx_block_forms().size(), std::size(kExpected));
  for (const Expected& e : kExpected) {
    SCOPED_TRACE(e.type);
    const TypeTraits* t = traits_by_name(e.type);
    ASSERT_NE(t, nullptr);
    const MlxBlockForm* form = mlx_block_form(t->id);
    ASSERT_NE(form, nullptr);
    EXPECT_EQ(form->type, t->id);
    EXPECT_EQ(form->mode, e.mode);
    EXPECT_EQ(form->bits, e.bits);
    EXPECT_EQ(form->group_size, e.group_size);
    EXPECT_EQ(t->block_size % form->group_size, 0u) << "a group never spans two ggml blocks";
  }
  for (const char* name : kWithoutForm) {
    const TypeTraits* t = traits_by_name(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(mlx_block_form(t->id), nullptr) << name;
  }
  EXPECT_EQ(mlx_block_form(4), nullptr) << "a removed id";
  EXPECT_EQ(mlx_block_form(GGML_TYPE_COUNT), nullptr);
  EXPECT_EQ(mlx_mode_name(MlxMode::kAffine), "affine");
  EXPECT_EQ(mlx_mode_name(MlxMode::kMxfp4), "mxfp4");
  EXPECT_EQ(mlx_mode_name(MlxMode::kNvfp4), "nvfp4");
}

// One encoded row and its outputs.
struct Encoded {
  std::vector<std::uint32_t> weight;
  std::vector<float> scales, biases;
  std::vector<std::uint8_t> scale_bytes;
  MlxRowStatus status;
};

Encoded encode(const TypeTraits& t, const std::uint8_t* bytes, std::size_t n_blocks) {
  const MlxBlockForm& form = *mlx_block_form(t.id);
  const std::size_t ne0 = n_blocks * t.block_size;
  const bool affine = form.mode == MlxMode::kAffine;
  Encoded e;
  e.weight.resize(ne0 * form.bits / 32);
  e.scales.resize(affine ? ne0 / form.group_size : 0);
  e.biases.resize(e.scales.size());
  e.scale_bytes.resize(affine ? 0 : ne0 / form.group_size);
  const std::span<const std::uint8_t> blocks(bytes, n_blocks * t.type_size);
  e.status = encode_mlx_row(t.id, blocks, {e.weight, e.scales, e.biases, e.scale_bytes});
  // The same row encoded in parts, as mlx/'s read path asks for it (one file's part at a time):
  // the weight alone, then the scales alone (into outputs filled with other bits), give the same
  // status and, where it is kOk, the same bits as the whole encode, which the callers check
  // against ggml.
  std::vector<std::uint32_t> weight(e.weight.size(), 0xeeeeeeeeu);
  std::vector<float> scales(e.scales.size(), -1.0f), biases(e.biases.size(), -1.0f);
  std::vector<std::uint8_t> scale_bytes(e.scale_bytes.size(), 0xee);
  EXPECT_EQ(encode_mlx_row(t.id, blocks, {weight, {}, {}, {}}), e.status) << t.name;
  EXPECT_EQ(encode_mlx_row(t.id, blocks, {{}, scales, biases, scale_bytes}), e.status) << t.name;
  if (e.status == MlxRowStatus::kOk) {
    const auto bits = [](const std::vector<float>& v) {
      std::vector<std::uint32_t> b;
      for (const float x : v) b.push_back(std::bit_cast<std::uint32_t>(x));
      return b;
    };
    EXPECT_EQ(weight, e.weight) << t.name << ": the weight alone";
    EXPECT_EQ(bits(scales), bits(e.scales)) << t.name << ": the scales alone";
    EXPECT_EQ(bits(biases), bits(e.biases)) << t.name << ": the biases alone";
    EXPECT_EQ(scale_bytes, e.scale_bytes) << t.name << ": the scale bytes alone";
  }
  return e;
}

// Element i of MLX's stream: bit k of the value is bit i·bits + k of the row, least significant
// bit of word 0 first.
std::uint32_t mlx_quant(const std::vector<std::uint32_t>& words, std::size_t i,
                        std::uint32_t bits) {
  std::uint32_t q = 0;
  for (std::uint32_t k = 0; k < bits; ++k) {
    const std::size_t bit = i * bits + k;
    q |= ((words.at(bit / 32) >> (bit % 32)) & 1u) << k;
  }
  return q;
}

// MLX's E2M1 table (fp_dequantize's lut) and FP8 E4M3 (its from_fp8: 0x7F and 0xFF NaN).
const float kE2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                         -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
float e4m3(std::uint8_t x) {
  if ((x & 0x7f) == 0x7f) return std::numeric_limits<float>::quiet_NaN();
  const int e = (x >> 3) & 15, m = x & 7;
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), -9)
                         : std::ldexp(static_cast<float>(8 + m), e - 10);
  return (x & 0x80) ? -v : v;
}

// Element i dequantized as MLX does: the product rounded on its own, then the sum.
float mlx_value(const MlxBlockForm& form, const Encoded& e, std::size_t i) {
  const std::uint32_t q = mlx_quant(e.weight, i, form.bits);
  const std::size_t g = i / form.group_size;
  switch (form.mode) {
    case MlxMode::kAffine: {
      const volatile float product = e.scales.at(g) * static_cast<float>(q);
      return product + e.biases.at(g);
    }
    case MlxMode::kMxfp4:
      return kE2m1[q] * std::ldexp(1.0f, static_cast<int>(e.scale_bytes.at(g)) - 127);
    case MlxMode::kNvfp4:
      return kE2m1[q] * e4m3(e.scale_bytes.at(g));
  }
  return 0.0f;
}

float le_float(const std::uint8_t* p) {
  return std::bit_cast<float>(std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 |
                              std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
}

// Every row of every conformance tensor of the type, through MLX's formula, equals ggml's
// reference (==: only the sign of a zero may differ).
class MlxBlocksConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(MlxBlocksConformance, MlxDequantizeEqualsGgmlReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  const std::filesystem::path dir = data / "conformance";
  const nlohmann::json manifest = test::read_json(dir / "manifest.json");
  const TypeTraits* t = traits_by_name(GetParam());
  ASSERT_NE(t, nullptr);
  const MlxBlockForm* form = mlx_block_form(t->id);
  ASSERT_NE(form, nullptr);
  int tensors = 0, rows = 0;
  for (const auto& file : manifest.at("files")) {
    if (file.at("type") != GetParam()) continue;
    const std::vector<std::uint8_t> gguf =
        test::read_file(dir / file.at("file").get<std::string>());
    for (const auto& tensor : file.at("tensors")) {
      SCOPED_TRACE(GetParam() + " " + tensor.at("name").get<std::string>());
      const auto offset = tensor.at("file_offset").get<std::size_t>();
      const auto nbytes = tensor.at("nbytes").get<std::size_t>();
      const auto ne0 = tensor.at("ne4").at(0).get<std::size_t>();
      const std::vector<std::uint8_t> ref =
          test::read_file(dir / tensor.at("ref").get<std::string>());
      ASSERT_LE(offset + nbytes, gguf.size());
      const std::size_t row_blocks = ne0 / t->block_size, row_bytes = row_blocks * t->type_size;
      ASSERT_EQ(nbytes % row_bytes, 0u);
      ASSERT_EQ(ref.size(), nbytes / row_bytes * ne0 * 4);
      for (std::size_t r = 0; r < nbytes / row_bytes; ++r) {
        const Encoded e = encode(*t, &gguf[offset + r * row_bytes], row_blocks);
        ASSERT_EQ(e.status, MlxRowStatus::kOk) << "row " << r;
        int mismatches = 0;
        for (std::size_t i = 0; i < ne0 && mismatches < 5; ++i) {
          const float want = le_float(&ref[4 * (r * ne0 + i)]);
          const float have = mlx_value(*form, e, i);
          if (!(have == want)) {
            ++mismatches;
            ADD_FAILURE() << "row " << r << " element " << i << ": MLX gives " << have << ", ggml "
                          << want;
          }
        }
        ++rows;
      }
      ++tensors;
    }
  }
  EXPECT_EQ(tensors, 3) << "the conformance set has three tensors per type";
  EXPECT_EQ(rows, 8) << "1 + 3 + 4 rows";
}

std::vector<std::string> exact_type_names() {
  std::vector<std::string> names;
  for (const Expected& e : kExpected) names.emplace_back(e.type);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Exact, MlxBlocksConformance, ::testing::ValuesIn(exact_type_names()),
                         [](const auto& info) { return info.param; });

// 5-bit values cross word boundaries: a Q5_0 block whose element i holds q = i (low nibble of
// qs[j] for j and of the high nibble for j + 16, fifth bits of qh set for 16..31). The stream
// 0, 1, …, 31 at 5 bits each, worked by hand: word 0 holds elements 0–5 in bits 0–29 (0x0A418820)
// and the low two bits of 6 (0b10) in bits 30–31, so 0x8A418820; word 1 starts with 6's high
// bit (1) and element 7 in bits 3–7 (0x38): …39.
TEST(MlxBlocks, FiveBitValuesCrossWordBoundaries) {
  std::vector<std::uint8_t> block(22);
  block[0] = 0x00;  // d = 1.0 (binary16 0x3C00)
  block[1] = 0x3c;
  block[2] = block[3] = 0x00;  // qh: elements 16..31 have a fifth bit
  block[4] = block[5] = 0xff;
  for (int j = 0; j < 16; ++j) block[6 + j] = static_cast<std::uint8_t>(j | j << 4);
  const Encoded e = encode(*type_traits(GGML_TYPE_Q5_0), block.data(), 1);
  ASSERT_EQ(e.status, MlxRowStatus::kOk);
  const std::vector<std::uint32_t> want = {0x8a418820, 0xc5a92839, 0xca307b9a, 0x38bdab49,
                                           0xffbbcdeb};
  EXPECT_EQ(e.weight, want);
  EXPECT_EQ(e.scales, std::vector<float>{1.0f});
  EXPECT_EQ(e.biases, std::vector<float>{-16.0f});
}

// Scales MLX cannot hold: MXFP4's exponent 255 (ggml's 2^127, MLX's 2^128 = inf) and NVFP4's
// scale byte 0xFF (ggml's 480 > E4M3's 448) make the row kNoExactForm; NVFP4's 0x7F (ggml's 0,
// E4M3's NaN) becomes 0x00 and bit 7 (ignored by ggml, a sign in E4M3) is cleared.
TEST(MlxBlocks, ScalesWithoutAnMlxForm) {
  std::vector<std::uint8_t> mxfp4(2 * 17, 0x11);
  mxfp4[0] = 254;
  mxfp4[17] = 255;
  EXPECT_EQ(encode(*type_traits(GGML_TYPE_MXFP4), mxfp4.data(), 1).status, MlxRowStatus::kOk);
  EXPECT_EQ(encode(*type_traits(GGML_TYPE_MXFP4), mxfp4.data(), 2).status,
            MlxRowStatus::kNoExactForm);

  std::vector<std::uint8_t> nvfp4(36, 0x11);
  nvfp4[0] = 0x7f;
  nvfp4[1] = 0x85;
  nvfp4[2] = 0x80;
  nvfp4[3] = 0x7e;
  const Encoded e = encode(*type_traits(GGML_TYPE_NVFP4), nvfp4.data(), 1);
  ASSERT_EQ(e.status, MlxRowStatus::kOk);
  EXPECT_EQ(e.scale_bytes, (std::vector<std::uint8_t>{0x00, 0x05, 0x00, 0x7e}));
  nvfp4[3] = 0xff;
  EXPECT_EQ(encode(*type_traits(GGML_TYPE_NVFP4), nvfp4.data(), 1).status,
            MlxRowStatus::kNoExactForm);
}

// An infinite block scale d (binary16 0x7C00 or 0xFC00). ggml's d·(q − k) forms give ±inf, or
// NaN at q = k (ggml-quants.c, dequantize_row_q4_0: y = (q − 8)·d), where MLX's d·q + (−k·d) is
// NaN for every q: Q4_0, Q5_0, Q8_0, Q8_1, TQ1_0, TQ2_0, Q1_0 and Q2_0 have no exact form of such
// a block, and the largest finite d (65504) keeps one. Q4_1, Q5_1, Q4_K and Q5_K form MLX's own
// d·q + m (dequantize_row_q4_1, and d·sc·q − dmin·m of dequantize_row_q4_K), so even an
// infinite d is theirs: MLX's formula gives ggml's values (the decoder's, bit-exact with ggml's
// reference output in unit_kernels.cpp), NaN where ggml's is NaN.
TEST(MlxBlocks, AnInfiniteBlockScaleIsExactOnlyWhereMlxsFormulaIsGgmls) {
  struct Case {
    GgmlType type;
    std::size_t d_at;  // the byte of d (binary16) in the type's block (ggml-common.h)
    bool exact;
  };
  const Case cases[] = {
      {GGML_TYPE_Q4_0, 0, false}, {GGML_TYPE_Q5_0, 0, false},   {GGML_TYPE_Q8_0, 0, false},
      {GGML_TYPE_Q8_1, 0, false}, {GGML_TYPE_TQ1_0, 52, false}, {GGML_TYPE_TQ2_0, 64, false},
      {GGML_TYPE_Q1_0, 0, false}, {GGML_TYPE_Q2_0, 0, false},   {GGML_TYPE_Q4_1, 0, true},
      {GGML_TYPE_Q5_1, 0, true},  {GGML_TYPE_Q4_K, 0, true},    {GGML_TYPE_Q5_K, 0, true},
  };
  for (const Case& c : cases) {
    const TypeTraits& t = *type_traits(c.type);
    SCOPED_TRACE(t.name);
    for (const std::uint16_t d :
         {std::uint16_t{0x7c00}, std::uint16_t{0xfc00}, std::uint16_t{0x7bff}}) {
      SCOPED_TRACE(d);
      std::vector<std::uint8_t> block(t.type_size);
      for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::uint8_t>(i * 37);
      block[c.d_at] = static_cast<std::uint8_t>(d & 0xff);
      block[c.d_at + 1] = static_cast<std::uint8_t>(d >> 8);
      const Encoded e = encode(t, block.data(), 1);
      const bool finite = d == 0x7bff;
      ASSERT_EQ(e.status, finite || c.exact ? MlxRowStatus::kOk : MlxRowStatus::kNoExactForm);
      if (e.status != MlxRowStatus::kOk) continue;
      std::vector<float> ggml(t.block_size);
      t.to_float(block.data(), ggml.data(), 1);
      const MlxBlockForm& form = *mlx_block_form(t.id);
      for (std::size_t i = 0; i < ggml.size(); ++i) {
        const float mlx = mlx_value(form, e, i);
        EXPECT_TRUE(mlx == ggml[i] || (std::isnan(mlx) && std::isnan(ggml[i])))
            << i << ": MLX " << mlx << ", ggml " << ggml[i];
      }
    }
  }
}

// A reader of the scales and biases alone passes no weight span: they are written as with one
// (a Q4_0 block of d = 2: scale 2, bias −16), and a weight span of another size is still refused.
TEST(MlxBlocks, ScalesAndBiasesAloneWithoutTheWeight) {
  std::vector<std::uint8_t> block(18, 0x5a);
  block[0] = 0x00;  // d = 2.0 (binary16 0x4000)
  block[1] = 0x40;
  std::vector<float> scales(1), biases(1);
  EXPECT_EQ(encode_mlx_row(GGML_TYPE_Q4_0, block, {{}, scales, biases, {}}), MlxRowStatus::kOk);
  EXPECT_EQ(scales, std::vector<float>{2.0f});
  EXPECT_EQ(biases, std::vector<float>{-16.0f});
  std::vector<std::uint32_t> short_weight(3);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_Q4_0, block, {short_weight, scales, biases, {}}),
               std::invalid_argument);
}

TEST(MlxBlocks, RefusesWrongSizesAndTypes) {
  std::vector<std::uint8_t> bytes(18 * 2);
  std::vector<std::uint32_t> weight(8);
  std::vector<float> scales(2), biases(2);
  std::vector<std::uint8_t> none;
  const MlxRow row{weight, scales, biases, none};
  EXPECT_EQ(encode_mlx_row(GGML_TYPE_Q4_0, bytes, row), MlxRowStatus::kOk);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_Q4_0, {bytes.data(), 35}, row), std::invalid_argument);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_Q4_0, {bytes.data(), 18}, row), std::invalid_argument);
  std::vector<std::uint8_t> two(2);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_Q4_0, bytes, {weight, scales, biases, two}),
               std::invalid_argument);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_Q6_K, bytes, row), std::invalid_argument);
  EXPECT_THROW(encode_mlx_row(GGML_TYPE_COUNT, bytes, row), std::invalid_argument);
  const MlxBlockForm& q5 = *mlx_block_form(GGML_TYPE_Q5_K);
  EXPECT_EQ(mlx_weight_words(q5, 256), 40u);
  EXPECT_EQ(mlx_groups(q5, 256), 8u);
}

// MLX's own affine quantize (mx.quantize of mlx-cpu 0.32.4, group 32; the expected values below
// are its output for these 96 values): a group of mixed signs whose largest magnitude is its
// maximum (a negative scale), a constant group (the 1e-7 floor of the scale), and a group whose
// largest magnitude is its minimum.
std::vector<float> requantize_input() {
  std::vector<float> x;
  for (int i = 0; i < 32; ++i) {
    x.push_back(static_cast<float>((i % 2 ? -1.0 : 1.0) * (i % 7) * 0.125 + i * 0.01));
  }
  x.insert(x.end(), 32, 0.25f);
  x.push_back(-3.0f);
  x.insert(x.end(), 31, 0.5f);
  return x;
}

TEST(MlxBlocks, QuantizesFloatsAsMlxDoes) {
  const std::vector<float> x = requantize_input();
  struct Case {
    std::uint32_t bits;
    std::vector<float> scales;
    std::vector<std::uint32_t> words;  // the first group's (bits words)
  };
  const Case cases[] = {
      {8,
       {-0x1.9447dp-8f, -0x1.ad7f2ap-24f, 0x1.c0e07p-7f},
       {0xd26ead9a, 0x8f17f742, 0xd94db479, 0x9683ff21, 0xe12cbb58, 0x9d627800, 0xe80bc336,
        0xa5417f6d}},
      {6,
       {-0x1.99999ap-6f, -0x1.ad7f2ap-24f, 0x1.c71c72p-5f},
       {0x50d1bae6, 0x3b1e8c6f, 0x960fc8d9, 0x80dcbb96, 0x3c0d9d87, 0xa507dbe4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bits);
    const MlxBlockForm& form = *mlx_requantized_form(c.bits);
    EXPECT_EQ(form.mode, MlxMode::kAffine);
    EXPECT_EQ(form.group_size, 32u);
    std::vector<std::uint32_t> weight(mlx_weight_words(form, x.size()));
    std::vector<float> scales(3), biases(3);
    ASSERT_EQ(quantize_mlx_row(x, form, {weight, scales, biases, {}}), MlxRowStatus::kOk);
    EXPECT_EQ(scales, c.scales);
    EXPECT_EQ(biases, (std::vector<float>{0x1.e66666p-1f, 0.25f, -3.0f}));
    EXPECT_EQ(std::vector(weight.begin(), weight.begin() + c.bits), c.words);
    // The constant group: all q 0. The last: q 0 for its minimum (the bias), all bits set after.
    for (std::uint32_t i = c.bits; i < 2 * c.bits; ++i) EXPECT_EQ(weight[i], 0u) << i;
    EXPECT_EQ(weight[2 * c.bits], 0xffffffffu << c.bits);
    for (std::size_t i = 2 * c.bits + 1; i < weight.size(); ++i) {
      EXPECT_EQ(weight[i], 0xffffffffu) << i;
    }
  }
}

TEST(MlxBlocks, QuantizeRefusesNonFiniteValuesAndWrongSizes) {
  const MlxBlockForm& form = *mlx_requantized_form(8);
  std::vector<float> x(64, 1.0f);
  std::vector<std::uint32_t> weight(16);
  std::vector<float> scales(2), biases(2);
  const MlxRow row{weight, scales, biases, {}};
  EXPECT_EQ(quantize_mlx_row(x, form, row), MlxRowStatus::kOk);
  for (const float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    x[40] = bad;
    EXPECT_EQ(quantize_mlx_row(x, form, row), MlxRowStatus::kNotFinite);
  }
  // Finite values whose range overflows float32 (an MXFP4 block of exponent byte 252: ±6·2^125 =
  // ±2.55e38): MLX's quantize gives scale −inf and bias 0, so every weight dequantizes to NaN or
  // infinity (mlx/backend/cpu/quantized.cpp, quantize). One-signed values that large keep a
  // finite range, scale and values.
  x.assign(64, 1.0f);
  x[3] = 2.55e38f;
  x[4] = -2.55e38f;
  EXPECT_EQ(quantize_mlx_row(x, form, row), MlxRowStatus::kNotFinite);
  EXPECT_EQ(quantize_mlx_row(x, form, {{}, scales, biases, {}}), MlxRowStatus::kNotFinite)
      << "the scales alone";
  x[4] = 0.0f;
  x[5] = 3.4e38f;
  ASSERT_EQ(quantize_mlx_row(x, form, row), MlxRowStatus::kOk);
  for (std::size_t i = 0; i < 32; ++i) {
    const float value =
        scales[0] * static_cast<float>((weight[i / 4] >> (8 * (i % 4))) & 255) + biases[0];
    EXPECT_TRUE(std::isfinite(value)) << i;
  }
  EXPECT_THROW(quantize_mlx_row({x.data(), 48}, form, row), std::invalid_argument);
  EXPECT_THROW(quantize_mlx_row({x.data(), 32}, form, row), std::invalid_argument);
  EXPECT_THROW(quantize_mlx_row(x, *mlx_block_form(GGML_TYPE_MXFP4), row), std::invalid_argument);
  EXPECT_EQ(mlx_requantized_form(7), nullptr);
  EXPECT_EQ(mlx_requantized_form(1), nullptr);
}

}  // namespace
}  // namespace ggufs
