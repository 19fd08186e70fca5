// Legacy 32-element blocks (src/ggml/README.md §6). Nibble order: the low nibble of qs[j] is
// element j, the high nibble element j + 16. Every product and sum is rounded on its own (the
// library is built with -ffp-contract=off), in the order the doc gives.
#include <cstdint>

#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

constexpr std::size_t kBlock = 32;

// Bytes per block (§1): Q4_0 d·qs[16]; Q4_1 d·m·qs[16]; Q5_0 d·qh·qs[16]; Q5_1 d·m·qh·qs[16];
// Q8_0 d·qs[32] — halves are 2 bytes, qh a 4-byte uint32.
constexpr std::size_t kQ4_0Size = 2 + 16;
constexpr std::size_t kQ4_1Size = 2 + 2 + 16;
constexpr std::size_t kQ5_0Size = 2 + 4 + 16;
constexpr std::size_t kQ5_1Size = 2 + 2 + 4 + 16;
constexpr std::size_t kQ8_0Size = 2 + 32;
static_assert(kQ4_0Size == 18 && kQ4_1Size == 20 && kQ5_0Size == 22 && kQ5_1Size == 24 &&
              kQ8_0Size == 34);

// The 5-bit quants of element j and j + 16: a nibble of qs[j] plus bit j / j + 16 of qh.
int q5_lo(const std::uint8_t* qs, std::uint32_t qh, int j) {
  return (qs[j] & 15) | static_cast<int>((qh >> j) & 1) << 4;
}
int q5_hi(const std::uint8_t* qs, std::uint32_t qh, int j) {
  return (qs[j] >> 4) | static_cast<int>((qh >> (j + 16)) & 1) << 4;
}

}  // namespace

void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ4_0Size, dst += kBlock) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = static_cast<float>((qs[j] & 15) - 8) * d;
      dst[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ4_1Size, dst += kBlock) {
    const float d = load_half(src);
    const float m = load_half(src + 2);
    const std::uint8_t* qs = src + 4;
    for (int j = 0; j < 16; ++j) {
      dst[j] = static_cast<float>(qs[j] & 15) * d + m;
      dst[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ5_0Size, dst += kBlock) {
    const float d = load_half(src);
    const std::uint32_t qh = load_u32(src + 2);
    const std::uint8_t* qs = src + 6;
    for (int j = 0; j < 16; ++j) {
      dst[j] = static_cast<float>(q5_lo(qs, qh, j) - 16) * d;
      dst[j + 16] = static_cast<float>(q5_hi(qs, qh, j) - 16) * d;
    }
  }
}

void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ5_1Size, dst += kBlock) {
    const float d = load_half(src);
    const float m = load_half(src + 2);
    const std::uint32_t qh = load_u32(src + 4);
    const std::uint8_t* qs = src + 8;
    for (int j = 0; j < 16; ++j) {
      dst[j] = static_cast<float>(q5_lo(qs, qh, j)) * d + m;
      dst[j + 16] = static_cast<float>(q5_hi(qs, qh, j)) * d + m;
    }
  }
}

void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ8_0Size, dst += kBlock) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;
    for (std::size_t j = 0; j < kBlock; ++j) {
      dst[j] = static_cast<float>(static_cast<std::int8_t>(qs[j])) * d;
    }
  }
}

}  // namespace ggufs::kernels
