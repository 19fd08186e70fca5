// The remaining types of src/ggml/README.md §6, §7 and §9–§11: Q8_1, Q8_K, ternary TQ1_0/TQ2_0, the
// FP4 types MXFP4/NVFP4 and the 1-/2-bit Q1_0/Q2_0. Each product is rounded on its own
// (-ffp-contract=off).
#include <bit>
#include <cmath>
#include <cstdint>

#include "block_fields.h"
#include "ggufs/ggml_tables.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

// Block layouts (§6, §7, §9–§11), field sizes in bytes in storage order.
constexpr std::size_t kQ8_1Size = 2 + 2 + 32;       // d, s (unused), qs
constexpr std::size_t kQ8KSize = 4 + 256 + 2 * 16;  // float d, qs, int16 bsums (unused)
constexpr std::size_t kTq1_0Size = 48 + 4 + 2;      // qs, qh, d
constexpr std::size_t kTq2_0Size = 64 + 2;          // qs, d
constexpr std::size_t kMxfp4Size = 1 + 16;          // e, qs
constexpr std::size_t kNvfp4Size = 4 + 32;          // sc[4], qs
constexpr std::size_t kQ1_0Size = 2 + 16;           // d, qs
constexpr std::size_t kQ2_0Size = 2 + 16;           // d, qs
static_assert(kQ8_1Size == 36 && kQ8KSize == 292 && kTq1_0Size == 54 && kTq2_0Size == 66 &&
              kMxfp4Size == 17 && kNvfp4Size == 36 && kQ1_0Size == 18 && kQ2_0Size == 18);

// NVFP4: a UE4M3 scale byte, halved (§10). All values are exact in float.
float ue4m3_half(std::uint8_t x) {
  if (x == 0 || x == 0x7f) return 0.0f;
  const int e = (x >> 3) & 15, m = x & 7;
  // M × 2^-9 × 0.5 for E = 0, else (1 + M/8) × 2^(E − 7) × 0.5 = (8 + M) × 2^(E − 11).
  return e == 0 ? std::ldexp(static_cast<float>(m), -10)
                : std::ldexp(static_cast<float>(8 + m), e - 11);
}

}  // namespace

void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ8_1Size, dst += 32) {
    const float d = load_half(src);
    for (int j = 0; j < 32; ++j) {
      dst[j] = static_cast<float>(static_cast<std::int8_t>(src[4 + j])) * d;
    }
  }
}

void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ8KSize, dst += 256) {
    const float d = load_f32(src);
    for (int j = 0; j < 256; ++j) {
      dst[j] = d * static_cast<float>(static_cast<std::int8_t>(src[4 + j]));
    }
  }
}

// Digit-major order: all digits 0 of a byte run, then all digits 1, and so on (§9, TQ1_0).
void dequantize_tq1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kTq1_0Size) {
    const float d = load_half(src + 52);
    // (first byte, bytes per run, digits per byte): qs[0..31], qs[32..47], qh[0..3].
    static constexpr int kRuns[3][3] = {{0, 32, 5}, {32, 16, 5}, {48, 4, 4}};
    for (const auto& run : kRuns) {
      for (int n = 0; n < run[2]; ++n) {
        for (int m = 0; m < run[1]; ++m) {
          *dst++ = static_cast<float>(ternary_digit(src[run[0] + m], n)) * d;
        }
      }
    }
  }
}

void dequantize_tq2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kTq2_0Size) {
    const float d = load_half(src + 64);
    for (int h = 0; h < 2; ++h) {
      for (int p = 0; p < 4; ++p) {
        for (int m = 0; m < 32; ++m) {
          const int q = (src[32 * h + m] >> (2 * p)) & 3;
          *dst++ = static_cast<float>(q - 1) * d;
        }
      }
    }
  }
}

// The E8M0 scale 2^(e − 128) is exact for every e (0 and 1 give float subnormals).
void dequantize_mxfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kMxfp4Size, dst += 32) {
    const float scale = std::ldexp(1.0f, static_cast<int>(src[0]) - 128);
    const std::uint8_t* qs = src + 1;
    for (int j = 0; j < 16; ++j) {
      dst[j] = static_cast<float>(tables::kValuesFp4[qs[j] & 15]) * scale;
      dst[j + 16] = static_cast<float>(tables::kValuesFp4[qs[j] >> 4]) * scale;
    }
  }
}

void dequantize_nvfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kNvfp4Size, dst += 64) {
    const std::uint8_t* qs = src + 4;
    for (int s = 0; s < 4; ++s) {
      const float scale = ue4m3_half(src[s]);
      for (int j = 0; j < 8; ++j) {
        dst[16 * s + j] = static_cast<float>(tables::kValuesFp4[qs[8 * s + j] & 15]) * scale;
        dst[16 * s + 8 + j] = static_cast<float>(tables::kValuesFp4[qs[8 * s + j] >> 4]) * scale;
      }
    }
  }
}

void dequantize_q1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ1_0Size, dst += 128) {
    const float d = load_half(src);
    for (int j = 0; j < 128; ++j) dst[j] = ((src[2 + j / 8] >> (j % 8)) & 1) ? d : -d;
  }
}

void dequantize_q2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ2_0Size, dst += 64) {
    const float d = load_half(src);
    for (int j = 0; j < 64; ++j) {
      const int q = (src[2 + j / 4] >> (2 * (j % 4))) & 3;
      dst[j] = static_cast<float>(q - 1) * d;
    }
  }
}

}  // namespace ggufs::kernels
