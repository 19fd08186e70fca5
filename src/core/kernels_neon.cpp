// NEON block decoders (arm64): sixteen elements at a time as four float32x4 vectors, with the
// same float operations in the same order as the reference decoders (ggml-types.md §2–§5), so
// the output bits are identical. Quantized codes are widened from bytes to 32-bit lanes and
// converted exactly (small integers); every product and difference is a separate instruction.
#include "kernels_arm.h"

#if GGUFS_ARM_KERNELS

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "ggufs/ggml_tables.h"
#include "ggufs/kernels.h"
#include "kquant_scales.h"
#include "le_load.h"

namespace ggufs::kernels::neon {

namespace {

// --- helpers -----------------------------------------------------------------------------------

// Sixteen floats, lanes 0–3, 4–7, 8–11, 12–15.
struct F16x {
  float32x4_t v[4];
};

// 16 unsigned bytes → their floats.
inline F16x u8_to_f32(uint8x16_t b) {
  const uint16x8_t lo = vmovl_u8(vget_low_u8(b)), hi = vmovl_high_u8(b);
  return {{vcvtq_f32_u32(vmovl_u16(vget_low_u16(lo))), vcvtq_f32_u32(vmovl_high_u16(lo)),
           vcvtq_f32_u32(vmovl_u16(vget_low_u16(hi))), vcvtq_f32_u32(vmovl_high_u16(hi))}};
}

// 16 signed bytes → their floats.
inline F16x s8_to_f32(int8x16_t b) {
  const int16x8_t lo = vmovl_s8(vget_low_s8(b)), hi = vmovl_high_s8(b);
  return {{vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo))), vcvtq_f32_s32(vmovl_high_s16(lo)),
           vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi))), vcvtq_f32_s32(vmovl_high_s16(hi))}};
}

// y[i] = x[i] × d.
inline void store_mul(float* y, const F16x& x, float d) {
  const float32x4_t dv = vdupq_n_f32(d);
  for (int k = 0; k < 4; ++k) vst1q_f32(y + 4 * k, vmulq_f32(x.v[k], dv));
}

// y[i] = x[i] × d + m (the legacy quants with a minimum).
inline void store_mul_add(float* y, const F16x& x, float d, float m) {
  const float32x4_t dv = vdupq_n_f32(d), mv = vdupq_n_f32(m);
  for (int k = 0; k < 4; ++k) vst1q_f32(y + 4 * k, vaddq_f32(vmulq_f32(x.v[k], dv), mv));
}

// y[i] = d × x[i] − m (the K-quants with a minimum).
inline void store_mul_sub(float* y, const F16x& x, float d, float m) {
  const float32x4_t dv = vdupq_n_f32(d), mv = vdupq_n_f32(m);
  for (int k = 0; k < 4; ++k) vst1q_f32(y + 4 * k, vsubq_f32(vmulq_f32(dv, x.v[k]), mv));
}

inline uint8x16_t low_nibbles(uint8x16_t b) { return vandq_u8(b, vdupq_n_u8(15)); }
inline uint8x16_t high_nibbles(uint8x16_t b) { return vshrq_n_u8(b, 4); }

// 0x10 in byte j where bit `first` + j of qh is set (j = 0..15): the fifth bit of Q5_0 / Q5_1.
inline uint8x16_t fifth_bits(std::uint32_t qh, int first) {
  const std::uint32_t bits = qh >> first;
  const uint8x16_t bytes = vcombine_u8(vdup_n_u8(static_cast<std::uint8_t>(bits)),
                                       vdup_n_u8(static_cast<std::uint8_t>(bits >> 8)));
  static const std::uint8_t kLaneBit[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                            1, 2, 4, 8, 16, 32, 64, 128};
  return vandq_u8(vtstq_u8(bytes, vld1q_u8(kLaneBit)), vdupq_n_u8(16));
}

// `value` in the bytes where `bit` is set in `mask_bytes`, else 0.
inline uint8x16_t where_bit(uint8x16_t mask_bytes, std::uint8_t bit, std::uint8_t value) {
  return vandq_u8(vtstq_u8(mask_bytes, vdupq_n_u8(bit)), vdupq_n_u8(value));
}

// Bytes >> shift for a shift known only at run time (0..7).
inline uint8x16_t shift_right(uint8x16_t b, int shift) {
  return vshlq_u8(b, vdupq_n_s8(static_cast<std::int8_t>(-shift)));
}

}  // namespace

// --- plain types (§2): whole vectors, then the reference for the tail ---------------------------

void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 4 <= n_blocks; i += 4) {
    vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u8(vld1_u8(src + 2 * i))));
  }
  kernels::dequantize_f16(src + 2 * i, dst + i, n_blocks - i);
}

void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    const uint16x8_t h = vreinterpretq_u16_u8(vld1q_u8(src + 2 * i));
    vst1q_f32(dst + i, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
    vst1q_f32(dst + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)));
  }
  kernels::dequantize_bf16(src + 2 * i, dst + i, n_blocks - i);
}

void dequantize_i8(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 16 <= n_blocks; i += 16) {
    const F16x x = s8_to_f32(vreinterpretq_s8_u8(vld1q_u8(src + i)));
    for (int k = 0; k < 4; ++k) vst1q_f32(dst + i + 4 * k, x.v[k]);
  }
  kernels::dequantize_i8(src + i, dst + i, n_blocks - i);
}

void dequantize_i16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    const int16x8_t v = vreinterpretq_s16_u8(vld1q_u8(src + 2 * i));
    vst1q_f32(dst + i, vcvtq_f32_s32(vmovl_s16(vget_low_s16(v))));
    vst1q_f32(dst + i + 4, vcvtq_f32_s32(vmovl_high_s16(v)));
  }
  kernels::dequantize_i16(src + 2 * i, dst + i, n_blocks - i);
}

// scvtf rounds to nearest even (FPCR's default mode), as the C cast of the reference does.
void dequantize_i32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 4 <= n_blocks; i += 4) {
    vst1q_f32(dst + i, vcvtq_f32_s32(vreinterpretq_s32_u8(vld1q_u8(src + 4 * i))));
  }
  kernels::dequantize_i32(src + 4 * i, dst + i, n_blocks - i);
}

// --- legacy quants (§3): low nibbles are elements 0–15, high nibbles 16–31 ----------------------

void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t eight = vdupq_n_s8(8);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = load_half(src);
    const uint8x16_t qs = vld1q_u8(src + 2);
    store_mul(dst, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(low_nibbles(qs)), eight)), d);
    store_mul(dst + 16, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(high_nibbles(qs)), eight)), d);
  }
}

void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const float d = load_half(src), m = load_half(src + 2);
    const uint8x16_t qs = vld1q_u8(src + 4);
    store_mul_add(dst, u8_to_f32(low_nibbles(qs)), d, m);
    store_mul_add(dst + 16, u8_to_f32(high_nibbles(qs)), d, m);
  }
}

void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t sixteen = vdupq_n_s8(16);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const float d = load_half(src);
    const std::uint32_t qh = load_u32(src + 2);
    const uint8x16_t qs = vld1q_u8(src + 6);
    const uint8x16_t lo = vorrq_u8(low_nibbles(qs), fifth_bits(qh, 0));
    const uint8x16_t hi = vorrq_u8(high_nibbles(qs), fifth_bits(qh, 16));
    store_mul(dst, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(lo), sixteen)), d);
    store_mul(dst + 16, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(hi), sixteen)), d);
  }
}

void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const float d = load_half(src), m = load_half(src + 2);
    const std::uint32_t qh = load_u32(src + 4);
    const uint8x16_t qs = vld1q_u8(src + 8);
    store_mul_add(dst, u8_to_f32(vorrq_u8(low_nibbles(qs), fifth_bits(qh, 0))), d, m);
    store_mul_add(dst + 16, u8_to_f32(vorrq_u8(high_nibbles(qs), fifth_bits(qh, 16))), d, m);
  }
}

void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const float d = load_half(src);
    store_mul(dst, s8_to_f32(vld1q_s8(reinterpret_cast<const std::int8_t*>(src + 2))), d);
    store_mul(dst + 16, s8_to_f32(vld1q_s8(reinterpret_cast<const std::int8_t*>(src + 18))), d);
  }
}

// --- the other 8-bit types (§5): Q8_1 (its sum s is not used), Q8_K (a float32 d) ---------------

void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 32) {
    const float d = load_half(src);
    store_mul(dst, s8_to_f32(vld1q_s8(reinterpret_cast<const std::int8_t*>(src + 4))), d);
    store_mul(dst + 16, s8_to_f32(vld1q_s8(reinterpret_cast<const std::int8_t*>(src + 20))), d);
  }
}

void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 292, dst += 256) {
    const float d = load_f32(src);
    for (int k = 0; k < 16; ++k) {
      store_mul(dst + 16 * k,
                s8_to_f32(vld1q_s8(reinterpret_cast<const std::int8_t*>(src + 4 + 16 * k))), d);
    }
  }
}

// --- K-quants (§4) -------------------------------------------------------------------------------

// Sub-block s = 8h + 2p + k: 16 elements at 128h + 32p + 16k, 2-bit codes at bits 2p of
// qs[32h + 16k ..].
void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 84, dst += 256) {
    const float d = load_half(src + 80), dmin = load_half(src + 82);
    for (int s = 0; s < 16; ++s) {
      const int h = s / 8, p = (s % 8) / 2, k = s % 2;
      const float dl = d * static_cast<float>(src[s] & 15);
      const float ml = dmin * static_cast<float>(src[s] >> 4);
      const uint8x16_t q =
          vandq_u8(shift_right(vld1q_u8(src + 16 + 32 * h + 16 * k), 2 * p), vdupq_n_u8(3));
      store_mul_sub(dst + 128 * h + 32 * p + 16 * k, u8_to_f32(q), dl, ml);
    }
  }
}

// As Q2_K; bit 4h + p of hmask[l] set: the value is q, else q − 4.
void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 110, dst += 256) {
    const float d = load_half(src + 108);
    const simd::PackedQ3K packed = simd::unpack_scales_q3_k(src + 96);
    std::uint8_t biased[16];  // S[i] + 32
    std::memcpy(biased, &packed.lo, 8);
    std::memcpy(biased + 8, &packed.hi, 8);
    for (int i = 0; i < 16; ++i) {
      const int h = i / 8, p = (i % 8) / 2, k = i % 2;
      const float dl = d * static_cast<float>(biased[i] - 32);
      const uint8x16_t q =
          vandq_u8(shift_right(vld1q_u8(src + 32 + 32 * h + 16 * k), 2 * p), vdupq_n_u8(3));
      const uint8x16_t high =
          where_bit(vld1q_u8(src + 16 * k), static_cast<std::uint8_t>(1 << (4 * h + p)), 4);
      const int8x16_t value = vsubq_s8(vreinterpretq_s8_u8(vaddq_u8(q, high)), vdupq_n_s8(4));
      store_mul(dst + 128 * h + 32 * p + 16 * k, s8_to_f32(value), dl);
    }
  }
}

// Four chunks c of 64: low nibbles of qs[32c ..] (sub-block 2c), then the high ones (2c + 1).
// Q5_K adds bit 2c / 2c + 1 of qh[l] as +16.
template <bool kFifthBit>
void dequantize_q45_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  constexpr std::size_t kSize = kFifthBit ? 176 : 144;
  constexpr int kQs = kFifthBit ? 48 : 16;
  for (std::size_t b = 0; b < n_blocks; ++b, src += kSize, dst += 256) {
    const float d = load_half(src), dmin = load_half(src + 2);
    const simd::PackedK4 packed = simd::unpack_scales_k4(src + 4);
    for (int c = 0; c < 4; ++c) {
      const auto sc = [&](int j) { return static_cast<float>((packed.sc >> (8 * j)) & 255); };
      const auto mn = [&](int j) { return static_cast<float>((packed.mn >> (8 * j)) & 255); };
      const float d1 = d * sc(2 * c), m1 = dmin * mn(2 * c);
      const float d2 = d * sc(2 * c + 1), m2 = dmin * mn(2 * c + 1);
      for (int k = 0; k < 2; ++k) {
        const uint8x16_t qs = vld1q_u8(src + kQs + 32 * c + 16 * k);
        uint8x16_t lo = low_nibbles(qs), hi = high_nibbles(qs);
        if constexpr (kFifthBit) {
          const uint8x16_t qh = vld1q_u8(src + 16 + 16 * k);
          lo = vaddq_u8(lo, where_bit(qh, static_cast<std::uint8_t>(1 << (2 * c)), 16));
          hi = vaddq_u8(hi, where_bit(qh, static_cast<std::uint8_t>(1 << (2 * c + 1)), 16));
        }
        store_mul_sub(dst + 64 * c + 16 * k, u8_to_f32(lo), d1, m1);
        store_mul_sub(dst + 64 * c + 32 + 16 * k, u8_to_f32(hi), d2, m2);
      }
    }
  }
}

void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  dequantize_q45_k<false>(src, dst, n_blocks);
}

void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  dequantize_q45_k<true>(src, dst, n_blocks);
}

// Two halves h of 128: 4 low bits from ql, 2 high bits from qh; (d × scale) × (q − 32).
void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 210, dst += 256) {
    const float d = load_half(src + 208);
    for (int h = 0; h < 2; ++h) {
      const std::uint8_t* ql = src + 64 * h;
      const std::uint8_t* qh = src + 128 + 32 * h;
      const std::uint8_t* sc = src + 192 + 8 * h;
      float* y = dst + 128 * h;
      const auto ds = [&](int i) {
        return d * static_cast<float>(static_cast<std::int8_t>(sc[i]));
      };
      const int8x16_t bias = vdupq_n_s8(32);
      const auto code = [&](uint8x16_t low4, uint8x16_t high2) {
        const uint8x16_t q = vorrq_u8(low4, vshlq_n_u8(vandq_u8(high2, vdupq_n_u8(3)), 4));
        return s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(q), bias));
      };
      for (int k = 0; k < 2; ++k) {  // l = 16k .. 16k + 15
        const uint8x16_t a = vld1q_u8(ql + 16 * k), c = vld1q_u8(ql + 32 + 16 * k);
        const uint8x16_t hb = vld1q_u8(qh + 16 * k);
        store_mul(y + 16 * k, code(low_nibbles(a), hb), ds(k));
        store_mul(y + 32 + 16 * k, code(low_nibbles(c), vshrq_n_u8(hb, 2)), ds(k + 2));
        store_mul(y + 64 + 16 * k, code(high_nibbles(a), vshrq_n_u8(hb, 4)), ds(k + 4));
        store_mul(y + 96 + 16 * k, code(high_nibbles(c), vshrq_n_u8(hb, 6)), ds(k + 6));
      }
    }
  }
}

// --- 4-bit non-linear i-quants (§5): the code is an index into kValuesIq4nl ---------------------

void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t table = vld1q_s8(tables::kValuesIq4nl.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const float d = load_half(src);
    const uint8x16_t qs = vld1q_u8(src + 2);
    store_mul(dst, s8_to_f32(vqtbl1q_s8(table, low_nibbles(qs))), d);
    store_mul(dst + 16, s8_to_f32(vqtbl1q_s8(table, high_nibbles(qs))), d);
  }
}

void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t table = vld1q_s8(tables::kValuesIq4nl.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 136, dst += 256) {
    const float d = load_half(src);
    const unsigned scales_h = load_u16(src + 2);
    const std::uint8_t* scales_l = src + 4;
    for (int g = 0; g < 8; ++g) {
      const int ls = static_cast<int>(((scales_l[g / 2] >> (4 * (g % 2))) & 15) |
                                      ((scales_h >> (2 * g)) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      const uint8x16_t qs = vld1q_u8(src + 8 + 16 * g);
      store_mul(dst + 32 * g, s8_to_f32(vqtbl1q_s8(table, low_nibbles(qs))), dl);
      store_mul(dst + 32 * g + 16, s8_to_f32(vqtbl1q_s8(table, high_nibbles(qs))), dl);
    }
  }
}

}  // namespace ggufs::kernels::neon

#endif  // GGUFS_ARM_KERNELS
