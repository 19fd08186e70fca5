// The i-quant grid types (src/ggml/README.md §8) as templates over the writer of one 8-element
// group (internal): the scales, grid indices and sign bits are worked out here, once, for every
// architecture; `Groups` writes a group's eight floats. kernels_iquants.cpp instantiates them
// with the scalar writers (the reference decoders), kernels_neon.cpp and kernels_x86_avx2.cpp
// with SIMD ones. `Groups` provides, each product rounded on its own:
//   signed_group(y, db, grid, signs): y[j] = db × float(byte j of grid), negated where bit j of
//     signs is set;
//   iq1_group(y, dl, grid, delta): y[j] = dl × (float(signed byte j of grid) + delta);
//   half(bits): the super-block scale d from its binary16 bits, exactly (F16C on x86).
// The walks are always inlined: a writer with a target attribute (AVX2) is only inlined into a
// caller compiled for that target, so the walk must become part of that caller; x86 writers
// belong in an anonymous namespace, so no out-of-line walk is shared between files. The loops
// over the four sub-groups are unrolled: shift counts and offsets become constants.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "ggufs/ggml_tables.h"
#include "le_load.h"

namespace ggufs::kernels::iquant {

constexpr std::size_t kSuper = 256;

// Block layouts (§8), field sizes in bytes in storage order.
constexpr std::size_t kIq2XxsSize = 2 + 64;             // d, 8 × (4 indices, uint32 signs+scale)
constexpr std::size_t kIq2XsSize = 2 + 64 + 8;          // d, 32 × uint16, scales
constexpr std::size_t kIq2SSize = 2 + 64 + 8 + 8;       // d, qs (indices, signs), qh, scales
constexpr std::size_t kIq3XxsSize = 2 + 64 + 32;        // d, indices, 8 × uint32
constexpr std::size_t kIq3SSize = 2 + 64 + 8 + 32 + 4;  // d, qs, qh, signs, scales
constexpr std::size_t kIq1SSize = 2 + 32 + 16;          // d, qs, 8 × uint16 qh
constexpr std::size_t kIq1MSize = 32 + 16 + 8;          // qs, qh, 4 × uint16 scales (+ d bits)
static_assert(kIq2XxsSize == 66 && kIq2XsSize == 74 && kIq2SSize == 82 && kIq3XxsSize == 98 &&
              kIq3SSize == 110 && kIq1SSize == 50 && kIq1MSize == 56);

// IQ2 group scale from a 4-bit field: (d × (0.5 + s)) × 0.25.
inline float iq2_scale(float d, unsigned s) { return (d * (0.5f + static_cast<float>(s))) * 0.25f; }

template <typename Groups>
[[gnu::always_inline]] inline void decode_iq2_xxs(const std::uint8_t* src, float* dst,
                                                  std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2XxsSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    for (int g = 0; g < 8; ++g) {
      const std::uint8_t* a = src + 2 + 8 * g;  // four grid indices, then w
      const std::uint32_t w = load_u32(a + 4);
      const float db = iq2_scale(d, w >> 28);
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const unsigned signs = tables::kSignsIq2xs[(w >> (7 * l)) & 127];
        Groups::signed_group(dst + 32 * g + 8 * l, db, tables::kIq2xxsGrid[a[l]], signs);
      }
    }
  }
}

template <typename Groups>
[[gnu::always_inline]] inline void decode_iq2_xs(const std::uint8_t* src, float* dst,
                                                 std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2XsSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    const std::uint8_t* scales = src + 66;
    for (int g = 0; g < 8; ++g) {
      const unsigned sc = scales[g];
      const float db[2] = {iq2_scale(d, sc & 15), iq2_scale(d, sc >> 4)};
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const std::uint16_t v = load_u16(src + 2 + 2 * (4 * g + l));
        Groups::signed_group(dst + 32 * g + 8 * l, db[l / 2], tables::kIq2xsGrid[v & 511],
                             tables::kSignsIq2xs[v >> 9]);
      }
    }
  }
}

template <typename Groups>
[[gnu::always_inline]] inline void decode_iq2_s(const std::uint8_t* src, float* dst,
                                                std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2SSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    const std::uint8_t* qs = src + 2;  // 32 index low bytes, then 32 sign bytes
    const std::uint8_t* qh = src + 66;
    const std::uint8_t* scales = src + 74;
    for (int g = 0; g < 8; ++g) {
      const unsigned sc = scales[g];
      const float db[2] = {iq2_scale(d, sc & 15), iq2_scale(d, sc >> 4)};
      const unsigned high = qh[g];  // read once: the stores to dst may alias src (bytes)
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const unsigned index = qs[4 * g + l] | ((high >> (2 * l)) & 3u) << 8;
        Groups::signed_group(dst + 32 * g + 8 * l, db[l / 2], tables::kIq2sGrid[index],
                             qs[32 + 4 * g + l]);
      }
    }
  }
}

// Two 4-element grid entries make one 8-element group: the second supplies elements 4..7.
template <typename Groups>
[[gnu::always_inline]] inline void decode_iq3_xxs(const std::uint8_t* src, float* dst,
                                                  std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq3XxsSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    const std::uint8_t* idx = src + 2;
    for (int g = 0; g < 8; ++g) {
      const std::uint32_t w = load_u32(src + 2 + 64 + 4 * g);
      const float db = (d * (0.5f + static_cast<float>(w >> 28))) * 0.5f;
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const std::uint64_t grid = tables::kIq3xxsGrid[idx[8 * g + 2 * l]] |
                                   std::uint64_t{tables::kIq3xxsGrid[idx[8 * g + 2 * l + 1]]} << 32;
        Groups::signed_group(dst + 32 * g + 8 * l, db, grid,
                             tables::kSignsIq2xs[(w >> (7 * l)) & 127]);
      }
    }
  }
}

template <typename Groups>
[[gnu::always_inline]] inline void decode_iq3_s(const std::uint8_t* src, float* dst,
                                                std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq3SSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    const std::uint8_t* qs = src + 2;
    const std::uint8_t* qh = src + 66;
    const std::uint8_t* signs = src + 74;
    const std::uint8_t* scales = src + 106;
    for (int g = 0; g < 8; ++g) {
      const unsigned high = qh[g];  // read once: the stores to dst may alias src (bytes)
      const unsigned s = (scales[g / 2] >> (4 * (g % 2))) & 15;
      const float db = d * static_cast<float>(1 + 2 * s);
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const unsigned i1 = qs[8 * g + 2 * l] | ((high >> (2 * l)) & 1u) << 8;
        const unsigned i2 = qs[8 * g + 2 * l + 1] | ((high >> (2 * l + 1)) & 1u) << 8;
        const std::uint64_t grid = tables::kIq3sGrid[i1] | std::uint64_t{tables::kIq3sGrid[i2]}
                                                               << 32;
        Groups::signed_group(dst + 32 * g + 8 * l, db, grid, signs[4 * g + l]);
      }
    }
  }
}

// IQ1 delta: −0.125 if `negative` (0 or 1), else +0.125, without a branch (random sign bits
// would mispredict).
inline float iq1_delta(unsigned negative) {
  return std::bit_cast<float>(0x3e000000u | negative << 31);  // 0x3e000000 = 0.125f
}

template <typename Groups>
[[gnu::always_inline]] inline void decode_iq1_s(const std::uint8_t* src, float* dst,
                                                std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq1SSize, dst += kSuper) {
    const float d = Groups::half(load_u16(src));
    const std::uint8_t* qs = src + 2;
    for (int g = 0; g < 8; ++g) {
      const std::uint16_t q = load_u16(src + 34 + 2 * g);
      const float dl = d * static_cast<float>(2 * ((q >> 12) & 7) + 1);
      const float delta = iq1_delta((q >> 15) & 1);
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        const unsigned index = qs[4 * g + l] | ((q >> (3 * l)) & 7u) << 8;
        Groups::iq1_group(dst + 32 * g + 8 * l, dl, tables::kIq1sGrid[index], delta);
      }
    }
  }
}

// The super-block scale d is a half spread over the top nibbles of the four scale words.
template <typename Groups>
[[gnu::always_inline]] inline void decode_iq1_m(const std::uint8_t* src, float* dst,
                                                std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq1MSize, dst += kSuper) {
    const std::uint8_t* qs = src;
    const std::uint8_t* qh = src + 32;
    const Iq1MScales scales = load_iq1_m_scales(src);
    const std::uint16_t* sc = scales.words;
    const std::uint16_t d_bits = scales.d_bits;
    const float d = Groups::half(d_bits);
    for (int g = 0; g < 8; ++g) {
      const unsigned w = sc[g / 2], shift = 6 * (g % 2);
      const float dl[2] = {d * static_cast<float>(2 * ((w >> shift) & 7) + 1),
                           d * static_cast<float>(2 * ((w >> (shift + 3)) & 7) + 1)};
#pragma GCC unroll 4
      for (int l = 0; l < 4; ++l) {
        // Entries 0, 1 use qh[2g] (low, high nibble), entries 2, 3 use qh[2g + 1].
        const unsigned h = qh[2 * g + l / 2] >> (4 * (l % 2));
        const unsigned index = qs[4 * g + l] | (h & 7u) << 8;
        const float delta = iq1_delta((h >> 3) & 1);
        Groups::iq1_group(dst + 32 * g + 8 * l, dl[l / 2], tables::kIq1sGrid[index], delta);
      }
    }
  }
}

}  // namespace ggufs::kernels::iquant
