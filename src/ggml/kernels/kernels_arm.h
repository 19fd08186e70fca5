// arm64 (AArch64) NEON block decoders (internal): each with the BlockDecoder signature and
// bit-exact with the scalar reference of the same name in kernels.h. Advanced SIMD is part of
// every AArch64 CPU; ggml_type.cpp still checks the CPU's HWCAP_ASIMD before choosing them.
//
// Bit-exactness: the same float operations in the same order as the reference, each rounded on
// its own: no fused multiply-add intrinsics, and the library is compiled with -ffp-contract=off.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define GGUFS_ARM_KERNELS 1
#else
#define GGUFS_ARM_KERNELS 0
#endif

#if GGUFS_ARM_KERNELS

// clang-format off
// The types with a NEON decoder: every type but F32 (a copy), F64 and I64 (two 64-bit lanes per
// vector: little to gain over the scalar loop), which use their reference decoder on arm64.
#define GGUFS_NEON_DECODERS(X)                                                               \
  X(f16) X(bf16) X(i8) X(i16) X(i32)                                                         \
  X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1)                                            \
  X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k)                                            \
  X(iq2_xxs) X(iq2_xs) X(iq2_s) X(iq3_xxs) X(iq3_s) X(iq1_s) X(iq1_m) X(iq4_nl) X(iq4_xs)    \
  X(tq1_0) X(tq2_0) X(mxfp4) X(nvfp4) X(q1_0) X(q2_0)
// clang-format on

namespace ggufs::kernels::neon {
#define GGUFS_DECLARE_NEON_DECODER(name) \
  void dequantize_##name(const std::uint8_t* src, float* dst, std::size_t n_blocks);
GGUFS_NEON_DECODERS(GGUFS_DECLARE_NEON_DECODER)
#undef GGUFS_DECLARE_NEON_DECODER
}  // namespace ggufs::kernels::neon

#endif  // GGUFS_ARM_KERNELS
