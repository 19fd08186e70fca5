#include "ggufs/half.h"

#include <bit>
#include <cstdint>

#include "ggufs/ggml_type.h"
#include "kernels_x86.h"

namespace ggufs {

namespace {

// Shifts `value` right by `shift` (1..31) bits, rounding to nearest, ties to even.
std::uint32_t shift_round_even(std::uint32_t value, unsigned shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  return kept + ((rest > halfway || (rest == halfway && (kept & 1))) ? 1 : 0);
}

}  // namespace

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  const std::uint32_t exp = abs >> 23;
  const std::uint32_t man = abs & 0x7fffffu;

  if (abs > 0x7f800000u) {
    // NaN: stay a (quiet) NaN, keeping the top payload bits.
    return static_cast<std::uint16_t>(sign | 0x7e00u | (man >> 13));
  }
  // 65520 = 65504 + half an ulp: the tie rounds to the even neighbour 2^16, which is inf.
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);

  if (exp < 113) {
    // Below 2^-14: a half subnormal k × 2^-24. The float is (2^23 + man) × 2^(exp − 150),
    // so k = (2^23 + man) × 2^(exp − 126), i.e. a right shift by 126 − exp (≥ 14).
    const unsigned shift = 126 - exp;
    if (shift > 24) return sign;  // below 2^-25, half the smallest subnormal: rounds to ±0
    const std::uint32_t k = shift_round_even(man | 0x800000u, shift);
    return static_cast<std::uint16_t>(sign | k);  // k = 0x400 is the smallest normal: still right
  }
  // Normal: rebias the exponent (127 → 15) and round the mantissa from 23 to 10 bits; a carry
  // out of the mantissa correctly bumps the exponent (never to inf, excluded above).
  const std::uint32_t h = shift_round_even(((exp - 112) << 23) | man, 13);
  return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t float_to_half_as_numpy(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) <= 0x7f800000u) return float_to_half(f);
  auto h = static_cast<std::uint16_t>(0x7c00u + ((x & 0x7fffffu) >> 13));
  if (h == 0x7c00u) ++h;  // a NaN must keep a payload bit
  return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | h);
}

void floats_to_halves_as_numpy(const float* in, std::size_t n, std::uint16_t* out) {
#if GGUFS_X86_KERNELS
  static const bool f16c = active_isa() == Isa::kAvx2 || active_isa() == Isa::kAvx512;
  if (f16c) return kernels::avx2::floats_to_halves_as_numpy(in, n, out);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half_as_numpy(in[i]);
}

void floats_to_bf16_as_torch(const float* in, std::size_t n, std::uint16_t* out) {
#if GGUFS_X86_KERNELS
  static const bool avx2 = active_isa() == Isa::kAvx2 || active_isa() == Isa::kAvx512;
  if (avx2) return kernels::avx2::floats_to_bf16_as_torch(in, n, out);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_bf16_as_torch(in[i]);
}

}  // namespace ggufs
