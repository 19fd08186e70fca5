// IEEE 754 binary16 and bfloat16 conversions (src/ggml/README.md §5).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace ggufs {

/// Exact half → float conversion (src/ggml/README.md §5, F16): every half converts exactly.
inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) return std::bit_cast<float>(sign);
    // Subnormal: m × 2^-24, exact in float.
    const float v = static_cast<float>(man) * 0x1p-24f;
    return std::bit_cast<float>(std::bit_cast<std::uint32_t>(v) | sign);
  }
  if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  return std::bit_cast<float>(bits);
}

/// Float → half, round to nearest even; used by our own writer and quantizers, not by decoding.
/// A NaN becomes a quiet NaN (as ggml's F16C conversion makes it).
std::uint16_t float_to_half(float f);

/// Float → half as NumPy's astype(float16) converts (npy_floatbits_to_halfbits in NumPy's
/// halffloat.c): float_to_half, except that a NaN keeps its top ten payload bits as they are
/// (0x7c00 + payload, or 0x7c01 when those are zero) instead of being quieted. The f16/ view.
std::uint16_t float_to_half_as_numpy(float f);

/// float_to_half_as_numpy of each of in[0..n) into out[0..n): eight at a time with F16C's
/// vcvtps2ph (round to nearest even, as IEEE 754 and NumPy round) where active_isa() is AVX2 or
/// above, the eight taken one by one where one of them is a NaN (F16C quiets a NaN, NumPy keeps
/// its payload). The f16/ view's conversion.
void floats_to_halves_as_numpy(const float* in, std::size_t n, std::uint16_t* out);

/// Float → bfloat16 as torch.Tensor.to(torch.bfloat16) converts (round_to_nearest_even in
/// c10/util/BFloat16.h): the upper 16 bits, rounded to nearest even on the lower 16; any NaN
/// becomes 0x7fc0. The bf16 form of model.safetensors.
inline std::uint16_t float_to_bf16_as_torch(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/// float_to_bf16_as_torch of each of in[0..n) into out[0..n): sixteen at a time with AVX2 where
/// active_isa() is AVX2 or above. The bf16 forms' conversion (hf/, model.safetensors, the Python
/// package's Model.tensor(dtype="bfloat16")).
void floats_to_bf16_as_torch(const float* in, std::size_t n, std::uint16_t* out);

/// bfloat16 → float: the 16 bits become the upper half of the float (src/ggml/README.md §5, BF16).
inline float bf16_to_float(std::uint16_t b) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}

}  // namespace ggufs
