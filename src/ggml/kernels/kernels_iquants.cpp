// I-quants (src/ggml/README.md §8–§11): 8-element groups looked up in grids (tables/*.txt, embedded
// in ggml_tables.cpp) plus sign bits (the block walks are in iquant_grids.h, shared with the NEON
// and AVX2 decoders), and the non-linear 4-bit IQ4 types. Products are computed left to right as
// the doc writes them, each rounded on its own (-ffp-contract=off).
#include <cstdint>

#include "ggufs/ggml_tables.h"
#include "ggufs/half.h"
#include "ggufs/kernels.h"
#include "iquant_grids.h"
#include "le_load.h"

namespace ggufs::kernels {

namespace {

constexpr std::size_t kSuper = 256;
constexpr std::size_t kIq4NlSize = 2 + 16;           // d, qs
constexpr std::size_t kIq4XsSize = 2 + 2 + 4 + 128;  // d, scales_h, scales_l, qs
static_assert(kIq4NlSize == 18 && kIq4XsSize == 136);

// Byte j (little-endian) of a grid entry is element j of its group.
unsigned grid_byte(std::uint64_t entry, int j) { return (entry >> (8 * j)) & 0xff; }

// The reference group writers (iquant_grids.h).
struct ScalarGroups {
  // (db × float(magnitude j)) × (±1), negated where sign bit j is set.
  static void signed_group(float* y, float db, std::uint64_t grid, unsigned signs) {
    for (int j = 0; j < 8; ++j) {
      const float v = db * static_cast<float>(grid_byte(grid, j));
      y[j] = ((signs >> j) & 1) ? -v : v;
    }
  }
  // dl × (float(grid j) + delta), the grid bytes being signed (−1, 0, +1).
  static void iq1_group(float* y, float dl, std::uint64_t grid, float delta) {
    for (int j = 0; j < 8; ++j) {
      const auto g = static_cast<std::int8_t>(grid_byte(grid, j));
      y[j] = dl * (static_cast<float>(g) + delta);
    }
  }
  static float half(std::uint16_t bits) { return half_to_float(bits); }
};

}  // namespace

void dequantize_iq2_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xxs<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq2_xs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_xs<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq2_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq2_s<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq3_xxs(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_xxs<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq3_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq3_s<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq1_s(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_s<ScalarGroups>(src, dst, n_blocks);
}

void dequantize_iq1_m(const std::uint8_t* src, float* dst, std::size_t n_blocks) {
  iquant::decode_iq1_m<ScalarGroups>(src, dst, n_blocks);
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
