// Plain types, block size 1 (src/ggml/README.md §5): one stored value per output element.
#include <bit>
#include <cstdint>
#include <limits>

#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

// F64 → float relies on IEEE conversion (out of range → ±inf, NaN stays NaN), as §2 requires.
static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559);

}  // namespace

void dequantize_f32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) dst[i] = std::bit_cast<float>(load_u32(src + 4 * i));
}

void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) dst[i] = half_to_float(load_u16(src + 2 * i));
}

void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) dst[i] = bf16_to_float(load_u16(src + 2 * i));
}

void dequantize_f64(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) {
    dst[i] = static_cast<float>(std::bit_cast<double>(load_u64(src + 8 * i)));
  }
}

// Integers (§2): the nearest float, ties to even, which is what a C cast does. The unsigned →
// signed casts are modular (two's complement) since C++20.
void dequantize_i8(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i)
    dst[i] = static_cast<float>(static_cast<std::int8_t>(src[i]));
}

void dequantize_i16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) {
    dst[i] = static_cast<float>(static_cast<std::int16_t>(load_u16(src + 2 * i)));
  }
}

void dequantize_i32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) {
    dst[i] = static_cast<float>(static_cast<std::int32_t>(load_u32(src + 4 * i)));
  }
}

void dequantize_i64(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t i = 0; i < n_blocks; ++i) {
    dst[i] = static_cast<float>(static_cast<std::int64_t>(load_u64(src + 8 * i)));
  }
}

}  // namespace ggufs::kernels
