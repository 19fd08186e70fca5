// x86-64 SIMD block decoders (internal): one namespace per instruction set level, each function
// with the BlockDecoder signature and bit-exact with the scalar reference of the same name in
// kernels.h. Every function carries its own target attribute (GGUFS_TARGET_*), so the files need
// no per-file compiler flags and the binary still runs on CPUs without these instructions: the
// type table (ggml_type.cpp) calls a level's decoders only after checking the CPU supports it.
//
// Bit-exactness: the same float operations in the same order as the reference, each rounded on
// its own. No FMA intrinsics; the library is compiled with -ffp-contract=off so the compiler
// never fuses a multiply and an add either.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "fp4_scales.h"
#include "kquant_scales.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GGUFS_X86_KERNELS 1
#else
#define GGUFS_X86_KERNELS 0
#endif

#if GGUFS_X86_KERNELS

// Scalar helpers shared by the x86 SIMD files (those shared with the NEON decoders are in
// kquant_scales.h and fp4_scales.h).

namespace ggufs::kernels::simd {

// Tail of a plain type: the reference decoder does elements [done, n) (fewer than a vector).
template <typename Fn>
inline void tail(Fn ref, const std::uint8_t* src, float* dst, std::size_t done, std::size_t n,
                 std::size_t in_size) {
  if (done < n) ref(src + in_size * done, dst + done, n - done);
}

}  // namespace ggufs::kernels::simd

// The instruction sets of each level (ggml_type.cpp checks the same list at run time).
#define GGUFS_TARGET_SSE41 __attribute__((target("sse4.1")))
#define GGUFS_TARGET_AVX2 __attribute__((target("avx2,f16c")))
#define GGUFS_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,f16c")))

// The decoders of each level: X(name) for each dequantize_<name> in namespace sse41, avx2 and
// avx512. ggml_type.cpp builds its dispatch tables from these lists.
// clang-format off

// SSE4.1 (x86-64 CPUs without AVX2): the plain, legacy and K-quant types and IQ4.
#define GGUFS_SSE41_DECODERS(X)                                                              \
  X(f32) X(f16) X(bf16) X(i8) X(i16) X(i32)                                                  \
  X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1)                                            \
  X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k)                                            \
  X(iq4_nl) X(iq4_xs)

// AVX2 + F16C (Haswell, Zen 1 and later): every type but I64 (no AVX2 conversion).
#define GGUFS_AVX2_DECODERS(X)                                                               \
  X(f16) X(bf16) X(f64) X(i8) X(i16) X(i32)                                                  \
  X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1)                                            \
  X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k)                                            \
  X(iq2_xxs) X(iq2_xs) X(iq2_s) X(iq3_xxs) X(iq3_s) X(iq1_s) X(iq1_m) X(iq4_nl) X(iq4_xs)    \
  X(tq1_0) X(tq2_0) X(mxfp4) X(nvfp4) X(q1_0) X(q2_0)

// AVX-512 F/BW/VL/DQ (Skylake-SP, Zen 4 and later): where it beats the AVX2 decoder (not the
// i-quant grids, whose table lookups are scalar, nor types already limited by memory).
#define GGUFS_AVX512_DECODERS(X)                                                             \
  X(f16) X(bf16) X(i64)                                                                      \
  X(q4_0) X(q4_1) X(q5_0) X(q5_1) X(q8_0) X(q8_1)                                            \
  X(q2_k) X(q3_k) X(q4_k) X(q5_k) X(q6_k) X(q8_k)                                            \
  X(iq4_nl) X(iq4_xs) X(mxfp4) X(nvfp4) X(q1_0) X(q2_0) X(tq1_0) X(tq2_0)

// clang-format on

// Declares one decoder of a level.
#define GGUFS_DECLARE_DECODER(name) \
  void dequantize_##name(const std::uint8_t* src, float* dst, std::size_t n_blocks);

namespace ggufs::kernels::sse41 {
GGUFS_SSE41_DECODERS(GGUFS_DECLARE_DECODER)
}  // namespace ggufs::kernels::sse41

namespace ggufs::kernels::avx2 {
GGUFS_AVX2_DECODERS(GGUFS_DECLARE_DECODER)
/// floats_to_halves_as_numpy (ggufs/half.h) with F16C.
void floats_to_halves_as_numpy(const float* in, std::size_t n, std::uint16_t* out);
/// floats_to_bf16_as_torch (ggufs/half.h), eight at a time.
void floats_to_bf16_as_torch(const float* in, std::size_t n, std::uint16_t* out);
}  // namespace ggufs::kernels::avx2

namespace ggufs::kernels::avx512 {
GGUFS_AVX512_DECODERS(GGUFS_DECLARE_DECODER)
}  // namespace ggufs::kernels::avx512

// The AVX-512 decoders again, with non-temporal output stores (dst 64-byte aligned).
namespace ggufs::kernels::avx512_stream {
GGUFS_AVX512_DECODERS(GGUFS_DECLARE_DECODER)
}  // namespace ggufs::kernels::avx512_stream

#endif  // GGUFS_X86_KERNELS
