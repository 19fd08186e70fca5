// NEON block decoders (arm64): sixteen elements at a time as four float32x4 vectors, with the
// same float operations in the same order as the reference decoders (src/ggml/README.md §5–§11), so
// the output bits are identical. Quantized codes are widened from bytes to 32-bit lanes and
// converted exactly (small integers); every product and difference is a separate instruction.
#include "kernels_arm.h"

#if GGUFS_ARM_KERNELS

#include <arm_neon.h>

#include <cstdint>
#include <cstring>

#include "fp4_scales.h"
#include "ggufs/ggml_tables.h"
#include "ggufs/kernels.h"
#include "iquant_grids.h"
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

// 32 elements from a 16-entry table of signed bytes: table[low nibble of qs[j]] × scale at y[j],
// table[high nibble] × scale at y[j + 16] (IQ4_NL, IQ4_XS and MXFP4 blocks).
inline void store_lookup32(float* y, int8x16_t table, uint8x16_t qs, float scale) {
  store_mul(y, s8_to_f32(vqtbl1q_s8(table, low_nibbles(qs))), scale);
  store_mul(y + 16, s8_to_f32(vqtbl1q_s8(table, high_nibbles(qs))), scale);
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

// --- the other 8-bit types (§6, §7): Q8_1 (its sum s is not used), Q8_K (a float32 d) ------------

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

// --- i-quant grids (§8): the block walks of iquant_grids.h with NEON group writers -------------

struct NeonGroups {
  // db × float(grid byte j), negated (sign bit flipped: exact) where bit j of signs is set.
  static void signed_group(float* y, float db, std::uint64_t grid, unsigned signs) {
    static const std::uint8_t kLaneBit[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    const uint16x8_t g = vmovl_u8(vcreate_u8(grid));
    const float32x4_t dv = vdupq_n_f32(db);
    // −1 (all ones) in the lanes whose sign bit is set, widened to 32 bits, keeping bit 31.
    const int16x8_t set = vmovl_s8(vreinterpret_s8_u8(
        vtst_u8(vdup_n_u8(static_cast<std::uint8_t>(signs)), vld1_u8(kLaneBit))));
    const uint32x4_t sign_bit = vdupq_n_u32(0x80000000u);
    const uint32x4_t s0 = vandq_u32(vreinterpretq_u32_s32(vmovl_s16(vget_low_s16(set))), sign_bit);
    const uint32x4_t s1 = vandq_u32(vreinterpretq_u32_s32(vmovl_high_s16(set)), sign_bit);
    const float32x4_t v0 = vmulq_f32(dv, vcvtq_f32_u32(vmovl_u16(vget_low_u16(g))));
    const float32x4_t v1 = vmulq_f32(dv, vcvtq_f32_u32(vmovl_high_u16(g)));
    vst1q_f32(y, vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(v0), s0)));
    vst1q_f32(y + 4, vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(v1), s1)));
  }
  // dl × (float(signed grid byte j) + delta).
  static void iq1_group(float* y, float dl, std::uint64_t grid, float delta) {
    const int16x8_t g = vmovl_s8(vcreate_s8(grid));
    const float32x4_t dv = vdupq_n_f32(dl), deltav = vdupq_n_f32(delta);
    vst1q_f32(y, vmulq_f32(dv, vaddq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(g))), deltav)));
    vst1q_f32(y + 4, vmulq_f32(dv, vaddq_f32(vcvtq_f32_s32(vmovl_high_s16(g)), deltav)));
  }
  static float half(std::uint16_t bits) { return half_to_float(bits); }
};

void dequantize_iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xxs<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq2_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xs<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq2_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_s<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_xxs<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq3_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_s<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq1_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_s<NeonGroups>(src, dst, n_blocks);
}

void dequantize_iq1_m(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_m<NeonGroups>(src, dst, n_blocks);
}

// --- 4-bit non-linear i-quants (§8): the code is an index into kValuesIq4nl ---------------------

void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t table = vld1q_s8(tables::kValuesIq4nl.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    store_lookup32(dst, table, vld1q_u8(src + 2), load_half(src));
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
      store_lookup32(dst + 32 * g, table, vld1q_u8(src + 8 + 16 * g), dl);
    }
  }
}

// --- ternary, FP4 and 1-/2-bit types (§9–§11) ----------------------------------------------------

// TQ1_0: digit n of each byte is ((b × 3^n) mod 256 × 3) >> 8, minus 1; digit-major order over
// the runs qs[0..31], qs[32..47] (5 digits each) and qh[0..3] (4 digits).
void dequantize_tq1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  static constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  // Digits of the bytes b as signed bytes −1, 0, +1.
  const auto digits = [](uint8x16_t b, int n) {
    const uint8x16_t t = vmulq_u8(b, vdupq_n_u8(kPow3[n]));  // mod 256 by wrapping
    const uint8x16_t top = vcombine_u8(vshrn_n_u16(vmull_u8(vget_low_u8(t), vdup_n_u8(3)), 8),
                                       vshrn_n_u16(vmull_high_u8(t, vdupq_n_u8(3)), 8));
    return vsubq_s8(vreinterpretq_s8_u8(top), vdupq_n_s8(1));
  };
  for (std::size_t b = 0; b < n_blocks; ++b, src += 54, dst += 256) {
    const float d = load_half(src + 52);
    std::uint8_t qh[16] = {src[48], src[49], src[50], src[51]};  // run 3, padded to a vector
    for (int n = 0; n < 5; ++n) {
      store_mul(dst + 32 * n, s8_to_f32(digits(vld1q_u8(src), n)), d);
      store_mul(dst + 32 * n + 16, s8_to_f32(digits(vld1q_u8(src + 16), n)), d);
      store_mul(dst + 160 + 16 * n, s8_to_f32(digits(vld1q_u8(src + 32), n)), d);
      if (n < 4) {
        vst1q_f32(dst + 240 + 4 * n,
                  vmulq_f32(s8_to_f32(digits(vld1q_u8(qh), n)).v[0], vdupq_n_f32(d)));
      }
    }
  }
}

// TQ2_0: two halves h of 32 bytes, four 2-bit planes p each, code − 1.
void dequantize_tq2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 66) {
    const float d = load_half(src + 64);
    for (int h = 0; h < 2; ++h) {
      for (int p = 0; p < 4; ++p) {
        for (int k = 0; k < 2; ++k, dst += 16) {
          const uint8x16_t q =
              vandq_u8(shift_right(vld1q_u8(src + 32 * h + 16 * k), 2 * p), vdupq_n_u8(3));
          store_mul(dst, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(q), vdupq_n_s8(1))), d);
        }
      }
    }
  }
}

// MXFP4: kValuesFp4[code] × 2^(e − 128); low nibbles are elements 0–15, high ones 16–31.
void dequantize_mxfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t table = vld1q_s8(tables::kValuesFp4.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 17, dst += 32) {
    store_lookup32(dst, table, vld1q_u8(src + 1), simd::e8m0_scale(src[0]));
  }
}

// NVFP4: four sub-blocks s of 16, each with its UE4M3 scale; 8 bytes, low nibbles first.
void dequantize_nvfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const int8x16_t table = vld1q_s8(tables::kValuesFp4.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 64) {
    for (int s = 0; s < 4; ++s) {
      const uint8x8_t qs = vld1_u8(src + 4 + 8 * s);
      const uint8x16_t codes = vcombine_u8(vand_u8(qs, vdup_n_u8(15)), vshr_n_u8(qs, 4));
      store_mul(dst + 16 * s, s8_to_f32(vqtbl1q_s8(table, codes)), simd::kUe4m3Half.v[src[s]]);
    }
  }
}

// Q1_0: bit j % 8 of qs[j / 8] set: +d, else −d.
void dequantize_q1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  static const std::uint8_t kSpread[16] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  static const std::uint8_t kLaneBit[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                            1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t spread = vld1q_u8(kSpread), lane_bit = vld1q_u8(kLaneBit);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 128) {
    const float d = load_half(src);
    const float32x4_t plus = vdupq_n_f32(d), minus = vdupq_n_f32(-d);
    const uint8x16_t qs = vld1q_u8(src + 2);
    for (int g = 0; g < 8; ++g) {  // bytes 2g, 2g + 1: elements 16g .. 16g + 15
      const uint8x16_t bytes = vqtbl1q_u8(qs, vaddq_u8(spread, vdupq_n_u8(2 * g)));
      const int8x16_t set = vreinterpretq_s8_u8(vtstq_u8(bytes, lane_bit));  // −1 or 0
      const int16x8_t lo = vmovl_s8(vget_low_s8(set)), hi = vmovl_high_s8(set);
      const int32x4_t m[4] = {vmovl_s16(vget_low_s16(lo)), vmovl_high_s16(lo),
                              vmovl_s16(vget_low_s16(hi)), vmovl_high_s16(hi)};
      for (int k = 0; k < 4; ++k) {
        vst1q_f32(dst + 16 * g + 4 * k, vbslq_f32(vreinterpretq_u32_s32(m[k]), plus, minus));
      }
    }
  }
}

// Q2_0: code (qs[j / 4] >> 2(j % 4)) & 3, minus 1, times d.
void dequantize_q2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  static const std::uint8_t kSpread[16] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  static const std::int8_t kShift[16] = {0, -2, -4, -6, 0, -2, -4, -6,
                                         0, -2, -4, -6, 0, -2, -4, -6};
  const uint8x16_t spread = vld1q_u8(kSpread);
  const int8x16_t shift = vld1q_s8(kShift);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 64) {
    const float d = load_half(src);
    const uint8x16_t qs = vld1q_u8(src + 2);
    for (int g = 0; g < 4; ++g) {  // bytes 4g .. 4g + 3: elements 16g .. 16g + 15
      const uint8x16_t bytes = vqtbl1q_u8(qs, vaddq_u8(spread, vdupq_n_u8(4 * g)));
      const uint8x16_t q = vandq_u8(vshlq_u8(bytes, shift), vdupq_n_u8(3));
      store_mul(dst + 16 * g, s8_to_f32(vsubq_s8(vreinterpretq_s8_u8(q), vdupq_n_s8(1))), d);
    }
  }
}

}  // namespace ggufs::kernels::neon

#endif  // GGUFS_ARM_KERNELS
