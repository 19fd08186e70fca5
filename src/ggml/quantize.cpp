// Our own quantizers (src/ggml/README.md §5–§7), written for clarity, not for ggml's choice of
// values.
//
// Every scale is a half rounded *up* (never down), and every sub-block scale is the smallest
// multiple of the super-block scale that covers the sub-block, so no element ever has to be
// clamped: an element's error is at most half its block's quantization step. With M the largest
// |x| of a block (of the super-block for the K-quants) and, for Q4_K, R = max(x, 0) − min(x, 0)
// over the super-block, and half scales in the normal range (relative rounding ≤ 2^-10), the
// decoded value differs from the input by at most:
//   Q8_0  M / 254 × (1 + 2^-10)                    < 0.0040 M
//   Q4_0  M / 14 × (1 + 2^-10)                     < 0.0715 M
//   Q6_K  M / 62 × (1 + 1.001 / 127)               < 0.0165 M
//   Q4_K  R / 30 × (1 + 1.001 / 63)^2              < 0.0350 R
// (tests/unit_writer.cpp checks these bounds). F32 is exact; F16 and BF16 round to nearest even.
// Inputs must be finite and small enough for the scales to fit in a half (|x| up to about 4·10^5
// for Q4_0, more for the others; larger values throw std::invalid_argument). Tiny values get
// subnormal half scales, whose coarser rounding the bounds above do not cover.
#include "ggufs/quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "ggufs/ggml_type.h"
#include "ggufs/half.h"

namespace ggufs {

namespace {

/// Encodes `n_blocks` blocks of floats into their stored bytes (the inverse of a BlockDecoder).
using BlockEncoder = void (*)(const float* x, std::uint8_t* out, std::size_t n_blocks);

void put_u16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
}

/// Stores the smallest half ≥ `v` (v ≥ 0) at `p` and returns its value, so that a scale never
/// shrinks by rounding. Throws when `v` is beyond the half range.
float put_scale(std::uint8_t* p, float v) {
  std::uint16_t h = float_to_half(v);
  if (half_to_float(h) < v) ++h;  // the next half up (v ≥ 0, so the bits grow with the value)
  const float d = half_to_float(h);
  if (!std::isfinite(d)) throw std::invalid_argument("values too large to quantize");
  put_u16(p, h);
  return d;
}

/// round(v), limited to [lo, hi] (a NaN gives lo rather than undefined behaviour).
int round_clamp(float v, int lo, int hi) {
  const float r = std::nearbyint(v);
  if (!(r > static_cast<float>(lo))) return lo;
  if (!(r < static_cast<float>(hi))) return hi;
  return static_cast<int>(r);
}

/// Largest |x| of `n` values.
float abs_max(const float* x, std::size_t n) {
  float m = 0.0f;
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

/// The smallest integer k in [0, limit] with k × unit ≥ v (limit when none is).
int steps_covering(float v, float unit, int limit) {
  if (unit <= 0.0f || v <= 0.0f) return 0;
  return static_cast<int>(std::min(std::ceil(v / unit), static_cast<float>(limit)));
}

std::uint16_t float_to_bf16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((x >> 16) | 0x0040u);  // NaN: keep it a (quiet) NaN
  }
  // Round to nearest, ties to even: add just under half an ulp, plus one when the kept part is
  // odd. A carry into the exponent is correct rounding (up to inf past the largest bfloat16).
  const std::uint32_t odd = (x >> 16) & 1u;
  return static_cast<std::uint16_t>((x + 0x7fffu + odd) >> 16);
}

// --- plain types (§2) ---

void encode_f32(const float* x, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x[i]);
    put_u16(out + 4 * i, static_cast<std::uint16_t>(b));
    put_u16(out + 4 * i + 2, static_cast<std::uint16_t>(b >> 16));
  }
}

void encode_f16(const float* x, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) put_u16(out + 2 * i, float_to_half(x[i]));
}

void encode_bf16(const float* x, std::uint8_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) put_u16(out + 2 * i, float_to_bf16(x[i]));
}

// --- legacy 32-element blocks (§3) ---

// Q8_0: d @0, 32 signed quants @2; y = q × d with q in [−127, 127].
void encode_q8_0(const float* x, std::uint8_t* out, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, x += 32, out += 34) {
    const float d = put_scale(out, abs_max(x, 32) / 127.0f);
    const float inv = d > 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 32; ++j) {
      out[2 + j] =
          static_cast<std::uint8_t>(static_cast<std::int8_t>(round_clamp(x[j] * inv, -127, 127)));
    }
  }
}

// Q4_0: d @0, 16 bytes of nibbles @2 (element j low, j + 16 high); y = (nibble − 8) × d. We use
// the symmetric range −7..7.
void encode_q4_0(const float* x, std::uint8_t* out, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, x += 32, out += 18) {
    const float d = put_scale(out, abs_max(x, 32) / 7.0f);
    const float inv = d > 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < 16; ++j) {
      const int lo = round_clamp(x[j] * inv, -7, 7) + 8;
      const int hi = round_clamp(x[j + 16] * inv, -7, 7) + 8;
      out[2 + j] = static_cast<std::uint8_t>(lo | hi << 4);
    }
  }
}

// --- K-quants (§4) ---

// Q4_K: d @0, dmin @2, 12 bytes of 6-bit scales and mins @4, 128 bytes of nibbles @16.
// Sub-block j (elements 32j .. 32j+31) decodes as y = (d × sc) × q − dmin × mn, q in 0..15.
void encode_q4_k(const float* x, std::uint8_t* out, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, x += 256, out += 144) {
    // Each sub-block spans [−m, hi] with m = −min(x, 0) ≥ 0 (the offset cannot be negative).
    float m[8], hi[8];
    for (int j = 0; j < 8; ++j) {
      const float* s = x + 32 * j;
      m[j] = -std::min(0.0f, *std::min_element(s, s + 32));
      hi[j] = *std::max_element(s, s + 32);
    }
    const float dmin = put_scale(out + 2, *std::max_element(m, m + 8) / 63.0f);
    int mn[8];
    float offset[8], step[8];
    for (int j = 0; j < 8; ++j) {
      mn[j] = steps_covering(m[j], dmin, 63);
      offset[j] = dmin * static_cast<float>(mn[j]);         // ≥ m[j]: x + offset ≥ 0
      step[j] = std::max(0.0f, hi[j] + offset[j]) / 15.0f;  // 15 steps cover x + offset
    }
    const float d = put_scale(out, *std::max_element(step, step + 8) / 63.0f);
    int sc[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = steps_covering(step[j], d, 63);
      step[j] = d * static_cast<float>(sc[j]);  // the step the decoder will use
    }
    // Pack: j < 4 in the low 6 bits of bytes j (scale) and j + 4 (min); j ≥ 4 as nibbles of
    // byte j + 4 (scale low, min high) with their top 2 bits in bits 6–7 of bytes j − 4, j.
    std::uint8_t* scales = out + 4;
    for (int j = 0; j < 4; ++j) {
      scales[j] = static_cast<std::uint8_t>(sc[j] | (sc[j + 4] >> 4) << 6);
      scales[j + 4] = static_cast<std::uint8_t>(mn[j] | (mn[j + 4] >> 4) << 6);
      scales[j + 8] = static_cast<std::uint8_t>((sc[j + 4] & 15) | (mn[j + 4] & 15) << 4);
    }
    std::uint8_t q[256];
    for (int i = 0; i < 256; ++i) {
      const int j = i / 32;
      q[i] = step[j] > 0.0f
                 ? static_cast<std::uint8_t>(round_clamp((x[i] + offset[j]) / step[j], 0, 15))
                 : 0;
    }
    // Chunk c of 64 elements: element 64c + l in the low nibble of qs[32c + l], 64c + 32 + l in
    // its high nibble.
    std::uint8_t* qs = out + 16;
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        qs[32 * c + l] = static_cast<std::uint8_t>(q[64 * c + l] | q[64 * c + 32 + l] << 4);
      }
    }
  }
}

// Q6_K: ql[128] @0, qh[64] @128, 16 signed scales @192, d @208. Sub-block i (elements
// 16i .. 16i+15) decodes as y = (d × scale) × (q6 − 32); we use quants −31..31 and scales ≥ 0.
void encode_q6_k(const float* x, std::uint8_t* out, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, x += 256, out += 210) {
    float step[16];
    for (int i = 0; i < 16; ++i) step[i] = abs_max(x + 16 * i, 16) / 31.0f;
    const float d = put_scale(out + 208, *std::max_element(step, step + 16) / 127.0f);
    for (int i = 0; i < 16; ++i) {
      const int sc = steps_covering(step[i], d, 127);
      out[192 + i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(sc));
      step[i] = d * static_cast<float>(sc);
    }
    std::uint8_t q[256];  // biased quants 0..63
    for (int e = 0; e < 256; ++e) {
      const float s = step[e / 16];
      q[e] = static_cast<std::uint8_t>((s > 0.0f ? round_clamp(x[e] / s, -32, 31) : 0) + 32);
    }
    // Half h, l = 0..31: elements 128h + l + 32r (r = 0..3); low nibbles in ql (r = 0, 1 low,
    // r = 2, 3 high nibbles of ql[64h + l] and ql[64h + l + 32]), top 2 bits in qh[32h + l] at 2r.
    for (int h = 0; h < 2; ++h) {
      std::uint8_t* ql = out + 64 * h;
      std::uint8_t* qh = out + 128 + 32 * h;
      const std::uint8_t* v = q + 128 * h;
      for (int l = 0; l < 32; ++l) {
        ql[l] = static_cast<std::uint8_t>((v[l] & 15) | (v[l + 64] & 15) << 4);
        ql[l + 32] = static_cast<std::uint8_t>((v[l + 32] & 15) | (v[l + 96] & 15) << 4);
        qh[l] = static_cast<std::uint8_t>(v[l] >> 4 | (v[l + 32] >> 4) << 2 |
                                          (v[l + 64] >> 4) << 4 | (v[l + 96] >> 4) << 6);
      }
    }
  }
}

BlockEncoder encoder(std::uint32_t type) {
  switch (type) {
    case GGML_TYPE_F32:
      return encode_f32;
    case GGML_TYPE_F16:
      return encode_f16;
    case GGML_TYPE_BF16:
      return encode_bf16;
    case GGML_TYPE_Q8_0:
      return encode_q8_0;
    case GGML_TYPE_Q4_0:
      return encode_q4_0;
    case GGML_TYPE_Q4_K:
      return encode_q4_k;
    case GGML_TYPE_Q6_K:
      return encode_q6_k;
    default:
      return nullptr;
  }
}

}  // namespace

std::vector<std::uint8_t> quantize(std::uint32_t type, std::span<const float> x) {
  const TypeTraits* traits = type_traits(type);
  const BlockEncoder encode = encoder(type);
  if (!traits || !encode) {
    throw std::invalid_argument("quantize: unsupported ggml type " +
                                std::string(traits ? traits->name : std::to_string(type)));
  }
  if (x.size() % traits->block_size != 0) {
    throw std::invalid_argument("quantize: " + std::to_string(x.size()) +
                                " values are not a whole number of " + std::string(traits->name) +
                                " blocks of " + std::to_string(traits->block_size));
  }
  const std::size_t n_blocks = x.size() / traits->block_size;
  std::vector<std::uint8_t> out(n_blocks * traits->type_size);
  encode(x.data(), out.data(), n_blocks);
  return out;
}

}  // namespace ggufs
