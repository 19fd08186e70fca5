// AVX-512 (F, BW, VL, DQ) block decoders (x86-64): sixteen floats at a time, with the same float
// operations in the same order as the reference decoders (ggml-types.md §2–§5), so the output
// bits are identical. Types without a decoder here use the AVX2 one at this level.
//
// The main device is a 16-entry float table looked up with vpermps (_mm512_permutexvar_ps, which
// reads only the low 4 bits of each index): where a block or sub-block maps a 4-bit code to
// `d × float(code) − m` (or similar), the 16 possible outputs are computed once, with exactly the
// reference's operations, and every element is then one lookup. A fifth bit selects between two
// such tables with a mask.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "ggufs/ggml_tables.h"
#include "ggufs/kernels.h"
#include "kernels_x86.h"
#include "le_load.h"

#if GGUFS_X86_KERNELS

// GCC 12's AVX-512 intrinsics report their own _mm512_undefined_*() as "used uninitialized"
// (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace ggufs::kernels::avx512 {

namespace {

#define TARGET GGUFS_TARGET_AVX512
// Fixed short loops are unrolled fully: shift counts and offsets become constants.
#define UNROLL _Pragma("GCC unroll 32")

// --- helpers -----------------------------------------------------------------------------------

// Lanes [0, n) of 16 (n ≤ 16).
inline __mmask16 first_lanes(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1); }

// The half at p, converted (exactly, by F16C) and broadcast to 16 lanes.
TARGET inline __m512 bcast_half(const std::uint8_t* p) {
  return _mm512_set1_ps(_cvtsh_ss(load_u16(p)));
}

TARGET inline __m128i load128(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
TARGET inline __m256i load256(const std::uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// 16 bytes at p zero-extended to 32-bit lanes.
TARGET inline __m512i u8x16(const std::uint8_t* p) { return _mm512_cvtepu8_epi32(load128(p)); }
// 16 signed bytes at p converted to float.
TARGET inline __m512 i8x16_to_ps(const std::uint8_t* p) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(load128(p)));
}

// float(i) in lane i.
TARGET inline __m512 iota() {
  return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
// float(i & 3) in lane i: the 2-bit code of a lookup index whose bits 2, 3 are another field's.
TARGET inline __m512 iota2() {
  return _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
}
// Lane i = float(t[i]) for a table of 16 signed bytes.
TARGET inline __m512 table_ps(const std::int8_t* t) {
  return i8x16_to_ps(reinterpret_cast<const std::uint8_t*>(t));
}

// table[idx & 15] in each lane.
TARGET inline __m512 lookup(__m512i idx, __m512 table) { return _mm512_permutexvar_ps(idx, table); }
// (bit set in m ? hi : lo)[idx & 15] in each lane: a 5-bit code's table in two halves.
TARGET inline __m512 lookup32(__m512i idx, __mmask16 m, __m512 lo, __m512 hi) {
  return _mm512_mask_permutexvar_ps(_mm512_permutexvar_ps(idx, lo), m, idx, hi);
}

TARGET inline void store(float* y, __m512 v) { _mm512_storeu_ps(y, v); }

// 16 bfloat16 → float: each becomes the upper half of a float.
TARGET inline __m512 widen(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

}  // namespace

// --- plain types (§2) --------------------------------------------------------------------------
// Whole vectors with ordinary loads and stores (masked stores are slow on some CPUs), then one
// masked vector for the tail.

TARGET void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 64 <= n_blocks; i += 64) {
    UNROLL
    for (int k = 0; k < 4; ++k)
      store(dst + i + 16 * k, _mm512_cvtph_ps(load256(src + 2 * (i + 16 * k))));
  }
  for (; i + 16 <= n_blocks; i += 16) store(dst + i, _mm512_cvtph_ps(load256(src + 2 * i)));
  if (i < n_blocks) {
    const __mmask16 m = first_lanes(n_blocks - i);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, src + 2 * i)));
  }
}

TARGET void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 64 <= n_blocks; i += 64) {
    UNROLL
    for (int k = 0; k < 4; ++k) store(dst + i + 16 * k, widen(load256(src + 2 * (i + 16 * k))));
  }
  for (; i + 16 <= n_blocks; i += 16) store(dst + i, widen(load256(src + 2 * i)));
  if (i < n_blocks) {
    const __mmask16 m = first_lanes(n_blocks - i);
    _mm512_mask_storeu_ps(dst + i, m, widen(_mm256_maskz_loadu_epi16(m, src + 2 * i)));
  }
}

// cvtqq2ps rounds to nearest even (the default MXCSR), as the C cast of the reference does.
TARGET void dequantize_i64(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    _mm256_storeu_ps(dst + i, _mm512_cvtepi64_ps(_mm512_loadu_si512(src + 8 * i)));
  }
  if (i < n_blocks) {
    const auto m = static_cast<__mmask8>(first_lanes(n_blocks - i));
    _mm256_mask_storeu_ps(dst + i, m, _mm512_cvtepi64_ps(_mm512_maskz_loadu_epi64(m, src + 8 * i)));
  }
}

// --- legacy 32-element blocks (§3) --------------------------------------------------------------
// Low nibble of qs[j] → element j, high nibble → element j + 16: one zero-extension of the 16
// bytes, the high nibbles by a shift (the lookup ignores bits above the low 4).

TARGET void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes = _mm512_sub_ps(iota(), _mm512_set1_ps(8));  // float(q − 8), exact
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m512 table = _mm512_mul_ps(codes, bcast_half(src));  // float(q − 8) × d
    const __m512i v = u8x16(src + 2);
    store(dst, lookup(v, table));
    store(dst + 16, lookup(_mm512_srli_epi32(v, 4), table));
  }
}

TARGET void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const __m512 table = _mm512_add_ps(_mm512_mul_ps(iota(), bcast_half(src)), bcast_half(src + 2));
    const __m512i v = u8x16(src + 4);
    store(dst, lookup(v, table));
    store(dst + 16, lookup(_mm512_srli_epi32(v, 4), table));
  }
}

TARGET void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes_lo = _mm512_sub_ps(iota(), _mm512_set1_ps(16));  // float(q − 16), q < 16
  for (std::size_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const __m512 d = bcast_half(src);
    const __m512 lo = _mm512_mul_ps(codes_lo, d), hi = _mm512_mul_ps(iota(), d);
    const std::uint32_t qh = load_u32(src + 2);
    const __m512i v = u8x16(src + 6);
    store(dst, lookup32(v, static_cast<__mmask16>(qh), lo, hi));
    store(dst + 16, lookup32(_mm512_srli_epi32(v, 4), static_cast<__mmask16>(qh >> 16), lo, hi));
  }
}

TARGET void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes_hi = _mm512_add_ps(iota(), _mm512_set1_ps(16));  // float(q), q ≥ 16
  for (std::size_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const __m512 d = bcast_half(src), m = bcast_half(src + 2);
    const __m512 lo = _mm512_add_ps(_mm512_mul_ps(iota(), d), m);
    const __m512 hi = _mm512_add_ps(_mm512_mul_ps(codes_hi, d), m);
    const std::uint32_t qh = load_u32(src + 4);
    const __m512i v = u8x16(src + 8);
    store(dst, lookup32(v, static_cast<__mmask16>(qh), lo, hi));
    store(dst + 16, lookup32(_mm512_srli_epi32(v, 4), static_cast<__mmask16>(qh >> 16), lo, hi));
  }
}

TARGET void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const __m512 d = bcast_half(src);
    store(dst, _mm512_mul_ps(i8x16_to_ps(src + 2), d));
    store(dst + 16, _mm512_mul_ps(i8x16_to_ps(src + 18), d));
  }
}

// --- K-quants (§4) ------------------------------------------------------------------------------

TARGET void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 84, dst += 256) {
    // dl = d × float(scale & 15), ml = dmin × float(scale >> 4) of the 16 sub-blocks.
    const __m512i sc = u8x16(src);
    alignas(64) float dl[16], ml[16];
    _mm512_store_ps(dl, _mm512_mul_ps(bcast_half(src + 80), _mm512_cvtepi32_ps(_mm512_and_si512(
                                                                sc, _mm512_set1_epi32(15)))));
    _mm512_store_ps(
        ml, _mm512_mul_ps(bcast_half(src + 82), _mm512_cvtepi32_ps(_mm512_srli_epi32(sc, 4))));
    UNROLL
    for (int h = 0; h < 2; ++h) {
      UNROLL
      for (int k = 0; k < 2; ++k) {  // l = 16k .. 16k + 15
        const __m512i v = u8x16(src + 16 + 32 * h + 16 * k);
        UNROLL
        for (int p = 0; p < 4; ++p) {
          const int s = 8 * h + 2 * p + k;
          const __m512 q = lookup(_mm512_srli_epi32(v, 2 * p), iota2());
          store(dst + 128 * h + 32 * p + 16 * k,
                _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(dl[s]), q), _mm512_set1_ps(ml[s])));
        }
      }
    }
  }
}

TARGET void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes = _mm512_sub_ps(iota2(), _mm512_set1_ps(4));  // float(q − 4)
  const __m512 four = _mm512_set1_ps(4);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 110, dst += 256) {
    const simd::PackedQ3K packed = simd::unpack_scales_q3_k(src + 96);
    const __m128i s = _mm_sub_epi8(
        _mm_set_epi64x(static_cast<long long>(packed.hi), static_cast<long long>(packed.lo)),
        _mm_set1_epi8(32));
    alignas(64) float dl[16];  // d × float(S[i])
    _mm512_store_ps(
        dl, _mm512_mul_ps(bcast_half(src + 108), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(s))));
    const __m256i hmask = load256(src);
    UNROLL
    for (int h = 0; h < 2; ++h) {
      UNROLL
      for (int p = 0; p < 4; ++p) {
        // Bit 4h + p of hmask[l] set: the value is q instead of q − 4 (+4, exact).
        const __mmask32 high =
            _mm256_test_epi8_mask(hmask, _mm256_set1_epi8(static_cast<char>(1 << (4 * h + p))));
        UNROLL
        for (int k = 0; k < 2; ++k) {
          const __m512i v = u8x16(src + 32 + 32 * h + 16 * k);
          const __m512 base = lookup(_mm512_srli_epi32(v, 2 * p), codes);
          const __m512 value =
              _mm512_mask_add_ps(base, static_cast<__mmask16>(high >> (16 * k)), base, four);
          const int i = 8 * h + 2 * p + k;
          store(dst + 128 * h + 32 * p + 16 * k, _mm512_mul_ps(_mm512_set1_ps(dl[i]), value));
        }
      }
    }
  }
}

namespace {

// d × float(sc[j]) and dmin × float(mn[j]) of the 8 sub-blocks of a Q4_K / Q5_K block.
struct ScalesK4 {
  alignas(32) float d[8];
  alignas(32) float m[8];
};
TARGET inline void scales_k4(const std::uint8_t* block, ScalesK4& out) {
  const simd::PackedK4 p = simd::unpack_scales_k4(block + 4);
  const __m256 scf =
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(p.sc))));
  const __m256 mnf =
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(p.mn))));
  _mm256_store_ps(out.d, _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(load_u16(block))), scf));
  _mm256_store_ps(out.m, _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(load_u16(block + 2))), mnf));
}

// The outputs of codes 0..15 of sub-block j: d1 × float(q) − m1.
TARGET inline __m512 k4_table(const ScalesK4& s, int j, __m512 codes) {
  return _mm512_sub_ps(_mm512_mul_ps(_mm512_set1_ps(s.d[j]), codes), _mm512_set1_ps(s.m[j]));
}

}  // namespace

TARGET void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 144, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m512 lo = k4_table(s, 2 * c, iota()), hi = k4_table(s, 2 * c + 1, iota());
      UNROLL
      for (int k = 0; k < 2; ++k) {
        const __m512i v = u8x16(src + 16 + 32 * c + 16 * k);
        store(dst + 64 * c + 16 * k, lookup(v, lo));
        store(dst + 64 * c + 32 + 16 * k, lookup(_mm512_srli_epi32(v, 4), hi));
      }
    }
  }
}

TARGET void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes_hi = _mm512_add_ps(iota(), _mm512_set1_ps(16));
  for (std::size_t b = 0; b < n_blocks; ++b, src += 176, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    const __m256i qh = load256(src + 16);
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m512 lo0 = k4_table(s, 2 * c, iota()), lo1 = k4_table(s, 2 * c, codes_hi);
      const __m512 hi0 = k4_table(s, 2 * c + 1, iota()), hi1 = k4_table(s, 2 * c + 1, codes_hi);
      // Bit 2c (2c + 1) of qh[l]: the +16 of the low (high) nibble of element l.
      const __mmask32 m_lo =
          _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * c))));
      const __mmask32 m_hi =
          _mm256_test_epi8_mask(qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * c))));
      UNROLL
      for (int k = 0; k < 2; ++k) {
        const __m512i v = u8x16(src + 48 + 32 * c + 16 * k);
        store(dst + 64 * c + 16 * k,
              lookup32(v, static_cast<__mmask16>(m_lo >> (16 * k)), lo0, lo1));
        store(
            dst + 64 * c + 32 + 16 * k,
            lookup32(_mm512_srli_epi32(v, 4), static_cast<__mmask16>(m_hi >> (16 * k)), hi0, hi1));
      }
    }
  }
}

// The 6-bit quants are assembled 64 bytes at a time in byte lanes ([q0 | q1] and [q2 | q3] of
// §4, each minus 32), staged in memory, then widened 16 at a time.
TARGET void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512i m4 = _mm512_set1_epi8(15), m2 = _mm512_set1_epi8(0x30), bias = _mm512_set1_epi8(32);
  // qh bits 0, 1 (2, 3) to bits 4, 5 for the first (second) 32 bytes; bits 4, 5 (6, 7) likewise.
  const __m512i shift_a = _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4);
  const __m512i shift_b = _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 210, dst += 256) {
    const __m512 d = bcast_half(src + 208);
    alignas(64) float ds[16];  // d × float(scale), the product taken first
    _mm512_store_ps(ds, _mm512_mul_ps(d, i8x16_to_ps(src + 192)));
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m512i l = _mm512_loadu_si512(src + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(load256(src + 128 + 32 * h));
      alignas(64) std::int8_t q[128];  // q0, q1, q2, q3 of §4, 32 each
      const __m512i a = _mm512_or_si512(_mm512_and_si512(l, m4),
                                        _mm512_and_si512(_mm512_sllv_epi64(qh, shift_a), m2));
      const __m512i c = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(l, 4), m4),
                                        _mm512_and_si512(_mm512_srlv_epi64(qh, shift_b), m2));
      _mm512_store_si512(q, _mm512_sub_epi8(a, bias));
      _mm512_store_si512(q + 64, _mm512_sub_epi8(c, bias));
      UNROLL
      for (int k = 0; k < 8; ++k) {  // elements 16k .. 16k + 15 of the half, scale index k
        const __m512 v = i8x16_to_ps(reinterpret_cast<const std::uint8_t*>(q + 16 * k));
        store(dst + 128 * h + 16 * k, _mm512_mul_ps(_mm512_set1_ps(ds[8 * h + k]), v));
      }
    }
  }
}

// --- the other types (§5) -----------------------------------------------------------------------

TARGET void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 32) {
    const __m512 d = bcast_half(src);
    store(dst, _mm512_mul_ps(i8x16_to_ps(src + 4), d));
    store(dst + 16, _mm512_mul_ps(i8x16_to_ps(src + 20), d));
  }
}

TARGET void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 292, dst += 256) {
    const __m512 d = _mm512_set1_ps(load_f32(src));
    UNROLL
    for (int k = 0; k < 16; ++k)
      store(dst + 16 * k, _mm512_mul_ps(d, i8x16_to_ps(src + 4 + 16 * k)));
  }
}

TARGET void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 values = table_ps(tables::kValuesIq4nl.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m512 table = _mm512_mul_ps(bcast_half(src), values);  // d × float(K[q])
    const __m512i v = u8x16(src + 2);
    store(dst, lookup(v, table));
    store(dst + 16, lookup(_mm512_srli_epi32(v, 4), table));
  }
}

TARGET void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 values = table_ps(tables::kValuesIq4nl.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 136, dst += 256) {
    const float d = _cvtsh_ss(load_u16(src));
    const unsigned scales_h = load_u16(src + 2);
    UNROLL
    for (int g = 0; g < 8; ++g) {
      const int ls = static_cast<int>(((src[4 + g / 2] >> (4 * (g % 2))) & 15) |
                                      ((scales_h >> (2 * g)) & 3) << 4);
      const __m512 table = _mm512_mul_ps(_mm512_set1_ps(d * static_cast<float>(ls - 32)), values);
      const __m512i v = u8x16(src + 8 + 16 * g);
      store(dst + 32 * g, lookup(v, table));
      store(dst + 32 * g + 16, lookup(_mm512_srli_epi32(v, 4), table));
    }
  }
}

TARGET void dequantize_mxfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 values = table_ps(tables::kValuesFp4.data());
  for (std::size_t b = 0; b < n_blocks; ++b, src += 17, dst += 32) {
    const __m512 table = _mm512_mul_ps(values, _mm512_set1_ps(simd::e8m0_scale(src[0])));
    const __m512i v = u8x16(src + 1);
    store(dst, lookup(v, table));
    store(dst + 16, lookup(_mm512_srli_epi32(v, 4), table));
  }
}

// Sub-block s: lanes 0..7 are the low nibbles of qs[8s .. 8s+7], lanes 8..15 the high ones.
TARGET void dequantize_nvfp4(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 values = table_ps(tables::kValuesFp4.data());
  const __m512i shifts = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4, 4, 4, 4, 4);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 64) {
    UNROLL
    for (int s = 0; s < 4; ++s) {
      const __m512 table = _mm512_mul_ps(values, _mm512_set1_ps(simd::kUe4m3Half.v[src[s]]));
      const __m128i bytes = _mm_set1_epi64x(static_cast<long long>(load_u64(src + 4 + 8 * s)));
      const __m512i v = _mm512_srlv_epi32(_mm512_cvtepu8_epi32(bytes), shifts);
      store(dst + 16 * s, lookup(v, table));
    }
  }
}

TARGET void dequantize_q1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 128) {
    const __m512 d = bcast_half(src);
    const __m512 neg_d =
        _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(d), _mm512_set1_epi32(INT32_MIN)));
    UNROLL
    for (int k = 0; k < 8; ++k) {
      // Bit j of the 16-bit word at 2 + 2k is element 16k + j.
      store(dst + 16 * k,
            _mm512_mask_blend_ps(static_cast<__mmask16>(load_u16(src + 2 + 2 * k)), neg_d, d));
    }
  }
}

TARGET void dequantize_q2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes = _mm512_sub_ps(iota2(), _mm512_set1_ps(1));  // float(q − 1)
  const __m512i shifts =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 64) {
    const __m512 table = _mm512_mul_ps(codes, bcast_half(src));
    UNROLL
    for (int k = 0; k < 4; ++k) {
      // Elements 16k .. 16k + 15: the 2-bit fields of the word at 2 + 4k, in order.
      const __m512i v =
          _mm512_srlv_epi32(_mm512_set1_epi32(static_cast<int>(load_u32(src + 2 + 4 * k))), shifts);
      store(dst + 16 * k, lookup(v, table));
    }
  }
}

TARGET void dequantize_tq2_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes = _mm512_sub_ps(iota2(), _mm512_set1_ps(1));  // float(q − 1)
  for (std::size_t b = 0; b < n_blocks; ++b, src += 66, dst += 256) {
    const __m512 table = _mm512_mul_ps(codes, bcast_half(src + 64));
    UNROLL
    for (int h = 0; h < 2; ++h) {
      UNROLL
      for (int k = 0; k < 2; ++k) {
        const __m512i v = u8x16(src + 32 * h + 16 * k);
        UNROLL
        for (int p = 0; p < 4; ++p)
          store(dst + 128 * h + 32 * p + 16 * k, lookup(_mm512_srli_epi32(v, 2 * p), table));
      }
    }
  }
}

namespace {

// TQ1_0 (§5): digit n of byte b is ((b × 3^n mod 256) × 3) >> 8. `t` holds b × 3^n mod 256 in
// each 32-bit lane; this returns the digit looked up in `table` (float(digit − 1) × d) and steps
// t to n + 1: with t3 = t × 3, the digit is t3 >> 8 and the next t is t3 mod 256.
TARGET inline __m512 tq1_next_digit(__m512i& t, __m512 table) {
  const __m512i t3 = _mm512_add_epi32(_mm512_slli_epi32(t, 1), t);
  t = _mm512_and_si512(t3, _mm512_set1_epi32(255));
  return lookup(_mm512_srli_epi32(t3, 8), table);
}

}  // namespace

TARGET void dequantize_tq1_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m512 codes = _mm512_sub_ps(iota(), _mm512_set1_ps(1));  // float(digit − 1)
  // qh: lane i is byte i % 4 times 3^(i / 4): digit i / 4 of qh[i % 4] after one more step.
  const __m512i pow3 = _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 54, dst += 256) {
    const __m512 table = _mm512_mul_ps(codes, bcast_half(src + 52));
    __m512i t0 = u8x16(src), t1 = u8x16(src + 16), t2 = u8x16(src + 32);
    UNROLL
    for (int n = 0; n < 5; ++n) {
      store(dst + 32 * n, tq1_next_digit(t0, table));        // qs[0..15]
      store(dst + 32 * n + 16, tq1_next_digit(t1, table));   // qs[16..31]
      store(dst + 160 + 16 * n, tq1_next_digit(t2, table));  // qs[32..47]
    }
    const __m512i qh = _mm512_cvtepu8_epi32(_mm_set1_epi32(static_cast<int>(load_u32(src + 48))));
    __m512i t3 = _mm512_and_si512(_mm512_mullo_epi32(qh, pow3), _mm512_set1_epi32(255));
    store(dst + 240, tq1_next_digit(t3, table));
  }
}

#undef TARGET
#undef UNROLL

}  // namespace ggufs::kernels::avx512

#endif  // GGUFS_X86_KERNELS
