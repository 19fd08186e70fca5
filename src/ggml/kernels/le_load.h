// Little-endian loads from block bytes, shared by the kernels. Byte-wise, so they are correct on
// any host and never read through a misaligned pointer.
#pragma once

#include <bit>
#include <cstdint>

#include "ggufs/half.h"

namespace ggufs::kernels {

inline std::uint16_t load_u16(const std::uint8_t* p) {
  return static_cast<std::uint16_t>(p[0] | p[1] << 8);
}
inline std::uint32_t load_u32(const std::uint8_t* p) {
  return std::uint32_t{load_u16(p)} | std::uint32_t{load_u16(p + 2)} << 16;
}
inline std::uint64_t load_u64(const std::uint8_t* p) {
  return std::uint64_t{load_u32(p)} | std::uint64_t{load_u32(p + 4)} << 32;
}
inline float load_f32(const std::uint8_t* p) { return std::bit_cast<float>(load_u32(p)); }
/// A binary16 field converted exactly to float (src/ggml/README.md §4).
inline float load_half(const std::uint8_t* p) { return half_to_float(load_u16(p)); }

/// IQ1_M keeps its four 16-bit scale words at bytes 48..55 of a block; their top nibbles, low
/// word first, are the bits of the super-block scale d, a binary16 (src/ggml/README.md, IQ1_M).
struct Iq1MScales {
  std::uint16_t words[4];
  std::uint16_t d_bits;
};
inline Iq1MScales load_iq1_m_scales(const std::uint8_t* block) {
  Iq1MScales s{};
  for (int k = 0; k < 4; ++k) s.words[k] = load_u16(block + 48 + 2 * k);
  s.d_bits = static_cast<std::uint16_t>((s.words[0] >> 12) | ((s.words[1] >> 8) & 0x00f0) |
                                        ((s.words[2] >> 4) & 0x0f00) | (s.words[3] & 0xf000));
  return s;
}

}  // namespace ggufs::kernels
