#include "ggufs/ggml_type.h"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "ggufs/kernels.h"
#include "kernels_arm.h"
#include "kernels_x86.h"

#if GGUFS_X86_KERNELS
#include <cpuid.h>
#endif
#if GGUFS_ARM_KERNELS
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace ggufs {

namespace {

namespace k = kernels;

// src/ggml/README.md §2, in id order, with the scalar reference decoders (to_float is filled in by
// the dispatch below). Ids 4, 5, 31–33 and 36–38 were removed from GGUF and have no row.
constexpr TypeTraits kTypes[] = {
    {0, "F32", 1, 4, nullptr, k::dequantize_f32},
    {1, "F16", 1, 2, nullptr, k::dequantize_f16},
    {2, "Q4_0", 32, 18, nullptr, k::dequantize_q4_0},
    {3, "Q4_1", 32, 20, nullptr, k::dequantize_q4_1},
    {6, "Q5_0", 32, 22, nullptr, k::dequantize_q5_0},
    {7, "Q5_1", 32, 24, nullptr, k::dequantize_q5_1},
    {8, "Q8_0", 32, 34, nullptr, k::dequantize_q8_0},
    {9, "Q8_1", 32, 36, nullptr, k::dequantize_q8_1},
    {10, "Q2_K", 256, 84, nullptr, k::dequantize_q2_k},
    {11, "Q3_K", 256, 110, nullptr, k::dequantize_q3_k},
    {12, "Q4_K", 256, 144, nullptr, k::dequantize_q4_k},
    {13, "Q5_K", 256, 176, nullptr, k::dequantize_q5_k},
    {14, "Q6_K", 256, 210, nullptr, k::dequantize_q6_k},
    {15, "Q8_K", 256, 292, nullptr, k::dequantize_q8_k},
    {16, "IQ2_XXS", 256, 66, nullptr, k::dequantize_iq2_xxs},
    {17, "IQ2_XS", 256, 74, nullptr, k::dequantize_iq2_xs},
    {18, "IQ3_XXS", 256, 98, nullptr, k::dequantize_iq3_xxs},
    {19, "IQ1_S", 256, 50, nullptr, k::dequantize_iq1_s},
    {20, "IQ4_NL", 32, 18, nullptr, k::dequantize_iq4_nl},
    {21, "IQ3_S", 256, 110, nullptr, k::dequantize_iq3_s},
    {22, "IQ2_S", 256, 82, nullptr, k::dequantize_iq2_s},
    {23, "IQ4_XS", 256, 136, nullptr, k::dequantize_iq4_xs},
    {24, "I8", 1, 1, nullptr, k::dequantize_i8},
    {25, "I16", 1, 2, nullptr, k::dequantize_i16},
    {26, "I32", 1, 4, nullptr, k::dequantize_i32},
    {27, "I64", 1, 8, nullptr, k::dequantize_i64},
    {28, "F64", 1, 8, nullptr, k::dequantize_f64},
    {29, "IQ1_M", 256, 56, nullptr, k::dequantize_iq1_m},
    {30, "BF16", 1, 2, nullptr, k::dequantize_bf16},
    {34, "TQ1_0", 256, 54, nullptr, k::dequantize_tq1_0},
    {35, "TQ2_0", 256, 66, nullptr, k::dequantize_tq2_0},
    {39, "MXFP4", 32, 17, nullptr, k::dequantize_mxfp4},
    {40, "NVFP4", 64, 36, nullptr, k::dequantize_nvfp4},
    {41, "Q1_0", 128, 18, nullptr, k::dequantize_q1_0},
    {42, "Q2_0", 64, 18, nullptr, k::dequantize_q2_0},
};

constexpr std::uint32_t kIdLimit = 43;  // ids ≥ 43 are unknown (§1)

// Position of each id in kTypes, −1 for a removed id: type_traits() is one array lookup.
constexpr std::array<int, kIdLimit> kIndex = [] {
  std::array<int, kIdLimit> index{};
  index.fill(-1);
  for (std::size_t i = 0; i < std::size(kTypes); ++i) index[kTypes[i].id] = static_cast<int>(i);
  return index;
}();

static_assert(std::size(kTypes) == 35, "src/ggml/README.md §2 lists 35 types");

// --- SIMD dispatch ------------------------------------------------------------------------------
// One table per instruction set level: (type name in lower case, decoder), generated from the
// lists in kernels_x86.h. A type without an entry at a level uses the next level down, and in the
// end its reference decoder; so adding a SIMD decoder is one name in a list.

struct SimdDecoder {
  std::string_view name;  ///< TypeTraits::name in lower case: "q4_k"
  BlockDecoder decode;
};

#if GGUFS_X86_KERNELS
#define GGUFS_SSE41_ENTRY(name) {#name, k::sse41::dequantize_##name},
#define GGUFS_AVX2_ENTRY(name) {#name, k::avx2::dequantize_##name},
#define GGUFS_AVX512_ENTRY(name) {#name, k::avx512::dequantize_##name},
#define GGUFS_AVX512_STREAM_ENTRY(name) {#name, k::avx512_stream::dequantize_##name},
constexpr SimdDecoder kSse41[] = {GGUFS_SSE41_DECODERS(GGUFS_SSE41_ENTRY)};
constexpr SimdDecoder kAvx2[] = {GGUFS_AVX2_DECODERS(GGUFS_AVX2_ENTRY)};
constexpr SimdDecoder kAvx512[] = {GGUFS_AVX512_DECODERS(GGUFS_AVX512_ENTRY)};
constexpr SimdDecoder kAvx512Stream[] = {GGUFS_AVX512_DECODERS(GGUFS_AVX512_STREAM_ENTRY)};
#undef GGUFS_SSE41_ENTRY
#undef GGUFS_AVX2_ENTRY
#undef GGUFS_AVX512_ENTRY
#undef GGUFS_AVX512_STREAM_ENTRY
#endif
#if GGUFS_ARM_KERNELS
#define GGUFS_NEON_ENTRY(name) {#name, k::neon::dequantize_##name},
constexpr SimdDecoder kNeon[] = {GGUFS_NEON_DECODERS(GGUFS_NEON_ENTRY)};
#undef GGUFS_NEON_ENTRY
#endif

// The decoders of one level (empty for scalar and for levels this build has no code for).
std::span<const SimdDecoder> level_decoders(Isa isa) {
#if GGUFS_X86_KERNELS
  if (isa == Isa::kSse41) return kSse41;
  if (isa == Isa::kAvx2) return kAvx2;
  if (isa == Isa::kAvx512) return kAvx512;
#endif
#if GGUFS_ARM_KERNELS
  if (isa == Isa::kNeon) return kNeon;
#endif
  (void)isa;
  return {};
}

bool equals_lower(std::string_view lower, std::string_view name) {
  if (lower.size() != name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c =
        name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
    if (lower[i] != c) return false;
  }
  return true;
}

BlockDecoder resolve(const TypeTraits& t, Isa isa) {
  for (int level = static_cast<int>(isa); level > static_cast<int>(Isa::kScalar); --level) {
    for (const SimdDecoder& d : level_decoders(static_cast<Isa>(level))) {
      if (equals_lower(d.name, t.name)) return d.decode;
    }
  }
  return t.to_float_ref;
}

Isa detect_cpu_isa() {
#if GGUFS_X86_KERNELS
  // __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 registers. F16C
  // (which uses the AVX registers) is read from CPUID leaf 1 directly: not every compiler's
  // __builtin_cpu_supports knows it.
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  const bool avx2 = __builtin_cpu_supports("avx2") && f16c;
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq");
  if (avx512) return Isa::kAvx512;
  if (avx2) return Isa::kAvx2;
  if (__builtin_cpu_supports("sse4.1")) return Isa::kSse41;
#endif
#if GGUFS_ARM_KERNELS
  // Advanced SIMD is part of every AArch64 CPU, but the kernel says so: ask it.
  if ((getauxval(AT_HWCAP) & HWCAP_ASIMD) != 0) return Isa::kNeon;
#endif
  return Isa::kScalar;
}

// cpu_isa(), lowered to GGUFS_ISA when that names a known level.
Isa detect_active_isa() {
  Isa isa = cpu_isa();
  if (const char* env = std::getenv("GGUFS_ISA"); env != nullptr) {
    for (const Isa level : {Isa::kScalar, Isa::kSse41, Isa::kAvx2, Isa::kAvx512, Isa::kNeon}) {
      if (isa_name(level) == env && level < isa) isa = level;
    }
  }
  return isa;
}

// The table with to_float resolved for active_isa(), built once (thread-safe) on first use.
const std::array<TypeTraits, std::size(kTypes)>& resolved_types() {
  static const std::array<TypeTraits, std::size(kTypes)> table = [] {
    std::array<TypeTraits, std::size(kTypes)> t{};
    const Isa isa = active_isa();
    for (std::size_t i = 0; i < t.size(); ++i) {
      t[i] = kTypes[i];
      t[i].to_float = resolve(kTypes[i], isa);
    }
    return t;
  }();
  return table;
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kSse41:
      return "sse4.1";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
    case Isa::kNeon:
      return "neon";
  }
  return "unknown";
}

Isa cpu_isa() {
  static const Isa isa = detect_cpu_isa();
  return isa;
}

Isa active_isa() {
  static const Isa isa = detect_active_isa();
  return isa;
}

BlockDecoder decoder_for(const TypeTraits& traits, Isa isa) {
  if (traits.to_float_ref == nullptr) return nullptr;
  return resolve(traits, isa < cpu_isa() ? isa : cpu_isa());
}

BlockDecoder streaming_decoder_for(const TypeTraits& traits) {
#if GGUFS_X86_KERNELS
  if (active_isa() == Isa::kAvx512) {
    for (const SimdDecoder& d : kAvx512Stream) {
      if (equals_lower(d.name, traits.name)) return d.decode;
    }
  }
#endif
  (void)traits;
  return nullptr;
}

const TypeTraits* type_traits(std::uint32_t id) {
  if (id >= kIdLimit || kIndex[id] < 0) return nullptr;
  return &resolved_types()[kIndex[id]];
}

std::span<const TypeTraits> all_types() { return resolved_types(); }

std::optional<std::uint64_t> tensor_bytes(const TypeTraits& traits, const std::uint64_t ne[4]) {
  if (ne[0] % traits.block_size != 0) return std::nullopt;
  // An empty tensor has 0 bytes even if the other factors alone would overflow.
  if (ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0) return 0;
  std::uint64_t bytes = ne[0] / traits.block_size;
  if (__builtin_mul_overflow(bytes, std::uint64_t{traits.type_size}, &bytes)) return std::nullopt;
  for (int i = 1; i < 4; ++i) {
    if (__builtin_mul_overflow(bytes, ne[i], &bytes)) return std::nullopt;
  }
  return bytes;
}

}  // namespace ggufs
