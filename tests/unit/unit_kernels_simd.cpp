// The SIMD decoders against the scalar reference: for every type and every instruction set level
// this CPU supports, the decoder of that level must give the same float32 bits as the reference
// (a NaN may be another NaN) on the shared conformance files (made by ggml) and on random blocks
// of every count from 1 to 37 (SIMD tails) and a few hundred, from unaligned buffers. The same
// for decode_streaming (decode.h), whose AVX-512 decoders write with non-temporal stores.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ggufs/decode.h"
#include "ggufs/ggml_type.h"
#include "ggufs/half.h"
#include "test_util.h"

namespace ggufs {
namespace {

// The SIMD levels of this build's architecture that this CPU supports (above scalar).
std::vector<Isa> simd_levels() {
#if defined(__aarch64__)
  const Isa architecture_levels[] = {Isa::kNeon};
#else
  const Isa architecture_levels[] = {Isa::kSse41, Isa::kAvx2, Isa::kAvx512};
#endif
  std::vector<Isa> levels;
  for (const Isa isa : architecture_levels) {
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

// A decoder under test: a level's BlockDecoder, or decode_streaming.
using Decode = std::function<void(const std::uint8_t*, float*, std::size_t)>;

// Where `out_at(buffer, n)` puts the output of n floats inside `buffer` (which it may resize).
using Placement = std::function<float*(std::vector<float>& buffer, std::size_t n)>;

// The output at the start of a vector (16-byte aligned, as std::allocator gives).
float* at_start(std::vector<float>& buffer, std::size_t n) {
  buffer.assign(n, -1.0f);
  return buffer.data();
}

// The output at a 64-byte (cache line) boundary plus `shift` floats, with 16 guard floats before
// and after it (-1.0f: checked afterwards).
Placement cache_line_plus(std::size_t shift) {
  return [shift](std::vector<float>& buffer, std::size_t n) {
    buffer.assign(n + 48, -1.0f);
    const auto address = reinterpret_cast<std::uintptr_t>(buffer.data() + 16);
    const std::size_t to_line = (64 - address % 64) % 64 / sizeof(float);
    return buffer.data() + 16 + to_line + shift;
  };
}

// The float32 `ref/` file of a conformance tensor.
std::vector<float> reference_floats(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> bytes = test::read_file(path);
  std::vector<float> floats(bytes.size() / 4);
  for (std::size_t i = 0; i < floats.size(); ++i) {
    const std::uint8_t* p = &bytes[4 * i];
    floats[i] = std::bit_cast<float>(std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 |
                                     std::uint32_t{p[2]} << 16 | std::uint32_t{p[3]} << 24);
  }
  return floats;
}

// Every tensor of `t`'s conformance file decodes to ggml's reference bits; returns how many
// tensors were checked.
int check_conformance(const std::filesystem::path& data, const TypeTraits& t, const Decode& decode,
                      const Placement& place) {
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
      EXPECT_LE(offset + nbytes, gguf.size());
      EXPECT_EQ(nbytes % t.type_size, 0u);
      if (offset + nbytes > gguf.size() || nbytes % t.type_size != 0) continue;
      const std::uint64_t n_blocks = nbytes / t.type_size;

      // Copied to a buffer of exactly the tensor's bytes, so any read past the end is caught by
      // the sanitizer builds.
      const std::vector<std::uint8_t> raw(
          gguf.begin() + static_cast<std::ptrdiff_t>(offset),
          gguf.begin() + static_cast<std::ptrdiff_t>(offset + nbytes));
      const std::size_t n_out = n_blocks * t.block_size;
      std::vector<float> buffer;
      float* const out = place(buffer, n_out);
      decode(raw.data(), out, n_blocks);

      const std::vector<float> want = reference_floats(dir / tensor.at("ref").get<std::string>());
      EXPECT_EQ(want.size(), n_out);
      expect_same(want, std::vector<float>(out, out + n_out));
      ++tensors_checked;
    }
  }
  return tensors_checked;
}

// Random bytes, every block count 1..37 and a few larger ones, with the input at an odd address:
// identical to the reference decoder, and nothing written outside the output.
void check_random_blocks(const TypeTraits& t, const Decode& decode, const Placement& place) {
  std::mt19937_64 rng(0x5eed0000u + t.id);
  std::vector<std::size_t> counts;
  for (std::size_t n = 1; n <= 37; ++n) counts.push_back(n);
  for (const std::size_t n : {64u, 255u, 1000u}) counts.push_back(n);
  for (const std::size_t n_blocks : counts) {
    SCOPED_TRACE("n_blocks " + std::to_string(n_blocks));
    for (const std::size_t misalign : {0u, 1u}) {
      // The input starts `misalign` bytes into its buffer and ends at its end.
      std::vector<std::uint8_t> in(misalign + n_blocks * t.type_size);
      for (auto& byte : in) byte = static_cast<std::uint8_t>(rng());
      const std::size_t n_out = n_blocks * t.block_size;
      std::vector<float> want(n_out), buffer;
      t.to_float_ref(in.data() + misalign, want.data(), n_blocks);
      float* const out = place(buffer, n_out);
      decode(in.data() + misalign, out, n_blocks);
      expect_same(want, std::vector<float>(out, out + n_out));
      // The guard floats around the output are untouched.
      for (float* p = buffer.data(); p < out; ++p) ASSERT_EQ(*p, -1.0f) << "wrote before";
      for (float* p = out + n_out; p < buffer.data() + buffer.size(); ++p) {
        ASSERT_EQ(*p, -1.0f) << "wrote after";
      }
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
  EXPECT_EQ(check_conformance(data, t, decode, at_start), 3);
}

// Random blocks, the output at a cache line boundary and one float past one.
TEST_P(SimdKernel, MatchesReferenceOnRandomBlocks) {
  const TypeTraits& t = *GetParam().type;
  const BlockDecoder decode = decoder_for(t, GetParam().isa);
  ASSERT_NE(decode, nullptr);
  for (const std::size_t shift : {0u, 1u}) {
    SCOPED_TRACE("output " + std::to_string(shift) + " floats past a cache line");
    check_random_blocks(t, decode, cache_line_plus(shift));
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SimdKernel, ::testing::ValuesIn(all_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimdKernel);  // a CPU without SIMD levels

// The scalar reference decoders too (unit_kernels.cpp checks them by sha256; this is the check
// the arm64 cross build runs, whose test program has no OpenSSL).
class ReferenceDecoder : public ::testing::TestWithParam<const TypeTraits*> {};

TEST_P(ReferenceDecoder, MatchesConformanceReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  const TypeTraits& t = *GetParam();
  EXPECT_EQ(check_conformance(data, t, t.to_float_ref, at_start), 3);
}

// decode_streaming (non-temporal stores where the CPU has AVX-512): the same bits as the
// reference, with the output at a cache line boundary (streamed), one float past it (plain types:
// a plain head, then streamed; block types: not streamed) and at a vector's start.
class StreamingDecode : public ::testing::TestWithParam<const TypeTraits*> {};

Decode streaming(const TypeTraits& t) {
  return [&t](const std::uint8_t* src, float* dst, std::size_t n_blocks) {
    decode_streaming(t, src, dst, n_blocks);
  };
}

TEST_P(StreamingDecode, MatchesConformanceReference) {
  GGUFS_REQUIRE_TESTDATA(data);
  const TypeTraits& t = *GetParam();
  EXPECT_EQ(check_conformance(data, t, streaming(t), cache_line_plus(0)), 3);
  EXPECT_EQ(check_conformance(data, t, streaming(t), cache_line_plus(1)), 3);
}

TEST_P(StreamingDecode, MatchesReferenceOnRandomBlocks) {
  const TypeTraits& t = *GetParam();
  for (const std::size_t shift : {0u, 1u, 3u}) {
    SCOPED_TRACE("output " + std::to_string(shift) + " floats past a cache line");
    check_random_blocks(t, streaming(t), cache_line_plus(shift));
  }
  check_random_blocks(t, streaming(t), at_start);
}

std::vector<const TypeTraits*> decodable_types() {
  std::vector<const TypeTraits*> types;
  for (const TypeTraits& t : all_types()) {
    if (t.to_float_ref != nullptr) types.push_back(&t);
  }
  return types;
}

std::string type_name(const ::testing::TestParamInfo<const TypeTraits*>& info) {
  return std::string(info.param->name);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReferenceDecoder, ::testing::ValuesIn(decodable_types()),
                         type_name);
INSTANTIATE_TEST_SUITE_P(AllTypes, StreamingDecode, ::testing::ValuesIn(decodable_types()),
                         type_name);

// The streaming decoders exist exactly where the AVX-512 level is active (so the tests above do
// exercise them on such a CPU), for the types with an AVX-512 decoder.
TEST(StreamingDecode, StreamsWhereAvx512IsActive) {
  const bool avx512 = active_isa() == Isa::kAvx512;
  for (const char* name : {"F16", "BF16", "Q8_0", "Q4_K", "Q5_K", "TQ1_0"}) {
    const TypeTraits* t = nullptr;
    for (const TypeTraits& u : all_types()) {
      if (u.name == name) t = &u;
    }
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(streaming_decoder_for(*t) != nullptr, avx512) << name;
  }
  // The i-quant grids have no AVX-512 decoder: decode_streaming is their to_float.
  EXPECT_EQ(streaming_decoder_for(*type_traits(GGML_TYPE_IQ2_XXS)), nullptr);
}

// Every half and every bfloat16 at every level (the plain types' special values: subnormals,
// infinities, NaNs, −0).
TEST(SimdKernelPlain, EveryHalfAndBf16) {
  std::vector<std::uint8_t> in(2 * 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    in[2 * h] = static_cast<std::uint8_t>(h);
    in[2 * h + 1] = static_cast<std::uint8_t>(h >> 8);
  }
  for (const GgmlType id : {GGML_TYPE_F16, GGML_TYPE_BF16}) {
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

// floats_to_bf16_as_torch (sixteen at a time with AVX2) rounds as torch's round_to_nearest_even
// (c10/util/BFloat16.h): each case at every position of a group of sixteen, and random bit
// patterns against the one-at-a-time float_to_bf16_as_torch.
TEST(SimdBf16, RoundsAsTorchAtEveryPosition) {
  const std::vector<std::pair<std::uint32_t, std::uint16_t>> cases = {
      {0x3f800000, 0x3f80},  // 1
      {0x3f808000, 0x3f80},  // a tie, the kept part even: down
      {0x3f818000, 0x3f82},  // a tie, the kept part odd: up
      {0x3f808001, 0x3f81},  // above the tie: up
      {0xbf80ffff, 0xbf81},  // negative: the magnitude rounds
      {0x7f7fffff, 0x7f80},  // the largest float rounds to inf
      {0x7f800000, 0x7f80},  // inf
      {0xff800000, 0xff80},  // -inf
      {0x7f800001, 0x7fc0},  // a signalling NaN
      {0xffc00000, 0x7fc0},  // -NaN: torch's one NaN
      {0x80000000, 0x8000},  // -0
      {0x00000001, 0x0000},  // the smallest subnormal
      {0x00018000, 0x0002},  // a subnormal tie, odd: up
  };
  for (std::size_t lead = 0; lead < 16; ++lead) {
    std::vector<float> in(lead, 1.0f);
    std::vector<std::uint16_t> want(lead, 0x3f80);
    for (const auto& [bits, bf16] : cases) {
      in.push_back(std::bit_cast<float>(bits));
      want.push_back(bf16);
    }
    std::vector<std::uint16_t> got(in.size());
    floats_to_bf16_as_torch(in.data(), in.size(), got.data());
    ASSERT_EQ(got, want) << "cases from position " << lead;
  }
  std::mt19937 rng(61);
  std::vector<float> in(1 << 20);
  for (float& f : in) f = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
  std::vector<std::uint16_t> got(in.size());
  floats_to_bf16_as_torch(in.data(), in.size(), got.data());
  for (std::size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(got[i], float_to_bf16_as_torch(in[i])) << std::bit_cast<std::uint32_t>(in[i]);
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
#if defined(__aarch64__)
    // Another architecture's level has no code here: the reference.
    EXPECT_EQ(decoder_for(t, Isa::kAvx2), t.to_float_ref);
#else
    // Above what the CPU supports, a request is lowered to the CPU's level.
    EXPECT_EQ(decoder_for(t, Isa::kAvx512), decoder_for(t, cpu_isa()));
#endif
  }
  EXPECT_EQ(isa_name(Isa::kScalar), "scalar");
  EXPECT_EQ(isa_name(Isa::kSse41), "sse4.1");
  EXPECT_EQ(isa_name(Isa::kAvx2), "avx2");
  EXPECT_EQ(isa_name(Isa::kAvx512), "avx512");
  EXPECT_EQ(isa_name(Isa::kNeon), "neon");
#if defined(__aarch64__)
  // Every AArch64 CPU has Advanced SIMD: the NEON decoders are the ones in use, for Q4_K too.
  EXPECT_EQ(cpu_isa(), Isa::kNeon);
  EXPECT_NE(type_traits(GGML_TYPE_Q4_K)->to_float, type_traits(GGML_TYPE_Q4_K)->to_float_ref);
#endif
}

}  // namespace
}  // namespace ggufs
