// AVX2 + F16C block decoders (x86-64): the reference decoders of kernels_*.cpp eight floats at a
// time, with the same float operations in the same order (src/ggml/README.md §5–§11), so the output
// bits are identical. Quants are unpacked with integer byte operations into int8 or int32 lanes,
// converted exactly to float, then scaled with the products and sums the doc gives.
#include <cstdint>
#include <cstring>

#include "ggufs/ggml_tables.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "iquant_grids.h"
#include "kernels_x86.h"
#include "le_load.h"

#if GGUFS_X86_KERNELS

#include <immintrin.h>

namespace ggufs::kernels::avx2 {

namespace {

#define TARGET GGUFS_TARGET_AVX2
// Fixed short loops are unrolled fully: shift counts and offsets become constants.
#define UNROLL _Pragma("GCC unroll 32")

// --- helpers -----------------------------------------------------------------------------------

// The half at p, converted (exactly, by F16C) and broadcast to 8 lanes.
TARGET inline __m256 bcast_half(const std::uint8_t* p) {
  return _mm256_set1_ps(_cvtsh_ss(load_u16(p)));
}

TARGET inline __m128i load128(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
TARGET inline __m256i load256(const std::uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
TARGET inline __m128i load64(const std::uint8_t* p) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}

// The low 8 bytes of x as signed / unsigned integers converted to float.
TARGET inline __m256 i8_to_ps(__m128i x) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(x)); }
TARGET inline __m256 u8_to_ps(__m128i x) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x)); }

// Bytes 8k .. 8k+7 of a 32-byte vector in the low half of an xmm.
TARGET inline __m128i quarter(__m256i q, int k) {
  const __m128i half = k < 2 ? _mm256_castsi256_si128(q) : _mm256_extracti128_si256(q, 1);
  return k % 2 == 0 ? half : _mm_unpackhi_epi64(half, half);
}

// The 32 bytes [lo, hi] as one vector: lo in bytes 0..15.
TARGET inline __m256i join(__m128i lo, __m128i hi) { return _mm256_set_m128i(hi, lo); }

// Low and high nibbles of 16 bytes, as 32 bytes: byte j = low nibble of x[j], byte 16 + j = high
// nibble of x[j] (the legacy nibble order, src/ggml/README.md §6).
TARGET inline __m256i nibbles(__m128i x) {
  const __m128i m4 = _mm_set1_epi8(15);
  return join(_mm_and_si128(x, m4), _mm_and_si128(_mm_srli_epi16(x, 4), m4));
}

// y[0..31] = float(int8 q[k]) × d.
TARGET inline void store_i8_mul(float* y, __m256i q, __m256 d) {
  UNROLL
  for (int k = 0; k < 4; ++k)
    _mm256_storeu_ps(y + 8 * k, _mm256_mul_ps(i8_to_ps(quarter(q, k)), d));
}

// y[0..31] = float(uint8 q[k]) × d + m (two rounded operations).
TARGET inline void store_u8_mul_add(float* y, __m256i q, __m256 d, __m256 m) {
  UNROLL
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(y + 8 * k, _mm256_add_ps(_mm256_mul_ps(u8_to_ps(quarter(q, k)), d), m));
  }
}

// 32 bytes where byte k is 0x10 if bit k of `bits` is set, else 0 (Q5_0 / Q5_1 fifth bits).
TARGET inline __m256i bits_to_bytes_0x10(std::uint32_t bits) {
  // Byte k of the result starts as byte k / 8 of `bits` (shuffles stay inside 128-bit lanes,
  // and every lane holds all four bytes), then tests bit k % 8.
  const __m256i spread =
      _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(bits)),
                          _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                           2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i bit = _mm256_set1_epi64x(0x8040201008040201);
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Lane masks (all ones) of 8 lanes: lane j set where bit j of `byte` is set.
TARGET inline __m256i byte_to_lane_mask(unsigned byte) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int>(byte)), bit), bit);
}

// v with lane j negated where bit j of `signs` is set: v × (±1) exactly (a sign flip).
TARGET inline __m256 apply_signs(__m256 v, unsigned signs) {
  const __m256i flip = _mm256_and_si256(byte_to_lane_mask(signs), _mm256_set1_epi32(INT32_MIN));
  return _mm256_xor_ps(v, _mm256_castsi256_ps(flip));
}

// The 16 entries of a signed byte table in an xmm, for _mm_shuffle_epi8 lookups.
TARGET inline __m128i table16(const std::int8_t* t) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(t));
}

using simd::tail;

}  // namespace

// --- plain types (§2) --------------------------------------------------------------------------

TARGET void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 32 <= n_blocks; i += 32) {
    UNROLL
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_ps(dst + i + 8 * k, _mm256_cvtph_ps(load128(src + 2 * (i + 8 * k))));
    }
  }
  for (; i + 8 <= n_blocks; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(load128(src + 2 * i)));
  tail(kernels::dequantize_f16, src, dst, i, n_blocks, 2);
}

TARGET void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(load128(src + 2 * i)), 16);
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(w));
  }
  tail(kernels::dequantize_bf16, src, dst, i, n_blocks, 2);
}

// cvtpd2ps rounds to nearest even (the default MXCSR), as the C cast of the reference does.
TARGET void dequantize_f64(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    const __m128 lo =
        _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i)));
    const __m128 hi =
        _mm256_cvtpd_ps(_mm256_loadu_pd(reinterpret_cast<const double*>(src + 8 * i + 32)));
    _mm256_storeu_ps(dst + i, _mm256_set_m128(hi, lo));
  }
  tail(kernels::dequantize_f64, src, dst, i, n_blocks, 8);
}

TARGET void dequantize_i8(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) _mm256_storeu_ps(dst + i, i8_to_ps(load64(src + i)));
  tail(kernels::dequantize_i8, src, dst, i, n_blocks, 1);
}

TARGET void dequantize_i16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(load128(src + 2 * i))));
  }
  tail(kernels::dequantize_i16, src, dst, i, n_blocks, 2);
}

// cvtdq2ps rounds to nearest even (the default MXCSR), as the C cast of the reference does.
TARGET void dequantize_i32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtepi32_ps(load256(src + 4 * i)));
  }
  tail(kernels::dequantize_i32, src, dst, i, n_blocks, 4);
}

// --- legacy 32-element blocks (§3) --------------------------------------------------------------

TARGET void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m256i q = _mm256_sub_epi8(nibbles(load128(src + 2)), _mm256_set1_epi8(8));
    store_i8_mul(dst, q, bcast_half(src));
  }
}

TARGET void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    store_u8_mul_add(dst, nibbles(load128(src + 4)), bcast_half(src), bcast_half(src + 2));
  }
}

TARGET void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const __m256i q5 =
        _mm256_or_si256(nibbles(load128(src + 6)), bits_to_bytes_0x10(load_u32(src + 2)));
    store_i8_mul(dst, _mm256_sub_epi8(q5, _mm256_set1_epi8(16)), bcast_half(src));
  }
}

TARGET void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const __m256i q5 =
        _mm256_or_si256(nibbles(load128(src + 8)), bits_to_bytes_0x10(load_u32(src + 4)));
    store_u8_mul_add(dst, q5, bcast_half(src), bcast_half(src + 2));
  }
}

TARGET void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const __m256 d = bcast_half(src);
    UNROLL
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(i8_to_ps(load64(src + 2 + 8 * k)), d));
    }
  }
}

// --- K-quants (§4) ------------------------------------------------------------------------------

namespace {

// y[0..15] = dl × float(q[k]) − ml for 16 unsigned bytes q (Q2_K's order of operations).
TARGET inline void store16_mul_sub(float* y, __m128i q, __m256 dl, __m256 ml) {
  _mm256_storeu_ps(y, _mm256_sub_ps(_mm256_mul_ps(dl, u8_to_ps(q)), ml));
  _mm256_storeu_ps(y + 8, _mm256_sub_ps(_mm256_mul_ps(dl, u8_to_ps(_mm_unpackhi_epi64(q, q))), ml));
}

// y[0..15] = dl × float(q[k]) for 16 signed bytes q.
TARGET inline void store16_mul(float* y, __m128i q, __m256 dl) {
  _mm256_storeu_ps(y, _mm256_mul_ps(dl, i8_to_ps(q)));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(dl, i8_to_ps(_mm_unpackhi_epi64(q, q))));
}

// d × float(sc[j]) and dmin × float(mn[j]) of the 8 sub-blocks, from a Q4_K / Q5_K block.
struct ScalesK4 {
  alignas(32) float d[8];
  alignas(32) float m[8];
};
TARGET inline void scales_k4(const std::uint8_t* block, ScalesK4& out) {
  const simd::PackedK4 p = simd::unpack_scales_k4(block + 4);
  const __m256 scf = u8_to_ps(_mm_cvtsi64_si128(static_cast<long long>(p.sc)));
  const __m256 mnf = u8_to_ps(_mm_cvtsi64_si128(static_cast<long long>(p.mn)));
  _mm256_store_ps(out.d, _mm256_mul_ps(bcast_half(block), scf));
  _mm256_store_ps(out.m, _mm256_mul_ps(bcast_half(block + 2), mnf));
}

// Bit `from` of each 32-bit lane moved to bit `to`, the other bits cleared.
TARGET inline __m256i move_bit(__m256i v, int from, int to) {
  const __m256i moved =
      from >= to ? _mm256_srli_epi32(v, from - to) : _mm256_slli_epi32(v, to - from);
  return _mm256_and_si256(moved, _mm256_set1_epi32(1 << to));
}

}  // namespace

TARGET void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i m4 = _mm_set1_epi8(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 84, dst += 256) {
    const __m128i sc = load128(src);
    const __m128i sc_lo = _mm_and_si128(sc, m4), sc_hi = _mm_and_si128(_mm_srli_epi16(sc, 4), m4);
    const __m256 d = bcast_half(src + 80), dmin = bcast_half(src + 82);
    alignas(32) float dl[16], ml[16];
    _mm256_store_ps(dl, _mm256_mul_ps(d, u8_to_ps(sc_lo)));
    _mm256_store_ps(dl + 8, _mm256_mul_ps(d, u8_to_ps(_mm_unpackhi_epi64(sc_lo, sc_lo))));
    _mm256_store_ps(ml, _mm256_mul_ps(dmin, u8_to_ps(sc_hi)));
    _mm256_store_ps(ml + 8, _mm256_mul_ps(dmin, u8_to_ps(_mm_unpackhi_epi64(sc_hi, sc_hi))));
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m256i x = load256(src + 16 + 32 * h);
      UNROLL
      for (int p = 0; p < 4; ++p) {
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(x, 2 * p), _mm256_set1_epi8(3));
        const int s = 8 * h + 2 * p;
        float* y = dst + 128 * h + 32 * p;
        store16_mul_sub(y, _mm256_castsi256_si128(q), _mm256_broadcast_ss(dl + s),
                        _mm256_broadcast_ss(ml + s));
        store16_mul_sub(y + 16, _mm256_extracti128_si256(q, 1), _mm256_broadcast_ss(dl + s + 1),
                        _mm256_broadcast_ss(ml + s + 1));
      }
    }
  }
}

TARGET void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 110, dst += 256) {
    const simd::PackedQ3K packed = simd::unpack_scales_q3_k(src + 96);
    const __m128i s = _mm_sub_epi8(
        _mm_set_epi64x(static_cast<long long>(packed.hi), static_cast<long long>(packed.lo)),
        _mm_set1_epi8(32));
    const __m256 d = bcast_half(src + 108);
    alignas(32) float dl[16];
    _mm256_store_ps(dl, _mm256_mul_ps(d, i8_to_ps(s)));
    _mm256_store_ps(dl + 8, _mm256_mul_ps(d, i8_to_ps(_mm_unpackhi_epi64(s, s))));
    const __m256i hmask = load256(src);
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m256i x = load256(src + 32 + 32 * h);
      UNROLL
      for (int p = 0; p < 4; ++p) {
        // value = q − 4 + 4 × (hmask bit 4h + p): the bit moved to bit 2 of each byte.
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(x, 2 * p), _mm256_set1_epi8(3));
        const int k = 4 * h + p;
        const __m256i hb =
            k <= 2 ? _mm256_slli_epi16(hmask, 2 - k) : _mm256_srli_epi16(hmask, k - 2);
        const __m256i v = _mm256_sub_epi8(
            _mm256_or_si256(q, _mm256_and_si256(hb, _mm256_set1_epi8(4))), _mm256_set1_epi8(4));
        const int i = 8 * h + 2 * p;
        float* y = dst + 128 * h + 32 * p;
        store16_mul(y, _mm256_castsi256_si128(v), _mm256_broadcast_ss(dl + i));
        store16_mul(y + 16, _mm256_extracti128_si256(v, 1), _mm256_broadcast_ss(dl + i + 1));
      }
    }
  }
}

// Chunk c of 64 elements: 8 bytes of qs at a time, zero-extended to 32-bit lanes; the low
// nibble is element 64c + l (sub-block 2c), the high one element 64c + 32 + l (sub-block 2c + 1).
TARGET void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m256i m4 = _mm256_set1_epi32(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 144, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m256 d1 = _mm256_broadcast_ss(s.d + 2 * c), m1 = _mm256_broadcast_ss(s.m + 2 * c);
      const __m256 d2 = _mm256_broadcast_ss(s.d + 2 * c + 1);
      const __m256 m2 = _mm256_broadcast_ss(s.m + 2 * c + 1);
      float* y = dst + 64 * c;
      UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m256i v = _mm256_cvtepu8_epi32(load64(src + 16 + 32 * c + 8 * k));
        const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(v, m4));
        const __m256 hi = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
        _mm256_storeu_ps(y + 8 * k, _mm256_sub_ps(_mm256_mul_ps(d1, lo), m1));
        _mm256_storeu_ps(y + 32 + 8 * k, _mm256_sub_ps(_mm256_mul_ps(d2, hi), m2));
      }
    }
  }
}

// As Q4_K, plus bit 2c (2c + 1) of qh[l] as the +16 of the low (high) nibble.
TARGET void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m256i m4 = _mm256_set1_epi32(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 176, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    __m256i qh[4];
    UNROLL
    for (int k = 0; k < 4; ++k) qh[k] = _mm256_cvtepu8_epi32(load64(src + 16 + 8 * k));
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m256 d1 = _mm256_broadcast_ss(s.d + 2 * c), m1 = _mm256_broadcast_ss(s.m + 2 * c);
      const __m256 d2 = _mm256_broadcast_ss(s.d + 2 * c + 1);
      const __m256 m2 = _mm256_broadcast_ss(s.m + 2 * c + 1);
      float* y = dst + 64 * c;
      UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m256i v = _mm256_cvtepu8_epi32(load64(src + 48 + 32 * c + 8 * k));
        const __m256i q_lo = _mm256_or_si256(_mm256_and_si256(v, m4), move_bit(qh[k], 2 * c, 4));
        const __m256i q_hi =
            _mm256_or_si256(_mm256_srli_epi32(v, 4), move_bit(qh[k], 2 * c + 1, 4));
        _mm256_storeu_ps(y + 8 * k, _mm256_sub_ps(_mm256_mul_ps(d1, _mm256_cvtepi32_ps(q_lo)), m1));
        _mm256_storeu_ps(y + 32 + 8 * k,
                         _mm256_sub_ps(_mm256_mul_ps(d2, _mm256_cvtepi32_ps(q_hi)), m2));
      }
    }
  }
}

TARGET void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(0x30), bias = _mm256_set1_epi8(32);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 210, dst += 256) {
    // d × float(scale) of the 16 sub-blocks of 16: the product the doc takes first.
    const __m256 d = bcast_half(src + 208);
    alignas(32) float ds[16];
    _mm256_store_ps(ds, _mm256_mul_ps(d, i8_to_ps(load64(src + 192))));
    _mm256_store_ps(ds + 8, _mm256_mul_ps(d, i8_to_ps(load64(src + 200))));
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m256i l0 = load256(src + 64 * h), l1 = load256(src + 64 * h + 32);
      const __m256i qh = load256(src + 128 + 32 * h);
      // Element 32i + l: 4 low bits from ql, bits 2i, 2i + 1 of qh[l] as bits 4, 5.
      const __m256i q[4] = {
          _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m2)),
          _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m2)),
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                          _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2)),
      };
      UNROLL
      for (int i = 0; i < 4; ++i) {
        const __m256i v = _mm256_sub_epi8(q[i], bias);
        float* y = dst + 128 * h + 32 * i;
        const float* sc = ds + 8 * h + 2 * i;
        store16_mul(y, _mm256_castsi256_si128(v), _mm256_broadcast_ss(sc));
        store16_mul(y + 16, _mm256_extracti128_si256(v, 1), _mm256_broadcast_ss(sc + 1));
      }
    }
  }
}

// --- the other types (§6, §7, §9–§11) ------------------------------------------------------------

TARGET void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 32) {
    const __m256 d = bcast_half(src);
    UNROLL
    for (int k = 0; k < 4; ++k) {
      _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(i8_to_ps(load64(src + 4 + 8 * k)), d));
    }
  }
}

TARGET void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 292, dst += 256) {
    const __m256 d = _mm256_set1_ps(load_f32(src));
    UNROLL
    for (int k = 0; k < 32; ++k) {
      _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(d, i8_to_ps(load64(src + 4 + 8 * k))));
    }
  }
}

TARGET void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table = table16(tables::kValuesIq4nl.data());
  const __m128i m4 = _mm_set1_epi8(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m128i x = load128(src + 2);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(x, m4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(x, 4), m4));
    const __m256 d = bcast_half(src);
    store16_mul(dst, lo, d);
    store16_mul(dst + 16, hi, d);
  }
}

TARGET void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table = table16(tables::kValuesIq4nl.data());
  const __m128i m4 = _mm_set1_epi8(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 136, dst += 256) {
    const float d = _cvtsh_ss(load_u16(src));
    const unsigned scales_h = load_u16(src + 2);
    UNROLL
    for (int g = 0; g < 8; ++g) {
      const int ls = static_cast<int>(((src[4 + g / 2] >> (4 * (g % 2))) & 15) |
                                      ((scales_h >> (2 * g)) & 3) << 4);
      const __m256 dl = _mm256_set1_ps(d * static_cast<float>(ls - 32));
      const __m128i x = load128(src + 8 + 16 * g);
      store16_mul(dst + 32 * g, _mm_shuffle_epi8(table, _mm_and_si128(x, m4)), dl);
      store16_mul(dst + 32 * g + 16,
                  _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(x, 4), m4)), dl);
    }
  }
}

namespace {

// y[0..15] = float(table[nibble]) × scale for the low then the high nibbles of 8 bytes (FP4).
TARGET inline void store_fp4_8(float* y, __m128i x, __m128i table, __m256 scale) {
  const __m128i m4 = _mm_set1_epi8(15);
  const __m128i v = _mm_shuffle_epi8(
      table, _mm_unpacklo_epi64(_mm_and_si128(x, m4), _mm_and_si128(_mm_srli_epi16(x, 4), m4)));
  _mm256_storeu_ps(y, _mm256_mul_ps(i8_to_ps(v), scale));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(i8_to_ps(_mm_unpackhi_epi64(v, v)), scale));
}

}  // namespace

TARGET void dequantize_mxfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table = table16(tables::kValuesFp4.data());
  const __m128i m4 = _mm_set1_epi8(15);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 17, dst += 32) {
    const __m256 scale = _mm256_set1_ps(simd::e8m0_scale(src[0]));
    const __m128i x = load128(src + 1);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(x, m4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(x, 4), m4));
    UNROLL
    for (int k = 0; k < 2; ++k) {
      const __m128i v = k == 0 ? lo : hi;
      _mm256_storeu_ps(dst + 16 * k, _mm256_mul_ps(i8_to_ps(v), scale));
      _mm256_storeu_ps(dst + 16 * k + 8, _mm256_mul_ps(i8_to_ps(_mm_unpackhi_epi64(v, v)), scale));
    }
  }
}

TARGET void dequantize_nvfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table = table16(tables::kValuesFp4.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 64) {
    UNROLL
    for (int s = 0; s < 4; ++s) {
      const __m256 scale = _mm256_set1_ps(simd::kUe4m3Half.v[src[s]]);
      store_fp4_8(dst + 16 * s, load64(src + 4 + 8 * s), table, scale);
    }
  }
}

TARGET void dequantize_q1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 128) {
    const __m256 d = bcast_half(src);
    const __m256 neg_d = _mm256_xor_ps(d, _mm256_set1_ps(-0.0f));
    UNROLL
    for (int k = 0; k < 16; ++k) {
      const __m256 set = _mm256_castsi256_ps(byte_to_lane_mask(src[2 + k]));
      _mm256_storeu_ps(dst + 8 * k, _mm256_blendv_ps(neg_d, d, set));
    }
  }
}

TARGET void dequantize_q2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m256i shifts = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 64) {
    const __m256 d = bcast_half(src);
    UNROLL
    for (int k = 0; k < 8; ++k) {
      // Elements 8k .. 8k+7: the 2-bit fields of bytes 2k, 2k + 1 in order.
      const __m256i v = _mm256_srlv_epi32(_mm256_set1_epi32(load_u16(src + 2 + 2 * k)), shifts);
      const __m256i q =
          _mm256_sub_epi32(_mm256_and_si256(v, _mm256_set1_epi32(3)), _mm256_set1_epi32(1));
      _mm256_storeu_ps(dst + 8 * k, _mm256_mul_ps(_mm256_cvtepi32_ps(q), d));
    }
  }
}

TARGET void dequantize_tq2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 66) {
    const __m256 d = bcast_half(src + 64);
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m256i x = load256(src + 32 * h);
      UNROLL
      for (int p = 0; p < 4; ++p, dst += 32) {
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(x, 2 * p), _mm256_set1_epi8(3));
        store_i8_mul(dst, _mm256_sub_epi8(q, _mm256_set1_epi8(1)), d);
      }
    }
  }
}

namespace {

// TQ1_0: 16 bytes (as 16-bit lanes) → ternary digit n of each, minus 1, times d, in order.
// digit = (((b × 3^n) mod 256) × 3) >> 8 (§9).
TARGET inline void store_tq1_digits(float* y, __m256i b16, __m256i pow3, __m256 d) {
  const __m256i t = _mm256_and_si256(_mm256_mullo_epi16(b16, pow3), _mm256_set1_epi16(255));
  const __m256i digit = _mm256_srli_epi16(_mm256_mullo_epi16(t, _mm256_set1_epi16(3)), 8);
  const __m256i v = _mm256_sub_epi16(digit, _mm256_set1_epi16(1));
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(lo)), d));
  _mm256_storeu_ps(y + 8, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(hi)), d));
}

}  // namespace

TARGET void dequantize_tq1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  static constexpr short kPow3[5] = {1, 3, 9, 27, 81};
  for (std::size_t b = 0; b < n_blocks; ++b, src += 54, dst += 256) {
    const __m256 d = bcast_half(src + 52);
    const __m256i a0 = _mm256_cvtepu8_epi16(load128(src)),
                  a1 = _mm256_cvtepu8_epi16(load128(src + 16));
    const __m256i a2 = _mm256_cvtepu8_epi16(load128(src + 32));
    UNROLL
    for (int n = 0; n < 5; ++n) {
      const __m256i pow3 = _mm256_set1_epi16(kPow3[n]);
      store_tq1_digits(dst + 32 * n, a0, pow3, d);        // qs[0..15]
      store_tq1_digits(dst + 32 * n + 16, a1, pow3, d);   // qs[16..31]
      store_tq1_digits(dst + 160 + 16 * n, a2, pow3, d);  // qs[32..47]
    }
    // qh[0..3], digits 0..3: lane i is digit i / 4 of qh[i % 4].
    const __m256i a3 = _mm256_cvtepu8_epi16(_mm_set1_epi32(static_cast<int>(load_u32(src + 48))));
    store_tq1_digits(dst + 240, a3,
                     _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27), d);
  }
}

// --- i-quants with grids (§8): the block walks of iquant_grids.h with AVX2 group writers ------

namespace {

// Anonymous namespace: the walks instantiated with these writers stay local to this file.
struct Avx2Groups {
  // y[0..7] = (db × float(grid byte j)) × (±1), negated where bit j of `signs` is set.
  TARGET static void signed_group(float* y, float db, std::uint64_t grid, unsigned signs) {
    const __m256 g = u8_to_ps(_mm_cvtsi64_si128(static_cast<long long>(grid)));
    _mm256_storeu_ps(y, apply_signs(_mm256_mul_ps(_mm256_set1_ps(db), g), signs));
  }
  // y[0..7] = dl × (float(grid byte j, signed) + delta).
  TARGET static void iq1_group(float* y, float dl, std::uint64_t grid, float delta) {
    const __m256 g = i8_to_ps(_mm_cvtsi64_si128(static_cast<long long>(grid)));
    _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_set1_ps(dl), _mm256_add_ps(g, _mm256_set1_ps(delta))));
  }
  TARGET static float half(std::uint16_t bits) { return _cvtsh_ss(bits); }
};

}  // namespace

TARGET void dequantize_iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xxs<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq2_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xs<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq2_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_s<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_xxs<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq3_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_s<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq1_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_s<Avx2Groups>(src, dst, n_blocks);
}

TARGET void dequantize_iq1_m(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_m<Avx2Groups>(src, dst, n_blocks);
}

// --- float → half, the f16/ view (ggufs/half.h) -------------------------------------------------

TARGET void floats_to_halves_as_numpy(const float* in, std::size_t n, std::uint16_t* out) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    const __m256i nan =
        _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_castps_si256(v), magnitude), inf);
    if (!_mm256_testz_si256(nan, nan)) {
      for (std::size_t k = i; k < i + 8; ++k) out[k] = ggufs::float_to_half_as_numpy(in[k]);
      continue;
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) out[i] = ggufs::float_to_half_as_numpy(in[i]);
}

// torch's round_to_nearest_even on each 32-bit lane: u + 0x7fff + the kept part's lowest bit,
// shifted down 16; any NaN 0x7fc0.
TARGET inline __m256i bf16_lanes(__m256i u) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i r =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                            _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), is_nan);
}

// Sixteen at a time: two groups of eight lanes packed to 16 bits (no lane exceeds 0xffff, which
// packus keeps), put back in order after packus's per-128-bit halves.
TARGET void floats_to_bf16_as_torch(const float* in, std::size_t n, std::uint16_t* out) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = bf16_lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    const __m256i b = bf16_lanes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 8)));
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  for (; i < n; ++i) out[i] = ggufs::float_to_bf16_as_torch(in[i]);
}

#undef TARGET
#undef UNROLL

}  // namespace ggufs::kernels::avx2

#endif  // GGUFS_X86_KERNELS
