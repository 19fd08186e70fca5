// Our own quantizers, for the sample model, test fixtures and benchmarks only: they produce
// valid blocks with small error, not ggml's exact choice of scales. Expected decoded values in
// tests never come from here; they come from ggml's reference data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace ggufs {

/// Stored bytes of `x` as ggml type `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_K or Q6_K).
/// x.size() must be a multiple of the type's block size. Throws std::invalid_argument otherwise
/// or for another type.
std::vector<std::uint8_t> quantize(std::uint32_t type, std::span<const float> x);

}  // namespace ggufs
