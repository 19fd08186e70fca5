// K-quants: 256-element super-blocks split into sub-blocks with their own scales
// (src/ggml/README.md §7). Every product and difference is rounded on its own (-ffp-contract=off),
// in the order the doc gives.
#include <cstdint>

#include "block_fields.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

constexpr std::size_t kBlock = 256;

// Super-block layouts (§4), field sizes in bytes in storage order.
constexpr std::size_t kQ2KSize = 16 + 64 + 2 + 2;        // scales, qs, d, dmin
constexpr std::size_t kQ3KSize = 32 + 64 + 12 + 2;       // hmask, qs, scales, d
constexpr std::size_t kQ4KSize = 2 + 2 + 12 + 128;       // d, dmin, scales, qs
constexpr std::size_t kQ5KSize = 2 + 2 + 12 + 32 + 128;  // d, dmin, scales, qh, qs
constexpr std::size_t kQ6KSize = 128 + 64 + 16 + 2;      // ql, qh, scales, d
static_assert(kQ2KSize == 84 && kQ3KSize == 110 && kQ4KSize == 144 && kQ5KSize == 176 &&
              kQ6KSize == 210);

// Q3_K: the signed 6-bit scale S[i] (stored with a bias of 32) of sub-block i (§4, Q3_K).
int scale_q3_k(const std::uint8_t* scales, int i) {
  const int low = i < 8 ? scales[i] & 15 : scales[i - 8] >> 4;
  const int high = (scales[8 + i % 4] >> (2 * (i / 4))) & 3;
  return (low | high << 4) - 32;
}

}  // namespace

// Two halves h of 128 elements, each four 2-bit planes p of 32; 16 sub-blocks of 16 elements.
void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ2KSize, dst += kBlock) {
    const std::uint8_t* scales = src;
    const std::uint8_t* qs = src + 16;
    const float d = load_half(src + 80);
    const float dmin = load_half(src + 82);
    for (int s = 0; s < 16; ++s) {
      const int h = s / 8, p = (s % 8) / 2, l0 = 16 * (s % 2);
      const float dl = d * static_cast<float>(scales[s] & 15);
      const float ml = dmin * static_cast<float>(scales[s] >> 4);
      for (int l = l0; l < l0 + 16; ++l) {
        const int q = (qs[32 * h + l] >> (2 * p)) & 3;
        dst[128 * h + 32 * p + l] = dl * static_cast<float>(q) - ml;
      }
    }
  }
}

// As Q2_K, with a third bit from hmask selecting q − 4 (bit clear) or q (bit set).
void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ3KSize, dst += kBlock) {
    const std::uint8_t* hmask = src;
    const std::uint8_t* qs = src + 32;
    const std::uint8_t* scales = src + 96;
    const float d = load_half(src + 108);
    for (int i = 0; i < 16; ++i) {
      const int h = i / 8, p = (i % 8) / 2, l0 = 16 * (i % 2);
      const float dl = d * static_cast<float>(scale_q3_k(scales, i));
      for (int l = l0; l < l0 + 16; ++l) {
        const int q = (qs[32 * h + l] >> (2 * p)) & 3;
        const bool high = (hmask[l] >> (4 * h + p)) & 1;
        dst[128 * h + 32 * p + l] = dl * static_cast<float>(high ? q : q - 4);
      }
    }
  }
}

// Four chunks c of 64 elements: low nibbles of qs[32c ..] (sub-block 2c), then the high ones.
void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ4KSize, dst += kBlock) {
    const float d = load_half(src);
    const float dmin = load_half(src + 2);
    const std::uint8_t* scales = src + 4;
    const std::uint8_t* qs = src + 16;
    for (int c = 0; c < 4; ++c) {
      const ScaleMin lo = scale_min_k4(scales, 2 * c), hi = scale_min_k4(scales, 2 * c + 1);
      const float d1 = d * static_cast<float>(lo.sc), m1 = dmin * static_cast<float>(lo.mn);
      const float d2 = d * static_cast<float>(hi.sc), m2 = dmin * static_cast<float>(hi.mn);
      for (int l = 0; l < 32; ++l) {
        dst[64 * c + l] = d1 * static_cast<float>(qs[32 * c + l] & 15) - m1;
        dst[64 * c + 32 + l] = d2 * static_cast<float>(qs[32 * c + l] >> 4) - m2;
      }
    }
  }
}

// As Q4_K, plus a fifth bit (+16): bit 2c / 2c + 1 of qh[l].
void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ5KSize, dst += kBlock) {
    const float d = load_half(src);
    const float dmin = load_half(src + 2);
    const std::uint8_t* scales = src + 4;
    const std::uint8_t* qh = src + 16;
    const std::uint8_t* qs = src + 48;
    for (int c = 0; c < 4; ++c) {
      const ScaleMin lo = scale_min_k4(scales, 2 * c), hi = scale_min_k4(scales, 2 * c + 1);
      const float d1 = d * static_cast<float>(lo.sc), m1 = dmin * static_cast<float>(lo.mn);
      const float d2 = d * static_cast<float>(hi.sc), m2 = dmin * static_cast<float>(hi.mn);
      for (int l = 0; l < 32; ++l) {
        const int q_lo = (qs[32 * c + l] & 15) + (((qh[l] >> (2 * c)) & 1) ? 16 : 0);
        const int q_hi = (qs[32 * c + l] >> 4) + (((qh[l] >> (2 * c + 1)) & 1) ? 16 : 0);
        dst[64 * c + l] = d1 * static_cast<float>(q_lo) - m1;
        dst[64 * c + 32 + l] = d2 * static_cast<float>(q_hi) - m2;
      }
    }
  }
}

// Two halves h of 128: 4 low bits from ql, 2 high bits from qh, signed 8-bit scale per 16.
void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kQ6KSize, dst += kBlock) {
    const float d = load_half(src + 208);
    for (int h = 0; h < 2; ++h) {
      const std::uint8_t* ql = src + 64 * h;
      const std::uint8_t* qh = src + 128 + 32 * h;
      const std::uint8_t* sc = src + 192 + 8 * h;
      float* y = dst + 128 * h;
      // d × scale first, then × q (§4: "the product d × scale first").
      const auto out = [d, sc](int scale_index, int q6) {
        const auto scale = static_cast<float>(static_cast<std::int8_t>(sc[scale_index]));
        return (d * scale) * static_cast<float>(q6 - 32);
      };
      for (int l = 0; l < 32; ++l) {
        const int k = l / 16;
        y[l] = out(k, (ql[l] & 15) | ((qh[l] >> 0) & 3) << 4);
        y[l + 32] = out(k + 2, (ql[l + 32] & 15) | ((qh[l] >> 2) & 3) << 4);
        y[l + 64] = out(k + 4, (ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4);
        y[l + 96] = out(k + 6, (ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4);
      }
    }
  }
}

}  // namespace ggufs::kernels
