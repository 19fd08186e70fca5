// The ggml type table, the half conversions and the block decoders. Expected values come from
// the conformance test data (made by ggml), the tables of src/ggml/README.md and the hashes of
// ggml's own lookup tables, never from the code under test.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ggufs/ggml_tables.h"
#include "ggufs/ggml_type.h"
#include "ggufs/half.h"
#include "test_util.h"

namespace ggufs {
namespace {

// ---------------------------------------------------------------------------------------------
// Which types decode. A type whose decoder is not bit-exact must have no decoder (to_float ==
// nullptr, so the product never serves wrong bytes) and is listed in kUndecodedTypes instead.

const std::vector<std::string> kDecodedTypes = {
    "F32",    "F16",   "BF16",    "F64",    "I8",      "I16",   "I32",    "I64",   "Q4_0",
    "Q4_1",   "Q5_0",  "Q5_1",    "Q8_0",   "Q8_1",    "Q2_K",  "Q3_K",   "Q4_K",  "Q5_K",
    "Q6_K",   "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S",
    "IQ4_XS", "IQ1_M", "TQ1_0",   "TQ2_0",  "MXFP4",   "NVFP4", "Q1_0",   "Q2_0",
};

const std::vector<std::string> kUndecodedTypes = {};

const TypeTraits* traits_by_name(const std::string& name) {
  for (const TypeTraits& t : all_types()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Little-endian bytes of a float array, the form of the reference files.
std::vector<std::uint8_t> to_le_bytes(const std::vector<float>& v) {
  std::vector<std::uint8_t> out(4 * v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(v[i]);
    for (int k = 0; k < 4; ++k) out[4 * i + k] = static_cast<std::uint8_t>(bits >> (8 * k));
  }
  return out;
}

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

// ---------------------------------------------------------------------------------------------
// Conformance: every tensor of the type's conformance file decodes to ggml's reference bits.

class KernelConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelConformance, MatchesGgmlReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  const std::filesystem::path dir = data / "conformance";
  const nlohmann::json manifest = test::read_json(dir / "manifest.json");
  const std::string& type = GetParam();
  const TypeTraits* traits = traits_by_name(type);
  ASSERT_NE(traits, nullptr) << type;
  ASSERT_NE(traits->to_float, nullptr) << type;

  int tensors_checked = 0;
  for (const auto& file : manifest.at("files")) {
    if (file.at("type") != type) continue;
    ASSERT_EQ(file.at("type_id").get<std::uint32_t>(), traits->id);
    // Raw bytes straight from the file at the manifest's offsets: no dependency on the parser.
    const std::vector<std::uint8_t> gguf =
        test::read_file(dir / file.at("file").get<std::string>());
    for (const auto& t : file.at("tensors")) {
      SCOPED_TRACE(type + " " + t.at("name").get<std::string>());
      const auto offset = t.at("file_offset").get<std::uint64_t>();
      const auto nbytes = t.at("nbytes").get<std::uint64_t>();
      const auto n_elements = t.at("n_elements").get<std::uint64_t>();
      ASSERT_LE(offset + nbytes, gguf.size());
      ASSERT_EQ(t.at("sha256_raw").get<std::string>(), test::sha256_hex(&gguf[offset], nbytes));

      std::uint64_t ne[4];
      for (int i = 0; i < 4; ++i) ne[i] = t.at("ne4").at(i).get<std::uint64_t>();
      ASSERT_EQ(tensor_bytes(*traits, ne), std::optional<std::uint64_t>{nbytes});
      ASSERT_EQ(nbytes % traits->type_size, 0u);
      const std::uint64_t n_blocks = nbytes / traits->type_size;
      ASSERT_EQ(n_blocks * traits->block_size, n_elements);

      std::vector<float> out(n_elements);
      traits->to_float(&gguf[offset], out.data(), n_blocks);
      const std::vector<std::uint8_t> got = to_le_bytes(out);

      const std::vector<std::uint8_t> ref = test::read_file(dir / t.at("ref").get<std::string>());
      ASSERT_EQ(ref.size(), got.size());
      // The hash pins exact bits; NaN payloads may differ (any NaN is accepted), so a reference
      // with NaNs is only compared element-wise below.
      if (t.value("ref_nan_count", 0) == 0) {
        EXPECT_EQ(test::sha256_hex(got.data(), got.size()), t.at("sha256_ref").get<std::string>());
      }
      int mismatches = 0;
      for (std::size_t i = 0; i < n_elements && mismatches < 10; ++i) {
        const std::uint32_t want = le32(&ref[4 * i]);
        const std::uint32_t have = le32(&got[4 * i]);
        const bool both_nan =
            std::isnan(std::bit_cast<float>(want)) && std::isnan(std::bit_cast<float>(have));
        if (want != have && !both_nan) {
          ++mismatches;
          ADD_FAILURE() << "element " << i << ": got " << std::hex << have << ", want " << want;
        }
      }
      ++tensors_checked;
    }
  }
  EXPECT_EQ(tensors_checked, 3) << "the conformance set has three tensors per type";
}

INSTANTIATE_TEST_SUITE_P(Decoded, KernelConformance, ::testing::ValuesIn(kDecodedTypes),
                         [](const auto& info) { return info.param; });

// ---------------------------------------------------------------------------------------------
// Half conversions.

// An independent half → float: sign × m × 2^(e − 25) with the implicit bit, via std::ldexp.
float half_by_formula(std::uint16_t h) {
  const bool negative = (h & 0x8000u) != 0;
  const int e = (h >> 10) & 31;
  const int m = h & 1023;
  double v;
  if (e == 31) {
    v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), -24);
  } else {
    v = std::ldexp(static_cast<double>(1024 + m), e - 25);
  }
  return static_cast<float>(negative ? -v : v);
}

TEST(Half, ToFloatExhaustive) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    const float got = half_to_float(half);
    const float want = half_by_formula(half);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000u) != 0) << std::hex << h;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
          << std::hex << h;
    }
  }
}

TEST(Half, FromFloatRoundTripsEveryHalf) {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    if (std::isnan(half_by_formula(half))) continue;
    EXPECT_EQ(float_to_half(half_by_formula(half)), half) << std::hex << h;
  }
}

// Between two neighbouring halves a < b (same sign): the exact midpoint goes to the even one,
// anything nearer to one side goes to that side. 0x7c00 (inf) plays the neighbour 2^16 of 65504.
TEST(Half, FromFloatRoundsToNearestEven) {
  for (std::uint32_t a = 0; a < 0x7c00; ++a) {
    for (const std::uint32_t sign : {0u, 0x8000u}) {
      const auto lo = static_cast<std::uint16_t>(sign | a);
      const auto hi = static_cast<std::uint16_t>(sign | (a + 1));
      const double vlo = half_by_formula(lo);
      const double vhi = a + 1 == 0x7c00 ? (sign ? -65536.0 : 65536.0) : half_by_formula(hi);
      const auto mid = static_cast<float>((vlo + vhi) / 2);  // exact: halves have 11 bits
      const std::uint16_t even = (a & 1) ? hi : lo;
      EXPECT_EQ(float_to_half(mid), even) << std::hex << a;
      const float toward_lo = std::nextafter(mid, static_cast<float>(vlo));
      const float toward_hi = std::nextafter(mid, static_cast<float>(vhi));
      EXPECT_EQ(float_to_half(toward_lo), lo) << std::hex << a;
      EXPECT_EQ(float_to_half(toward_hi), hi) << std::hex << a;
    }
  }
}

TEST(Half, FromFloatSpecials) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(float_to_half(1e10f), 0x7c00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::max()), 0xfc00);
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half(-1e-30f), 0x8000);
  for (const float nan :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN(),
        -std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7f800001u)}) {
    const std::uint16_t h = float_to_half(nan);
    EXPECT_EQ(h & 0x7c00, 0x7c00) << std::hex << h;
    EXPECT_NE(h & 0x03ff, 0) << std::hex << h;
    EXPECT_EQ((h & 0x8000) != 0, std::signbit(nan)) << std::hex << h;
  }
}

TEST(Half, Bf16IsTheUpperHalfOfAFloat) {
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0xc000), -2.0f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(bf16_to_float(0x7fc1)), 0x7fc10000u);
}

// ---------------------------------------------------------------------------------------------
// The type table, against src/ggml/README.md §2.

struct DocRow {
  GgmlType id;
  const char* name;
  std::uint32_t block;
  std::uint32_t bytes;
};

// src/ggml/README.md §2, "All types" (id, name, block elements, bytes per block).
constexpr DocRow kDocTable[] = {
    {GGML_TYPE_F32, "F32", 1, 4},
    {GGML_TYPE_F16, "F16", 1, 2},
    {GGML_TYPE_Q4_0, "Q4_0", 32, 18},
    {GGML_TYPE_Q4_1, "Q4_1", 32, 20},
    {GGML_TYPE_Q5_0, "Q5_0", 32, 22},
    {GGML_TYPE_Q5_1, "Q5_1", 32, 24},
    {GGML_TYPE_Q8_0, "Q8_0", 32, 34},
    {GGML_TYPE_Q8_1, "Q8_1", 32, 36},
    {GGML_TYPE_Q2_K, "Q2_K", 256, 84},
    {GGML_TYPE_Q3_K, "Q3_K", 256, 110},
    {GGML_TYPE_Q4_K, "Q4_K", 256, 144},
    {GGML_TYPE_Q5_K, "Q5_K", 256, 176},
    {GGML_TYPE_Q6_K, "Q6_K", 256, 210},
    {GGML_TYPE_Q8_K, "Q8_K", 256, 292},
    {GGML_TYPE_IQ2_XXS, "IQ2_XXS", 256, 66},
    {GGML_TYPE_IQ2_XS, "IQ2_XS", 256, 74},
    {GGML_TYPE_IQ3_XXS, "IQ3_XXS", 256, 98},
    {GGML_TYPE_IQ1_S, "IQ1_S", 256, 50},
    {GGML_TYPE_IQ4_NL, "IQ4_NL", 32, 18},
    {GGML_TYPE_IQ3_S, "IQ3_S", 256, 110},
    {GGML_TYPE_IQ2_S, "IQ2_S", 256, 82},
    {GGML_TYPE_IQ4_XS, "IQ4_XS", 256, 136},
    {GGML_TYPE_I8, "I8", 1, 1},
    {GGML_TYPE_I16, "I16", 1, 2},
    {GGML_TYPE_I32, "I32", 1, 4},
    {GGML_TYPE_I64, "I64", 1, 8},
    {GGML_TYPE_F64, "F64", 1, 8},
    {GGML_TYPE_IQ1_M, "IQ1_M", 256, 56},
    {GGML_TYPE_BF16, "BF16", 1, 2},
    {GGML_TYPE_TQ1_0, "TQ1_0", 256, 54},
    {GGML_TYPE_TQ2_0, "TQ2_0", 256, 66},
    {GGML_TYPE_MXFP4, "MXFP4", 32, 17},
    {GGML_TYPE_NVFP4, "NVFP4", 64, 36},
    {GGML_TYPE_Q1_0, "Q1_0", 128, 18},
    {GGML_TYPE_Q2_0, "Q2_0", 64, 18},
};

TEST(TypeTable, EveryDocumentedTypeIsPresent) {
  for (const DocRow& row : kDocTable) {
    const TypeTraits* t = type_traits(row.id);
    ASSERT_NE(t, nullptr) << row.id;
    EXPECT_EQ(t->id, row.id);
    EXPECT_EQ(t->name, row.name);
    EXPECT_EQ(t->block_size, row.block) << row.name;
    EXPECT_EQ(t->type_size, row.bytes) << row.name;
  }
}

TEST(TypeTable, AllTypesInIdOrder) {
  const auto types = all_types();
  ASSERT_EQ(types.size(), std::size(kDocTable));
  for (std::size_t i = 0; i < types.size(); ++i) {
    EXPECT_EQ(types[i].id, kDocTable[i].id);
    EXPECT_EQ(&types[i], type_traits(kDocTable[i].id));
  }
}

TEST(TypeTable, RemovedAndUnknownIdsHaveNoTraits) {
  for (const std::uint32_t id : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    EXPECT_EQ(type_traits(id), nullptr) << id;
  }
  for (const std::uint32_t id :
       {std::uint32_t{GGML_TYPE_COUNT}, 44u, 100u, 0x10000u, 0xffffffffu}) {
    EXPECT_EQ(type_traits(id), nullptr) << id;
  }
}

TEST(TypeTable, AgreesWithTheConformanceManifest) {
  GGUFS_REQUIRE_TESTDATA(data);
  const nlohmann::json manifest = test::read_json(data / "conformance" / "manifest.json");
  ASSERT_EQ(manifest.at("types").size(), std::size(kDocTable));
  for (const auto& t : manifest.at("types")) {
    const TypeTraits* traits = type_traits(t.at("type_id").get<std::uint32_t>());
    ASSERT_NE(traits, nullptr) << t.at("type");
    EXPECT_EQ(traits->name, t.at("type").get<std::string>());
    EXPECT_EQ(traits->block_size, t.at("block_size").get<std::uint32_t>());
    EXPECT_EQ(traits->type_size, t.at("type_size").get<std::uint32_t>());
  }
}

TEST(TypeTable, TensorBytes) {
  const TypeTraits& q4k = *type_traits(GGML_TYPE_Q4_K);  // 256 elements, 144 bytes
  const TypeTraits& f32 = *type_traits(GGML_TYPE_F32);
  const std::uint64_t a[4] = {512, 3, 2, 1};
  EXPECT_EQ(tensor_bytes(q4k, a), 2u * 144 * 3 * 2);
  const std::uint64_t b[4] = {7, 5, 1, 1};
  EXPECT_EQ(tensor_bytes(f32, b), 4u * 7 * 5);
  const std::uint64_t empty[4] = {256, 0, 1u << 31, 1u << 31};
  EXPECT_EQ(tensor_bytes(q4k, empty), 0u);
}

TEST(TypeTable, TensorBytesRejectsPartialBlocks) {
  const std::uint64_t ne[4] = {100, 1, 1, 1};
  EXPECT_EQ(tensor_bytes(*type_traits(GGML_TYPE_Q4_0), ne), std::nullopt);  // block 32
  const std::uint64_t ne2[4] = {288, 1, 1, 1};
  EXPECT_EQ(tensor_bytes(*type_traits(GGML_TYPE_Q2_K), ne2), std::nullopt);  // block 256
}

TEST(TypeTable, TensorBytesOverflow) {
  const TypeTraits& f32 = *type_traits(GGML_TYPE_F32);
  const std::uint64_t first[4] = {std::uint64_t{1} << 62, 1, 1, 1};  // 2^62 × 4 bytes
  EXPECT_EQ(tensor_bytes(f32, first), std::nullopt);
  const std::uint64_t fits[4] = {(std::uint64_t{1} << 62) - 1, 1, 1, 1};
  EXPECT_EQ(tensor_bytes(f32, fits), ~std::uint64_t{0} - 3);  // 2^64 − 4
  const std::uint64_t later[4] = {1024, std::uint64_t{1} << 32, std::uint64_t{1} << 20, 1};
  EXPECT_EQ(tensor_bytes(f32, later), std::nullopt);  // 2^12 × 2^32 × 2^20 = 2^64
  const std::uint64_t last[4] = {256, 1u << 16, 1u << 16, std::uint64_t{1} << 40};
  EXPECT_EQ(tensor_bytes(*type_traits(GGML_TYPE_Q4_K), last), std::nullopt);
  const std::uint64_t max[4] = {~std::uint64_t{0}, 1, 1, 1};  // I8: 1 byte per element, fits
  EXPECT_EQ(tensor_bytes(*type_traits(GGML_TYPE_I8), max), ~std::uint64_t{0});
}

// ---------------------------------------------------------------------------------------------
// The embedded lookup tables, against the sha256 of ggml's own values of each table
// (ggml/src/ggml-common.h at ggml commit d99724f2, printed by a program compiled with it),
// packed little-endian at their element width.

template <typename T, std::size_t N>
std::string packed_sha256(const std::array<T, N>& table) {
  std::vector<std::uint8_t> bytes;
  for (const T value : table) {
    const auto u = static_cast<std::make_unsigned_t<T>>(value);
    for (std::size_t k = 0; k < sizeof(T); ++k) {
      bytes.push_back(static_cast<std::uint8_t>(static_cast<std::uint64_t>(u) >> (8 * k)));
    }
  }
  return test::sha256_hex(bytes.data(), bytes.size());
}

TEST(KernelTables, MatchTheSharedTableFiles) {
  // Hashes of ggml's values (the test data's table list, last column).
  EXPECT_EQ(packed_sha256(tables::kSignsIq2xs),
            "a76742a603f8beca5212ecce0f1f02f11a4887fd2f7c8b15aca0ea3eb3380c31");
  EXPECT_EQ(packed_sha256(tables::kIq2xxsGrid),
            "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54");
  EXPECT_EQ(packed_sha256(tables::kIq2xsGrid),
            "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de");
  EXPECT_EQ(packed_sha256(tables::kIq2sGrid),
            "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88");
  EXPECT_EQ(packed_sha256(tables::kIq3xxsGrid),
            "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d");
  EXPECT_EQ(packed_sha256(tables::kIq3sGrid),
            "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f");
  EXPECT_EQ(packed_sha256(tables::kIq1sGrid),
            "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a");
  EXPECT_EQ(packed_sha256(tables::kValuesIq4nl),
            "61aa47540aa024b5d6ddaa839b84ffe59f3d5a349af5c6c7ffcb5e0474b46163");
  EXPECT_EQ(packed_sha256(tables::kValuesFp4),
            "adf76b672d47eb7fc0afd4db132d548d59d3190aa0ad118fdbf569d5fd478f97");
}

// ---------------------------------------------------------------------------------------------
// Types without a bit-exact decoder say so instead of serving wrong bytes.

TEST(TypeTable, DecoderPresence) {
  for (const std::string& name : kDecodedTypes) {
    const TypeTraits* t = traits_by_name(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_NE(t->to_float, nullptr) << name;
  }
  for (const std::string& name : kUndecodedTypes) {
    const TypeTraits* t = traits_by_name(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->to_float, nullptr) << name;
  }
  EXPECT_EQ(kDecodedTypes.size() + kUndecodedTypes.size(), std::size(kDocTable));
}

}  // namespace
}  // namespace ggufs
