// I-quants (ggml-types.md §5): 8-element groups looked up in grids (tables/*.txt, embedded in
// ggml_tables.cpp) plus sign bits, and the non-linear 4-bit IQ4 types. Products are computed
// left to right as the doc writes them, each rounded on its own (-ffp-contract=off).
#include <cstdint>

#include "ggufs/ggml_tables.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

constexpr std::size_t kSuper = 256;

// Block layouts (§5), field sizes in bytes in storage order.
constexpr std::size_t kIq2XxsSize = 2 + 64;             // d, 8 × (4 indices, uint32 signs+scale)
constexpr std::size_t kIq2XsSize = 2 + 64 + 8;          // d, 32 × uint16, scales
constexpr std::size_t kIq2SSize = 2 + 64 + 8 + 8;       // d, qs (indices, signs), qh, scales
constexpr std::size_t kIq3XxsSize = 2 + 64 + 32;        // d, indices, 8 × uint32
constexpr std::size_t kIq3SSize = 2 + 64 + 8 + 32 + 4;  // d, qs, qh, signs, scales
constexpr std::size_t kIq1SSize = 2 + 32 + 16;          // d, qs, 8 × uint16 qh
constexpr std::size_t kIq1MSize = 32 + 16 + 8;          // qs, qh, 4 × uint16 scales (+ d bits)
constexpr std::size_t kIq4NlSize = 2 + 16;              // d, qs
constexpr std::size_t kIq4XsSize = 2 + 2 + 4 + 128;     // d, scales_h, scales_l, qs
static_assert(kIq2XxsSize == 66 && kIq2XsSize == 74 && kIq2SSize == 82 && kIq3XxsSize == 98 &&
              kIq3SSize == 110 && kIq1SSize == 50 && kIq1MSize == 56 && kIq4NlSize == 18 &&
              kIq4XsSize == 136);

// Byte j (little-endian) of a grid entry is element j of its group.
unsigned grid_byte(std::uint64_t entry, int j) { return (entry >> (8 * j)) & 0xff; }

// One 8-element group: (db × float(magnitude j)) × (±1), negated where sign bit j is set.
void put_signed_group(float* y, float db, std::uint64_t grid, unsigned signs) {
  for (int j = 0; j < 8; ++j) {
    const float v = db * static_cast<float>(grid_byte(grid, j));
    y[j] = ((signs >> j) & 1) ? -v : v;
  }
}

// IQ2 group scale from a 4-bit field: (d × (0.5 + s)) × 0.25.
float iq2_scale(float d, unsigned s) { return (d * (0.5f + static_cast<float>(s))) * 0.25f; }

// IQ1 group: dl × (float(grid j) + delta), the grid bytes being signed (−1, 0, +1).
void put_iq1_group(float* y, float dl, std::uint64_t grid, float delta) {
  for (int j = 0; j < 8; ++j) {
    const auto g = static_cast<std::int8_t>(grid_byte(grid, j));
    y[j] = dl * (static_cast<float>(g) + delta);
  }
}

}  // namespace

void dequantize_iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2XxsSize, dst += kSuper) {
    const float d = load_half(src);
    for (int g = 0; g < 8; ++g) {
      const std::uint8_t* a = src + 2 + 8 * g;  // four grid indices, then w
      const std::uint32_t w = load_u32(a + 4);
      const float db = iq2_scale(d, w >> 28);
      for (int l = 0; l < 4; ++l) {
        const unsigned signs = tables::kSignsIq2xs[(w >> (7 * l)) & 127];
        put_signed_group(dst + 32 * g + 8 * l, db, tables::kIq2xxsGrid[a[l]], signs);
      }
    }
  }
}

void dequantize_iq2_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2XsSize, dst += kSuper) {
    const float d = load_half(src);
    const std::uint8_t* scales = src + 66;
    for (int g = 0; g < 8; ++g) {
      const float db[2] = {iq2_scale(d, scales[g] & 15), iq2_scale(d, scales[g] >> 4)};
      for (int l = 0; l < 4; ++l) {
        const std::uint16_t v = load_u16(src + 2 + 2 * (4 * g + l));
        put_signed_group(dst + 32 * g + 8 * l, db[l / 2], tables::kIq2xsGrid[v & 511],
                         tables::kSignsIq2xs[v >> 9]);
      }
    }
  }
}

void dequantize_iq2_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq2SSize, dst += kSuper) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;  // 32 index low bytes, then 32 sign bytes
    const std::uint8_t* qh = src + 66;
    const std::uint8_t* scales = src + 74;
    for (int g = 0; g < 8; ++g) {
      const float db[2] = {iq2_scale(d, scales[g] & 15), iq2_scale(d, scales[g] >> 4)};
      for (int l = 0; l < 4; ++l) {
        const unsigned index = qs[4 * g + l] | ((qh[g] >> (2 * l)) & 3u) << 8;
        put_signed_group(dst + 32 * g + 8 * l, db[l / 2], tables::kIq2sGrid[index],
                         qs[32 + 4 * g + l]);
      }
    }
  }
}

// Two 4-element grid entries make one 8-element group: the second supplies elements 4..7.
void dequantize_iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq3XxsSize, dst += kSuper) {
    const float d = load_half(src);
    const std::uint8_t* idx = src + 2;
    for (int g = 0; g < 8; ++g) {
      const std::uint32_t w = load_u32(src + 2 + 64 + 4 * g);
      const float db = (d * (0.5f + static_cast<float>(w >> 28))) * 0.5f;
      for (int l = 0; l < 4; ++l) {
        const std::uint64_t grid = tables::kIq3xxsGrid[idx[8 * g + 2 * l]] |
                                   std::uint64_t{tables::kIq3xxsGrid[idx[8 * g + 2 * l + 1]]} << 32;
        put_signed_group(dst + 32 * g + 8 * l, db, grid, tables::kSignsIq2xs[(w >> (7 * l)) & 127]);
      }
    }
  }
}

void dequantize_iq3_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq3SSize, dst += kSuper) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;
    const std::uint8_t* qh = src + 66;
    const std::uint8_t* signs = src + 74;
    const std::uint8_t* scales = src + 106;
    for (int g = 0; g < 8; ++g) {
      const unsigned s = (scales[g / 2] >> (4 * (g % 2))) & 15;
      const float db = d * static_cast<float>(1 + 2 * s);
      for (int l = 0; l < 4; ++l) {
        const unsigned i1 = qs[8 * g + 2 * l] | ((qh[g] >> (2 * l)) & 1u) << 8;
        const unsigned i2 = qs[8 * g + 2 * l + 1] | ((qh[g] >> (2 * l + 1)) & 1u) << 8;
        const std::uint64_t grid = tables::kIq3sGrid[i1] | std::uint64_t{tables::kIq3sGrid[i2]}
                                                               << 32;
        put_signed_group(dst + 32 * g + 8 * l, db, grid, signs[4 * g + l]);
      }
    }
  }
}

void dequantize_iq1_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq1SSize, dst += kSuper) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;
    for (int g = 0; g < 8; ++g) {
      const std::uint16_t q = load_u16(src + 34 + 2 * g);
      const float dl = d * static_cast<float>(2 * ((q >> 12) & 7) + 1);
      const float delta = (q & 0x8000u) ? -0.125f : 0.125f;
      for (int l = 0; l < 4; ++l) {
        const unsigned index = qs[4 * g + l] | ((q >> (3 * l)) & 7u) << 8;
        put_iq1_group(dst + 32 * g + 8 * l, dl, tables::kIq1sGrid[index], delta);
      }
    }
  }
}

// The super-block scale d is a half spread over the top nibbles of the four scale words.
void dequantize_iq1_m(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq1MSize, dst += kSuper) {
    const std::uint8_t* qs = src;
    const std::uint8_t* qh = src + 32;
    const Iq1MScales scales = load_iq1_m_scales(src);
    const std::uint16_t* sc = scales.words;
    const std::uint16_t d_bits = scales.d_bits;
    const float d = half_to_float(d_bits);
    for (int g = 0; g < 8; ++g) {
      const unsigned w = sc[g / 2], shift = 6 * (g % 2);
      const float dl[2] = {d * static_cast<float>(2 * ((w >> shift) & 7) + 1),
                           d * static_cast<float>(2 * ((w >> (shift + 3)) & 7) + 1)};
      for (int l = 0; l < 4; ++l) {
        // Entries 0, 1 use qh[2g] (low, high nibble), entries 2, 3 use qh[2g + 1].
        const unsigned h = qh[2 * g + l / 2] >> (4 * (l % 2));
        const unsigned index = qs[4 * g + l] | (h & 7u) << 8;
        const float delta = (h & 8u) ? -0.125f : 0.125f;
        put_iq1_group(dst + 32 * g + 8 * l, dl[l / 2], tables::kIq1sGrid[index], delta);
      }
    }
  }
}

void dequantize_iq4_nl(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq4NlSize, dst += 32) {
    const float d = load_half(src);
    const std::uint8_t* qs = src + 2;
    for (int j = 0; j < 16; ++j) {
      dst[j] = d * static_cast<float>(tables::kValuesIq4nl[qs[j] & 15]);
      dst[j + 16] = d * static_cast<float>(tables::kValuesIq4nl[qs[j] >> 4]);
    }
  }
}

void dequantize_iq4_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  for (std::size_t b = 0; b < n_blocks; ++b, src += kIq4XsSize, dst += kSuper) {
    const float d = load_half(src);
    const unsigned scales_h = load_u16(src + 2);
    const std::uint8_t* scales_l = src + 4;
    const std::uint8_t* qs = src + 8;
    for (int g = 0; g < 8; ++g) {
      const int ls = static_cast<int>(((scales_l[g / 2] >> (4 * (g % 2))) & 15) |
                                      ((scales_h >> (2 * g)) & 3) << 4);
      const float dl = d * static_cast<float>(ls - 32);
      for (int j = 0; j < 16; ++j) {
        dst[32 * g + j] = dl * static_cast<float>(tables::kValuesIq4nl[qs[16 * g + j] & 15]);
        dst[32 * g + 16 + j] = dl * static_cast<float>(tables::kValuesIq4nl[qs[16 * g + j] >> 4]);
      }
    }
  }
}

}  // namespace ggufs::kernels
