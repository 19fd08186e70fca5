// Block decoders (dequantization kernels), one per ggml type, all with the BlockDecoder
// signature: (src bytes, dst floats, number of whole blocks). They know nothing of files or FUSE.
// Layouts and exact steps: shared src/ggml/README.md §5–§7. Bit-exact with ggml's to_float.
// These are the portable scalar reference decoders (TypeTraits::to_float_ref). The SIMD decoders
// for x86-64 (src/core/kernels_x86*) and arm64 (src/core/kernels_neon.cpp) give the same bits;
// TypeTraits::to_float is the fastest one the CPU supports (ggml_type.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggufs::kernels {

// Plain types (§2), block size 1.
void dequantize_f32(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_f64(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_i8(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_i16(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_i32(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_i64(const std::uint8_t* src, float* dst, std::size_t n_blocks);

// Legacy 32-element blocks (§3).
void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);

// K-quants, 256-element super-blocks (§4).
void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);

// The other types (§5): Q8_1, Q8_K, the i-quants, ternary, FP4 and 1-/2-bit types.
void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq2_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq2_s(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq3_s(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq1_s(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq1_m(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_tq1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_tq2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_mxfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_nvfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);
void dequantize_q2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks);

}  // namespace ggufs::kernels
