// The block scales of the FP4 types (src/ggml/README.md §8–§11) as floats, for the SIMD decoders of
// every architecture (internal); the same values as the reference decoders compute.
#pragma once

#include <bit>
#include <cstdint>

namespace ggufs::kernels::simd {

// MXFP4: the E8M0 scale 2^(e − 128) built from its bits (e = 0, 1: float subnormals).
inline float e8m0_scale(unsigned e) {
  const std::uint32_t bits = e < 2 ? 0x200000u << e : (e - 1) << 23;
  return std::bit_cast<float>(bits);
}

// NVFP4: the UE4M3 scale byte halved (§10), for every byte; all exact. Bit 7 is ignored except
// that 0x7f alone (not 0xff) means 0.
struct Ue4m3Table {
  float v[256];
  constexpr Ue4m3Table() : v{} {
    for (int x = 1; x < 256; ++x) {
      if (x == 0x7f) continue;
      const int e = (x >> 3) & 15, m = x & 7;
      // M × 2^-10 for E = 0, else (8 + M) × 2^(E − 11), as powers of two times small integers.
      const int exponent = e == 0 ? -10 : e - 11;
      float p = 1.0f;
      for (int k = 0; k < exponent; ++k) p *= 2.0f;
      for (int k = 0; k > exponent; --k) p *= 0.5f;
      v[x] = static_cast<float>(e == 0 ? m : 8 + m) * p;
    }
  }
};
inline constexpr Ue4m3Table kUe4m3Half;

}  // namespace ggufs::kernels::simd
