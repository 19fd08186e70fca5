// The packed K-quant scales unpacked four at a time with 32-bit word operations (src/ggml/README.md
// §4), for the SIMD decoders of every architecture (internal). A shift inside a word moves bits
// across bytes only into places the mask clears. Words a, b, c are the little-endian bytes 0–3,
// 4–7, 8–11 of the 12 scale bytes.
#pragma once

#include <cstdint>

namespace ggufs::kernels::simd {

inline std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

/// Q4_K / Q5_K: byte j of `sc` (of `mn`) is the 6-bit scale (min) of sub-block j (§4, Q4_K):
/// sc[j] = a_j & 63, mn[j] = b_j & 63; for j + 4 the nibble of c_j (low for sc, high for mn)
/// with the top two bits of a_j (b_j) as bits 4, 5.
struct PackedK4 {
  std::uint64_t sc, mn;
};
inline PackedK4 unpack_scales_k4(const std::uint8_t* scales) {
  const std::uint32_t a = le32(scales), b = le32(scales + 4), c = le32(scales + 8);
  const std::uint32_t sc_hi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
  const std::uint32_t mn_hi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
  return {(a & 0x3f3f3f3fu) | std::uint64_t{sc_hi} << 32,
          (b & 0x3f3f3f3fu) | std::uint64_t{mn_hi} << 32};
}

/// Q3_K: bytes i of the result (i = 0..15) are the 6-bit scales S[i] + 32, still biased (§4,
/// Q3_K): low 4 bits from a, b (i < 8) or their high nibbles (i ≥ 8), high 2 bits from bits
/// 2(i div 4), +1 of c_(i mod 4).
struct PackedQ3K {
  std::uint64_t lo, hi;  ///< bytes 0–7 and 8–15
};
inline PackedQ3K unpack_scales_q3_k(const std::uint8_t* scales) {
  const std::uint32_t a = le32(scales), b = le32(scales + 4), c = le32(scales + 8);
  const std::uint32_t m4 = 0x0f0f0f0fu, m2 = 0x30303030u;
  const std::uint32_t s0 = (a & m4) | ((c << 4) & m2);         // S[0..3]: bits 0, 1 of c
  const std::uint32_t s1 = (b & m4) | ((c << 2) & m2);         // S[4..7]: bits 2, 3
  const std::uint32_t s2 = ((a >> 4) & m4) | (c & m2);         // S[8..11]: bits 4, 5
  const std::uint32_t s3 = ((b >> 4) & m4) | ((c >> 2) & m2);  // S[12..15]: bits 6, 7
  return {s0 | std::uint64_t{s1} << 32, s2 | std::uint64_t{s3} << 32};
}

}  // namespace ggufs::kernels::simd
