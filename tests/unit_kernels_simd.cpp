// The SIMD decoders against the scalar reference: for every type and every instruction set level
// this CPU supports, the decoder of that level must give the same float32 bits as the reference
// (a NaN may be another NaN) on the shared conformance files (made by ggml) and on random blocks
// of every count from 1 to 37 (SIMD tails) and a few hundred, from unaligned buffers.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ggufs/ggml_type.h"
#include "test_util.h"

namespace ggufs {
namespace {

// The SIMD levels this CPU supports (above scalar), lowest first.
std::vector<Isa> simd_levels() {
  std::vector<Isa> levels;
  for (const Isa isa : {Isa::kSse41, Isa::kAvx2, Isa::kAvx512}) {
    if (isa <= cpu_isa()) levels.push_back(isa);
  }
  return levels;
}

struct Case {
  const TypeTraits* type;
  Isa isa;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const TypeTraits& t : all_types()) {
    if (t.to_float_ref == nullptr) continue;
    for (const Isa isa : simd_levels()) cases.push_back({&t, isa});
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string isa(isa_name(info.param.isa));
  std::erase(isa, '.');  // "sse4.1" → "sse41": test names are identifiers
  return std::string(info.param.type->name) + "_" + isa;
}

bool same_bits_or_both_nan(float want, float have) {
  return std::bit_cast<std::uint32_t>(want) == std::bit_cast<std::uint32_t>(have) ||
         (std::isnan(want) && std::isnan(have));
}

// Compares element-wise; reports the first few differences.
void expect_same(const std::vector<float>& want, const std::vector<float>& have) {
  ASSERT_EQ(want.size(), have.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < want.size() && mismatches < 10; ++i) {
    if (!same_bits_or_both_nan(want[i], have[i])) {
      ++mismatches;
      ADD_FAILURE() << "element " << i << ": got " << std::hex
                    << std::bit_cast<std::uint32_t>(have[i]) << ", want "
                    << std::bit_cast<std::uint32_t>(want[i]) << std::dec << " (" << have[i]
                    << " vs " << want[i] << ")";
    }
  }
}

class SimdKernel : public ::testing::TestWithParam<Case> {};

// Every tensor of the type's conformance file decodes to ggml's reference bits.
TEST_P(SimdKernel, MatchesConformanceReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  const TypeTraits& t = *GetParam().type;
  const BlockDecoder decode = decoder_for(t, GetParam().isa);
  ASSERT_NE(decode, nullptr);
  const std::filesystem::path dir = data / "conformance";
  const nlohmann::json manifest = test::read_json(dir / "manifest.json");
  int tensors_checked = 0;
  for (const auto& file : manifest.at("files")) {
    if (file.at("type") != t.name) continue;
    const std::vector<std::uint8_t> gguf =
        test::read_file(dir / file.at("file").get<std::string>());
    for (const auto& tensor : file.at("tensors")) {
      SCOPED_TRACE(tensor.at("name").get<std::string>());
      const auto offset = tensor.at("file_offset").get<std::uint64_t>();
      const auto nbytes = tensor.at("nbytes").get<std::uint64_t>();
      ASSERT_LE(offset + nbytes, gguf.size());
      ASSERT_EQ(nbytes % t.type_size, 0u);
      const std::uint64_t n_blocks = nbytes / t.type_size;

      // Copied to a buffer of exactly the tensor's bytes, so any read past the end is caught by
      // the sanitizer builds.
      const std::vector<std::uint8_t> raw(
          gguf.begin() + static_cast<std::ptrdiff_t>(offset),
          gguf.begin() + static_cast<std::ptrdiff_t>(offset + nbytes));
      std::vector<float> got(n_blocks * t.block_size);
      decode(raw.data(), got.data(), n_blocks);

      const std::vector<std::uint8_t> ref_bytes =
          test::read_file(dir / tensor.at("ref").get<std::string>());
      ASSERT_EQ(ref_bytes.size(), 4 * got.size());
      std::vector<float> want(got.size());
      for (std::size_t i = 0; i < want.size(); ++i) {
        const std::uint8_t* p = &ref_bytes[4 * i];
        want[i] = std::bit_cast<float>(std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 |
                                       std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
      }
      expect_same(want, got);
      ++tensors_checked;
    }
  }
  EXPECT_EQ(tensors_checked, 3);
}

// Random bytes, every block count 1..37 and a few larger ones, with the input and the output at
// odd addresses: identical to the reference decoder.
TEST_P(SimdKernel, MatchesReferenceOnRandomBlocks) {
  const TypeTraits& t = *GetParam().type;
  const BlockDecoder decode = decoder_for(t, GetParam().isa);
  ASSERT_NE(decode, nullptr);
  std::mt19937_64 rng(0x5eed0000u + t.id);
  std::vector<std::size_t> counts;
  for (std::size_t n = 1; n <= 37; ++n) counts.push_back(n);
  for (const std::size_t n : {64u, 255u, 1000u}) counts.push_back(n);
  for (const std::size_t n_blocks : counts) {
    SCOPED_TRACE("n_blocks " + std::to_string(n_blocks));
    for (const std::size_t misalign : {0u, 1u}) {
      // The input starts `misalign` bytes into its buffer and ends at its end; the output starts
      // `misalign` floats in.
      std::vector<std::uint8_t> in(misalign + n_blocks * t.type_size);
      for (auto& byte : in) byte = static_cast<std::uint8_t>(rng());
      const std::size_t n_out = n_blocks * t.block_size;
      std::vector<float> want(n_out), got(misalign + n_out, -1.0f);
      t.to_float_ref(in.data() + misalign, want.data(), n_blocks);
      decode(in.data() + misalign, got.data() + misalign, n_blocks);
      if (misalign != 0) {
        EXPECT_EQ(got[0], -1.0f) << "wrote before the output";
      }
      expect_same(
          want, std::vector<float>(got.begin() + static_cast<std::ptrdiff_t>(misalign), got.end()));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SimdKernel, ::testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimdKernel);  // a CPU without SIMD levels

// Every half and every bfloat16 at every level (the plain types' special values: subnormals,
// infinities, NaNs, −0).
TEST(SimdKernelPlain, EveryHalfAndBf16) {
  std::vector<std::uint8_t> in(2 * 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    in[2 * h] = static_cast<std::uint8_t>(h);
    in[2 * h + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  for (const std::uint32_t id : {1u, 30u}) {
    const TypeTraits& t = *type_traits(id);
    std::vector<float> want(65536);
    t.to_float_ref(in.data(), want.data(), 65536);
    for (const Isa isa : simd_levels()) {
      SCOPED_TRACE(std::string(t.name) + " " + std::string(isa_name(isa)));
      std::vector<float> got(65536);
      decoder_for(t, isa)(in.data(), got.data(), 65536);
      expect_same(want, got);
    }
  }
}

// The dispatch: to_float is the decoder of the active level, to_float_ref the scalar one.
TEST(SimdDispatch, ToFloatIsTheActiveLevel) {
  EXPECT_LE(active_isa(), cpu_isa());
  for (const TypeTraits& t : all_types()) {
    SCOPED_TRACE(std::string(t.name));
    ASSERT_NE(t.to_float_ref, nullptr);
    EXPECT_EQ(t.to_float, decoder_for(t, active_isa()));
    EXPECT_EQ(decoder_for(t, Isa::kScalar), t.to_float_ref);
    // Above what the CPU supports, a request is lowered to the CPU's level.
    EXPECT_EQ(decoder_for(t, Isa::kAvx512), decoder_for(t, cpu_isa()));
  }
  EXPECT_EQ(isa_name(Isa::kScalar), "scalar");
  EXPECT_EQ(isa_name(Isa::kSse41), "sse4.1");
  EXPECT_EQ(isa_name(Isa::kAvx2), "avx2");
  EXPECT_EQ(isa_name(Isa::kAvx512), "avx512");
}

}  // namespace
}  // namespace ggufs
