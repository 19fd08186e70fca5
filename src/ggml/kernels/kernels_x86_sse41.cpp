// SSE4.1 block decoders (x86-64 CPUs without AVX2: older and low-end ones), four floats at a
// time, with the same float operations in the same order as the reference decoders
// (src/ggml/README.md §5–§11), so the output bits are identical. Quants are unpacked with byte
// operations (pshufb, shifts, masks), widened to 32-bit lanes, converted exactly to float and
// scaled. Without F16C, halves are converted with integer operations (F16) or by the scalar
// half_to_float (the one scale per block).
#include <cstdint>
#include <cstring>

#include "ggufs/ggml_tables.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "kernels_x86.h"
#include "le_load.h"

#if GGUFS_X86_KERNELS

#include <smmintrin.h>

namespace ggufs::kernels::sse41 {

namespace {

#define TARGET GGUFS_TARGET_SSE41
// Fixed short loops are unrolled fully: shift counts and offsets become constants.
#define UNROLL _Pragma("GCC unroll 32")

// --- helpers -----------------------------------------------------------------------------------

TARGET inline __m128 bcast_half(const std::uint8_t* p) { return _mm_set1_ps(load_half(p)); }

TARGET inline __m128i load128(const std::uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}
TARGET inline __m128i load64(const std::uint8_t* p) {
  return _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
}

// Bytes 4k .. 4k+3 of x as signed / unsigned integers converted to float.
template <int k>
TARGET inline __m128 i8_to_ps(__m128i x) {
  return _mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_srli_si128(x, 4 * k)));
}
template <int k>
TARGET inline __m128 u8_to_ps(__m128i x) {
  return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_srli_si128(x, 4 * k)));
}

TARGET inline void store(float* y, __m128 v) { _mm_storeu_ps(y, v); }

// y[0..15] = float(int8 q[k]) × d.
TARGET inline void store16_mul(float* y, __m128i q, __m128 d) {
  store(y, _mm_mul_ps(i8_to_ps<0>(q), d));
  store(y + 4, _mm_mul_ps(i8_to_ps<1>(q), d));
  store(y + 8, _mm_mul_ps(i8_to_ps<2>(q), d));
  store(y + 12, _mm_mul_ps(i8_to_ps<3>(q), d));
}

// y[0..15] = float(uint8 q[k]) × d + m (two rounded operations).
TARGET inline void store16_mul_add(float* y, __m128i q, __m128 d, __m128 m) {
  store(y, _mm_add_ps(_mm_mul_ps(u8_to_ps<0>(q), d), m));
  store(y + 4, _mm_add_ps(_mm_mul_ps(u8_to_ps<1>(q), d), m));
  store(y + 8, _mm_add_ps(_mm_mul_ps(u8_to_ps<2>(q), d), m));
  store(y + 12, _mm_add_ps(_mm_mul_ps(u8_to_ps<3>(q), d), m));
}

// y[0..15] = dl × float(uint8 q[k]) − ml (the K-quants' order).
TARGET inline void store16_mul_sub(float* y, __m128i q, __m128 dl, __m128 ml) {
  store(y, _mm_sub_ps(_mm_mul_ps(dl, u8_to_ps<0>(q)), ml));
  store(y + 4, _mm_sub_ps(_mm_mul_ps(dl, u8_to_ps<1>(q)), ml));
  store(y + 8, _mm_sub_ps(_mm_mul_ps(dl, u8_to_ps<2>(q)), ml));
  store(y + 12, _mm_sub_ps(_mm_mul_ps(dl, u8_to_ps<3>(q)), ml));
}

TARGET inline __m128i low_nibbles(__m128i x) { return _mm_and_si128(x, _mm_set1_epi8(15)); }
TARGET inline __m128i high_nibbles(__m128i x) {
  return _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(15));
}

// 16 bytes where byte k is 0x10 if bit k of the 16-bit `bits` is set, else 0 (Q5 fifth bits).
TARGET inline __m128i bits_to_bytes_0x10(unsigned bits) {
  const __m128i spread =
      _mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int>(bits)),
                       _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
  const __m128i bit = _mm_set1_epi64x(0x8040201008040201);
  return _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(spread, bit), bit), _mm_set1_epi8(0x10));
}

// Bit k (0..7) of every byte of x moved to bit `to`, the other bits cleared. The 16-bit shifts
// move bits across the byte boundary only into positions the mask clears.
TARGET inline __m128i move_bit8(__m128i x, int k, int to) {
  const __m128i v = k <= to ? _mm_slli_epi16(x, to - k) : _mm_srli_epi16(x, k - to);
  return _mm_and_si128(v, _mm_set1_epi8(static_cast<char>(1 << to)));
}

using simd::tail;

}  // namespace

// --- plain types (§2) --------------------------------------------------------------------------

TARGET void dequantize_f32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  // x86 is little-endian: the stored bytes are the floats.
  if (n_blocks != 0) std::memcpy(dst, src, 4 * n_blocks);
}

TARGET void dequantize_i8(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 16 <= n_blocks; i += 16) {
    const __m128i x = load128(src + i);
    store(dst + i, i8_to_ps<0>(x));
    store(dst + i + 4, i8_to_ps<1>(x));
    store(dst + i + 8, i8_to_ps<2>(x));
    store(dst + i + 12, i8_to_ps<3>(x));
  }
  tail(kernels::dequantize_i8, src, dst, i, n_blocks, 1);
}

TARGET void dequantize_i16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 4 <= n_blocks; i += 4) {
    store(dst + i, _mm_cvtepi32_ps(_mm_cvtepi16_epi32(load64(src + 2 * i))));
  }
  tail(kernels::dequantize_i16, src, dst, i, n_blocks, 2);
}

// cvtdq2ps rounds to nearest even (the default MXCSR), as the C cast of the reference does.
TARGET void dequantize_i32(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 4 <= n_blocks; i += 4) store(dst + i, _mm_cvtepi32_ps(load128(src + 4 * i)));
  tail(kernels::dequantize_i32, src, dst, i, n_blocks, 4);
}

// Halves without F16C, exactly as half_to_float: normal numbers rebias the exponent (+112),
// e = 31 becomes the float inf/NaN exponent with the mantissa kept, subnormals are m × 2^-24
// (an exact product with a normal result, whatever the MXCSR denormal modes).
TARGET void dequantize_f16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i exp_mask = _mm_set1_epi32(0x7c00), abs_mask = _mm_set1_epi32(0x7fff);
  std::size_t i = 0;
  for (; i + 4 <= n_blocks; i += 4) {
    const __m128i h = _mm_cvtepu16_epi32(load64(src + 2 * i));
    const __m128i e = _mm_and_si128(h, exp_mask);
    const __m128i shifted = _mm_slli_epi32(_mm_and_si128(h, abs_mask), 13);
    const __m128 normal = _mm_castsi128_ps(_mm_add_epi32(shifted, _mm_set1_epi32(112 << 23)));
    const __m128 special = _mm_castsi128_ps(_mm_or_si128(shifted, _mm_set1_epi32(0x7f800000)));
    const __m128 sub =
        _mm_mul_ps(_mm_cvtepi32_ps(_mm_and_si128(h, _mm_set1_epi32(0x3ff))), _mm_set1_ps(0x1p-24f));
    __m128 v = _mm_blendv_ps(normal, special, _mm_castsi128_ps(_mm_cmpeq_epi32(e, exp_mask)));
    v = _mm_blendv_ps(v, sub, _mm_castsi128_ps(_mm_cmpeq_epi32(e, _mm_setzero_si128())));
    const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
    store(dst + i, _mm_or_ps(v, _mm_castsi128_ps(sign)));
  }
  tail(kernels::dequantize_f16, src, dst, i, n_blocks, 2);
}

TARGET void dequantize_bf16(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  std::size_t i = 0;
  for (; i + 8 <= n_blocks; i += 8) {
    const __m128i h = load128(src + 2 * i);
    store(dst + i, _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), h)));
    store(dst + i + 4, _mm_castsi128_ps(_mm_unpackhi_epi16(_mm_setzero_si128(), h)));
  }
  tail(kernels::dequantize_bf16, src, dst, i, n_blocks, 2);
}

// --- legacy 32-element blocks (§3) --------------------------------------------------------------

TARGET void dequantize_q4_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i eight = _mm_set1_epi8(8);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m128 d = bcast_half(src);
    const __m128i x = load128(src + 2);
    store16_mul(dst, _mm_sub_epi8(low_nibbles(x), eight), d);
    store16_mul(dst + 16, _mm_sub_epi8(high_nibbles(x), eight), d);
  }
}

TARGET void dequantize_q4_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 20, dst += 32) {
    const __m128 d = bcast_half(src), m = bcast_half(src + 2);
    const __m128i x = load128(src + 4);
    store16_mul_add(dst, low_nibbles(x), d, m);
    store16_mul_add(dst + 16, high_nibbles(x), d, m);
  }
}

TARGET void dequantize_q5_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i sixteen = _mm_set1_epi8(16);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 22, dst += 32) {
    const __m128 d = bcast_half(src);
    const std::uint32_t qh = load_u32(src + 2);
    const __m128i x = load128(src + 6);
    const __m128i lo = _mm_or_si128(low_nibbles(x), bits_to_bytes_0x10(qh & 0xffff));
    const __m128i hi = _mm_or_si128(high_nibbles(x), bits_to_bytes_0x10(qh >> 16));
    store16_mul(dst, _mm_sub_epi8(lo, sixteen), d);
    store16_mul(dst + 16, _mm_sub_epi8(hi, sixteen), d);
  }
}

TARGET void dequantize_q5_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 24, dst += 32) {
    const __m128 d = bcast_half(src), m = bcast_half(src + 2);
    const std::uint32_t qh = load_u32(src + 4);
    const __m128i x = load128(src + 8);
    store16_mul_add(dst, _mm_or_si128(low_nibbles(x), bits_to_bytes_0x10(qh & 0xffff)), d, m);
    store16_mul_add(dst + 16, _mm_or_si128(high_nibbles(x), bits_to_bytes_0x10(qh >> 16)), d, m);
  }
}

TARGET void dequantize_q8_0(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 34, dst += 32) {
    const __m128 d = bcast_half(src);
    store16_mul(dst, load128(src + 2), d);
    store16_mul(dst + 16, load128(src + 18), d);
  }
}

// --- K-quants (§4) ------------------------------------------------------------------------------

TARGET void dequantize_q2_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 84, dst += 256) {
    const float d = load_half(src + 80), dmin = load_half(src + 82);
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m128i x[2] = {load128(src + 16 + 32 * h), load128(src + 32 + 32 * h)};
      UNROLL
      for (int p = 0; p < 4; ++p) {
        UNROLL
        for (int k = 0; k < 2; ++k) {  // l = 16k .. 16k + 15, sub-block 8h + 2p + k
          const unsigned sc = src[8 * h + 2 * p + k];
          const __m128 dl = _mm_set1_ps(d * static_cast<float>(sc & 15));
          const __m128 ml = _mm_set1_ps(dmin * static_cast<float>(sc >> 4));
          const __m128i q = _mm_and_si128(_mm_srli_epi16(x[k], 2 * p), _mm_set1_epi8(3));
          store16_mul_sub(dst + 128 * h + 32 * p + 16 * k, q, dl, ml);
        }
      }
    }
  }
}

TARGET void dequantize_q3_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 110, dst += 256) {
    const simd::PackedQ3K packed = simd::unpack_scales_q3_k(src + 96);
    alignas(16) std::uint8_t s[16];  // S[i] + 32
    for (int i = 0; i < 8; ++i) {
      s[i] = static_cast<std::uint8_t>(packed.lo >> (8 * i));
      s[i + 8] = static_cast<std::uint8_t>(packed.hi >> (8 * i));
    }
    const float d = load_half(src + 108);
    const __m128i hmask[2] = {load128(src), load128(src + 16)};
    UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m128i x[2] = {load128(src + 32 + 32 * h), load128(src + 48 + 32 * h)};
      UNROLL
      for (int p = 0; p < 4; ++p) {
        UNROLL
        for (int k = 0; k < 2; ++k) {
          // value = q − 4 + 4 × (bit 4h + p of hmask[l]), the bit moved to bit 2.
          const __m128i q = _mm_and_si128(_mm_srli_epi16(x[k], 2 * p), _mm_set1_epi8(3));
          const __m128i v =
              _mm_sub_epi8(_mm_or_si128(q, move_bit8(hmask[k], 4 * h + p, 2)), _mm_set1_epi8(4));
          const int i = 8 * h + 2 * p + k;
          store16_mul(dst + 128 * h + 32 * p + 16 * k, v,
                      _mm_set1_ps(d * static_cast<float>(s[i] - 32)));
        }
      }
    }
  }
}

namespace {

// d × float(sc[j]) and dmin × float(mn[j]) of the 8 sub-blocks of a Q4_K / Q5_K block.
struct ScalesK4 {
  float d[8];
  float m[8];
};
inline void scales_k4(const std::uint8_t* block, ScalesK4& out) {
  const simd::PackedK4 p = simd::unpack_scales_k4(block + 4);
  const float d = load_half(block), dmin = load_half(block + 2);
  for (int j = 0; j < 8; ++j) {
    out.d[j] = d * static_cast<float>((p.sc >> (8 * j)) & 0xff);
    out.m[j] = dmin * static_cast<float>((p.mn >> (8 * j)) & 0xff);
  }
}

}  // namespace

TARGET void dequantize_q4_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 144, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m128 d1 = _mm_set1_ps(s.d[2 * c]), m1 = _mm_set1_ps(s.m[2 * c]);
      const __m128 d2 = _mm_set1_ps(s.d[2 * c + 1]), m2 = _mm_set1_ps(s.m[2 * c + 1]);
      UNROLL
      for (int k = 0; k < 2; ++k) {
        const __m128i x = load128(src + 16 + 32 * c + 16 * k);
        store16_mul_sub(dst + 64 * c + 16 * k, low_nibbles(x), d1, m1);
        store16_mul_sub(dst + 64 * c + 32 + 16 * k, high_nibbles(x), d2, m2);
      }
    }
  }
}

TARGET void dequantize_q5_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 176, dst += 256) {
    ScalesK4 s;
    scales_k4(src, s);
    const __m128i qh[2] = {load128(src + 16), load128(src + 32)};
    UNROLL
    for (int c = 0; c < 4; ++c) {
      const __m128 d1 = _mm_set1_ps(s.d[2 * c]), m1 = _mm_set1_ps(s.m[2 * c]);
      const __m128 d2 = _mm_set1_ps(s.d[2 * c + 1]), m2 = _mm_set1_ps(s.m[2 * c + 1]);
      UNROLL
      for (int k = 0; k < 2; ++k) {
        // Bit 2c (2c + 1) of qh[l] as bit 4: the +16 of the low (high) nibble.
        const __m128i x = load128(src + 48 + 32 * c + 16 * k);
        const __m128i lo = _mm_or_si128(low_nibbles(x), move_bit8(qh[k], 2 * c, 4));
        const __m128i hi = _mm_or_si128(high_nibbles(x), move_bit8(qh[k], 2 * c + 1, 4));
        store16_mul_sub(dst + 64 * c + 16 * k, lo, d1, m1);
        store16_mul_sub(dst + 64 * c + 32 + 16 * k, hi, d2, m2);
      }
    }
  }
}

TARGET void dequantize_q6_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i m2 = _mm_set1_epi8(0x30), bias = _mm_set1_epi8(32);
  for (std::size_t b = 0; b < n_blocks; ++b, src += 210, dst += 256) {
    const float d = load_half(src + 208);
    UNROLL
    for (int h = 0; h < 2; ++h) {
      UNROLL
      for (int k = 0; k < 2; ++k) {  // l = 16k .. 16k + 15
        const __m128i l0 = load128(src + 64 * h + 16 * k), l1 = load128(src + 64 * h + 32 + 16 * k);
        const __m128i qh = load128(src + 128 + 32 * h + 16 * k);
        // Element 32i + l: 4 low bits from ql, bits 2i, 2i + 1 of qh[l] as bits 4, 5.
        const __m128i q[4] = {
            _mm_or_si128(low_nibbles(l0), _mm_and_si128(_mm_slli_epi16(qh, 4), m2)),
            _mm_or_si128(low_nibbles(l1), _mm_and_si128(_mm_slli_epi16(qh, 2), m2)),
            _mm_or_si128(high_nibbles(l0), _mm_and_si128(qh, m2)),
            _mm_or_si128(high_nibbles(l1), _mm_and_si128(_mm_srli_epi16(qh, 2), m2)),
        };
        UNROLL
        for (int i = 0; i < 4; ++i) {
          // (d × float(scale)) first, then × float(q).
          const auto scale = static_cast<std::int8_t>(src[192 + 8 * h + 2 * i + k]);
          const __m128 ds = _mm_set1_ps(d * static_cast<float>(scale));
          store16_mul(dst + 128 * h + 32 * i + 16 * k, _mm_sub_epi8(q[i], bias), ds);
        }
      }
    }
  }
}

// --- the other types (§6, §7, §9–§11) ------------------------------------------------------------

TARGET void dequantize_q8_1(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 36, dst += 32) {
    const __m128 d = bcast_half(src);
    store16_mul(dst, load128(src + 4), d);
    store16_mul(dst + 16, load128(src + 20), d);
  }
}

TARGET void dequantize_q8_k(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += 292, dst += 256) {
    const __m128 d = _mm_set1_ps(load_f32(src));
    UNROLL
    for (int k = 0; k < 16; ++k) store16_mul(dst + 16 * k, load128(src + 4 + 16 * k), d);
  }
}

TARGET void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables::kValuesIq4nl.data()));
  for (std::size_t b = 0; b < n_blocks; ++b, src += 18, dst += 32) {
    const __m128 d = bcast_half(src);
    const __m128i x = load128(src + 2);
    store16_mul(dst, _mm_shuffle_epi8(table, low_nibbles(x)), d);
    store16_mul(dst + 16, _mm_shuffle_epi8(table, high_nibbles(x)), d);
  }
}

TARGET void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  const __m128i table =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(tables::kValuesIq4nl.data()));
  for (std::size_t b = 0; b < n_blocks; ++b, src += 136, dst += 256) {
    const float d = load_half(src);
    const unsigned scales_h = load_u16(src + 2);
    for (int g = 0; g < 8; ++g) {
      const int ls = static_cast<int>(((src[4 + g / 2] >> (4 * (g % 2))) & 15) |
                                      ((scales_h >> (2 * g)) & 3) << 4);
      const __m128 dl = _mm_set1_ps(d * static_cast<float>(ls - 32));
      const __m128i x = load128(src + 8 + 16 * g);
      store16_mul(dst + 32 * g, _mm_shuffle_epi8(table, low_nibbles(x)), dl);
      store16_mul(dst + 32 * g + 16, _mm_shuffle_epi8(table, high_nibbles(x)), dl);
    }
  }
}

#undef TARGET
#undef UNROLL

}  // namespace ggufs::kernels::sse41

#endif  // GGUFS_X86_KERNELS
