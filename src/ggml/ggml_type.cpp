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
#include "ggufs/platform.h"
#endif

namespace ggufs {

namespace {

namespace k = kernels;

// src/ggml/README.md §2, in id order, with the scalar reference decoders (to_float is filled in by
// the dispatch below). Ids 4, 5, 31–33 and 36–38 were removed from GGUF and have no row.
constexpr TypeTraits kTypes[] = {
    {GGML_TYPE_F32, "F32", 1, 4, nullptr, k::dequantize_f32},
    {GGML_TYPE_F16, "F16", 1, 2, nullptr, k::dequantize_f16},
    {GGML_TYPE_Q4_0, "Q4_0", 32, 18, nullptr, k::dequantize_q4_0},
    {GGML_TYPE_Q4_1, "Q4_1", 32, 20, nullptr, k::dequantize_q4_1},
    {GGML_TYPE_Q5_0, "Q5_0", 32, 22, nullptr, k::dequantize_q5_0},
    {GGML_TYPE_Q5_1, "Q5_1", 32, 24, nullptr, k::dequantize_q5_1},
    {GGML_TYPE_Q8_0, "Q8_0", 32, 34, nullptr, k::dequantize_q8_0},
    {GGML_TYPE_Q8_1, "Q8_1", 32, 36, nullptr, k::dequantize_q8_1},
    {GGML_TYPE_Q2_K, "Q2_K", 256, 84, nullptr, k::dequantize_q2_k},
    {GGML_TYPE_Q3_K, "Q3_K", 256, 110, nullptr, k::dequantize_q3_k},
    {GGML_TYPE_Q4_K, "Q4_K", 256, 144, nullptr, k::dequantize_q4_k},
    {GGML_TYPE_Q5_K, "Q5_K", 256, 176, nullptr, k::dequantize_q5_k},
    {GGML_TYPE_Q6_K, "Q6_K", 256, 210, nullptr, k::dequantize_q6_k},
    {GGML_TYPE_Q8_K, "Q8_K", 256, 292, nullptr, k::dequantize_q8_k},
    {GGML_TYPE_IQ2_XXS, "IQ2_XXS", 256, 66, nullptr, k::dequantize_iq2_xxs},
    {GGML_TYPE_IQ2_XS, "IQ2_XS", 256, 74, nullptr, k::dequantize_iq2_xs},
    {GGML_TYPE_IQ3_XXS, "IQ3_XXS", 256, 98, nullptr, k::dequantize_iq3_xxs},
    {GGML_TYPE_IQ1_S, "IQ1_S", 256, 50, nullptr, k::dequantize_iq1_s},
    {GGML_TYPE_IQ4_NL, "IQ4_NL", 32, 18, nullptr, k::dequantize_iq4_nl},
    {GGML_TYPE_IQ3_S, "IQ3_S", 256, 110, nullptr, k::dequantize_iq3_s},
    {GGML_TYPE_IQ2_S, "IQ2_S", 256, 82, nullptr, k::dequantize_iq2_s},
    {GGML_TYPE_IQ4_XS, "IQ4_XS", 256, 136, nullptr, k::dequantize_iq4_xs},
    {GGML_TYPE_I8, "I8", 1, 1, nullptr, k::dequantize_i8},
    {GGML_TYPE_I16, "I16", 1, 2, nullptr, k::dequantize_i16},
    {GGML_TYPE_I32, "I32", 1, 4, nullptr, k::dequantize_i32},
    {GGML_TYPE_I64, "I64", 1, 8, nullptr, k::dequantize_i64},
    {GGML_TYPE_F64, "F64", 1, 8, nullptr, k::dequantize_f64},
    {GGML_TYPE_IQ1_M, "IQ1_M", 256, 56, nullptr, k::dequantize_iq1_m},
    {GGML_TYPE_BF16, "BF16", 1, 2, nullptr, k::dequantize_bf16},
    {GGML_TYPE_TQ1_0, "TQ1_0", 256, 54, nullptr, k::dequantize_tq1_0},
    {GGML_TYPE_TQ2_0, "TQ2_0", 256, 66, nullptr, k::dequantize_tq2_0},
    {GGML_TYPE_MXFP4, "MXFP4", 32, 17, nullptr, k::dequantize_mxfp4},
    {GGML_TYPE_NVFP4, "NVFP4", 64, 36, nullptr, k::dequantize_nvfp4},
    {GGML_TYPE_Q1_0, "Q1_0", 128, 18, nullptr, k::dequantize_q1_0},
    {GGML_TYPE_Q2_0, "Q2_0", 64, 18, nullptr, k::dequantize_q2_0},
};

// Position of each id in kTypes, −1 for a removed id: type_traits() is one array lookup.
constexpr std::array<int, GGML_TYPE_COUNT> kIndex = [] {
  std::array<int, GGML_TYPE_COUNT> index{};
  index.fill(-1);
  for (std::size_t i = 0; i < std::size(kTypes); ++i) index[kTypes[i].id] = static_cast<int>(i);
  return index;
}();

static_assert(std::size(kTypes) == 35, "src/ggml/README.md §2 lists 35 types");

// all_types() promises id order, and kIndex needs every id below GGML_TYPE_COUNT.
constexpr bool ids_ascend_below_count() {
  for (std::size_t i = 0; i < std::size(kTypes); ++i) {
    if (kTypes[i].id >= GGML_TYPE_COUNT || (i > 0 && kTypes[i].id <= kTypes[i - 1].id)) {
      return false;
    }
  }
  return true;
}
static_assert(ids_ascend_below_count());

// True when the row of `id` has ggml's name for that id (the enumerator without "GGML_TYPE_"),
// `block_size` elements and `type_size` bytes per block: a row whose enumerator, name or sizes
// disagree with the layouts of src/ggml/README.md §5–§11 does not compile.
constexpr bool row_is(GgmlType id, std::string_view name, std::uint32_t block_size,
                      std::uint32_t type_size) {
  if (kIndex[id] < 0) return false;
  const TypeTraits& t = kTypes[kIndex[id]];
  return t.id == id && t.name == name && t.block_size == block_size && t.type_size == type_size;
}

// Plain types (§5): one element of the C type per block.
static_assert(row_is(GGML_TYPE_F32, "F32", 1, sizeof(float)));
static_assert(row_is(GGML_TYPE_F16, "F16", 1, sizeof(std::uint16_t)));
static_assert(row_is(GGML_TYPE_BF16, "BF16", 1, sizeof(std::uint16_t)));
static_assert(row_is(GGML_TYPE_F64, "F64", 1, sizeof(double)));
static_assert(row_is(GGML_TYPE_I8, "I8", 1, sizeof(std::int8_t)));
static_assert(row_is(GGML_TYPE_I16, "I16", 1, sizeof(std::int16_t)));
static_assert(row_is(GGML_TYPE_I32, "I32", 1, sizeof(std::int32_t)));
static_assert(row_is(GGML_TYPE_I64, "I64", 1, sizeof(std::int64_t)));
// Block types: the sum of the field sizes of the layout table of each type's section.
static_assert(row_is(GGML_TYPE_Q4_0, "Q4_0", 32, 2 + 16));                  // d, qs
static_assert(row_is(GGML_TYPE_Q4_1, "Q4_1", 32, 2 + 2 + 16));              // d, m, qs
static_assert(row_is(GGML_TYPE_Q5_0, "Q5_0", 32, 2 + 4 + 16));              // d, qh, qs
static_assert(row_is(GGML_TYPE_Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16));          // d, m, qh, qs
static_assert(row_is(GGML_TYPE_Q8_0, "Q8_0", 32, 2 + 32));                  // d, qs
static_assert(row_is(GGML_TYPE_Q8_1, "Q8_1", 32, 2 + 2 + 32));              // d, s, qs
static_assert(row_is(GGML_TYPE_Q2_K, "Q2_K", 256, 16 + 64 + 2 + 2));        // scales, qs, d, dmin
static_assert(row_is(GGML_TYPE_Q3_K, "Q3_K", 256, 32 + 64 + 12 + 2));       // hmask, qs, scales, d
static_assert(row_is(GGML_TYPE_Q4_K, "Q4_K", 256, 2 + 2 + 12 + 128));       // d, dmin, scales, qs
static_assert(row_is(GGML_TYPE_Q5_K, "Q5_K", 256, 2 + 2 + 12 + 32 + 128));  // …, qh, qs
static_assert(row_is(GGML_TYPE_Q6_K, "Q6_K", 256, 128 + 64 + 16 + 2));      // ql, qh, scales, d
static_assert(row_is(GGML_TYPE_Q8_K, "Q8_K", 256, 4 + 256 + 2 * 16));       // d, qs, bsums
static_assert(row_is(GGML_TYPE_IQ2_XXS, "IQ2_XXS", 256, 2 + 2 * 32));       // d, qs
static_assert(row_is(GGML_TYPE_IQ2_XS, "IQ2_XS", 256, 2 + 2 * 32 + 8));     // d, qs, scales
static_assert(row_is(GGML_TYPE_IQ2_S, "IQ2_S", 256, 2 + 64 + 8 + 8));       // d, qs, qh, scales
static_assert(row_is(GGML_TYPE_IQ3_XXS, "IQ3_XXS", 256, 2 + 96));           // d, qs
static_assert(row_is(GGML_TYPE_IQ3_S, "IQ3_S", 256, 2 + 64 + 8 + 32 + 4));  // …, signs, scales
static_assert(row_is(GGML_TYPE_IQ1_S, "IQ1_S", 256, 2 + 32 + 2 * 8));       // d, qs, qh
static_assert(row_is(GGML_TYPE_IQ1_M, "IQ1_M", 256, 32 + 16 + 8));          // qs, qh, scales
static_assert(row_is(GGML_TYPE_IQ4_NL, "IQ4_NL", 32, 2 + 16));              // d, qs
static_assert(row_is(GGML_TYPE_IQ4_XS, "IQ4_XS", 256, 2 + 2 + 4 + 128));    // d, scales_h, _l, qs
static_assert(row_is(GGML_TYPE_TQ1_0, "TQ1_0", 256, 48 + 4 + 2));           // qs, qh, d
static_assert(row_is(GGML_TYPE_TQ2_0, "TQ2_0", 256, 64 + 2));               // qs, d
static_assert(row_is(GGML_TYPE_MXFP4, "MXFP4", 32, 1 + 16));                // e, qs
static_assert(row_is(GGML_TYPE_NVFP4, "NVFP4", 64, 4 + 32));                // d, qs
static_assert(row_is(GGML_TYPE_Q1_0, "Q1_0", 128, 2 + 16));                 // d, qs
static_assert(row_is(GGML_TYPE_Q2_0, "Q2_0", 64, 2 + 16));                  // d, qs

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
  if (cpu_has_asimd()) return Isa::kNeon;
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
  if (id >= GGML_TYPE_COUNT || kIndex[id] < 0) return nullptr;
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
