// Packed fields of ggml blocks that the decoders and the MLX encoder (mlx_blocks.cpp) both read
// (src/ggml/README.md §7 and §9).
#pragma once

#include <cstdint>

namespace ggufs::kernels {

// Q4_K / Q5_K: the 6-bit scale and min of sub-block j, packed in 12 bytes (§7; ggml's
// get_scale_min_k4).
struct ScaleMin {
  int sc;
  int mn;
};
inline ScaleMin scale_min_k4(const std::uint8_t* scales, int j) {
  if (j < 4) return {scales[j] & 63, scales[j + 4] & 63};
  return {(scales[j + 4] & 15) | (scales[j - 4] >> 6) << 4, (scales[j + 4] >> 4) | (scales[j] >> 6)
                                                                                       << 4};
}

// TQ1_0: ternary digit n (0..4) of a byte packed 5 (or 4) digits per byte, as −1, 0 or +1 (§9).
inline int ternary_digit(std::uint8_t b, int n) {
  static constexpr unsigned kPow3[5] = {1, 3, 9, 27, 81};
  const unsigned t = (b * kPow3[n]) & 255;  // (b × 3^n) mod 256
  return static_cast<int>((t * 3) >> 8) - 1;
}

}  // namespace ggufs::kernels
