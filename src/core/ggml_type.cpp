#include "ggufs/ggml_type.h"

#include <array>
#include <cstdint>

#include "ggufs/kernels.h"

namespace ggufs {

namespace {

namespace k = kernels;

// ggml-types.md §1, in id order. Ids 4, 5, 31–33 and 36–38 were removed from GGUF and have no row.
constexpr TypeTraits kTypes[] = {
    {0, "F32", 1, 4, k::dequantize_f32},
    {1, "F16", 1, 2, k::dequantize_f16},
    {2, "Q4_0", 32, 18, k::dequantize_q4_0},
    {3, "Q4_1", 32, 20, k::dequantize_q4_1},
    {6, "Q5_0", 32, 22, k::dequantize_q5_0},
    {7, "Q5_1", 32, 24, k::dequantize_q5_1},
    {8, "Q8_0", 32, 34, k::dequantize_q8_0},
    {9, "Q8_1", 32, 36, k::dequantize_q8_1},
    {10, "Q2_K", 256, 84, k::dequantize_q2_k},
    {11, "Q3_K", 256, 110, k::dequantize_q3_k},
    {12, "Q4_K", 256, 144, k::dequantize_q4_k},
    {13, "Q5_K", 256, 176, k::dequantize_q5_k},
    {14, "Q6_K", 256, 210, k::dequantize_q6_k},
    {15, "Q8_K", 256, 292, k::dequantize_q8_k},
    {16, "IQ2_XXS", 256, 66, k::dequantize_iq2_xxs},
    {17, "IQ2_XS", 256, 74, k::dequantize_iq2_xs},
    {18, "IQ3_XXS", 256, 98, k::dequantize_iq3_xxs},
    {19, "IQ1_S", 256, 50, k::dequantize_iq1_s},
    {20, "IQ4_NL", 32, 18, k::dequantize_iq4_nl},
    {21, "IQ3_S", 256, 110, k::dequantize_iq3_s},
    {22, "IQ2_S", 256, 82, k::dequantize_iq2_s},
    {23, "IQ4_XS", 256, 136, k::dequantize_iq4_xs},
    {24, "I8", 1, 1, k::dequantize_i8},
    {25, "I16", 1, 2, k::dequantize_i16},
    {26, "I32", 1, 4, k::dequantize_i32},
    {27, "I64", 1, 8, k::dequantize_i64},
    {28, "F64", 1, 8, k::dequantize_f64},
    {29, "IQ1_M", 256, 56, k::dequantize_iq1_m},
    {30, "BF16", 1, 2, k::dequantize_bf16},
    {34, "TQ1_0", 256, 54, k::dequantize_tq1_0},
    {35, "TQ2_0", 256, 66, k::dequantize_tq2_0},
    {39, "MXFP4", 32, 17, k::dequantize_mxfp4},
    {40, "NVFP4", 64, 36, k::dequantize_nvfp4},
    {41, "Q1_0", 128, 18, k::dequantize_q1_0},
    {42, "Q2_0", 64, 18, k::dequantize_q2_0},
};

constexpr std::uint32_t kIdLimit = 43;  // ids ≥ 43 are unknown (§1)

// Position of each id in kTypes, −1 for a removed id: type_traits() is one array lookup.
constexpr std::array<int, kIdLimit> kIndex = [] {
  std::array<int, kIdLimit> index{};
  index.fill(-1);
  for (std::size_t i = 0; i < std::size(kTypes); ++i) index[kTypes[i].id] = static_cast<int>(i);
  return index;
}();

static_assert(std::size(kTypes) == 35, "ggml-types.md §1 lists 35 types");

}  // namespace

const TypeTraits* type_traits(std::uint32_t id) {
  if (id >= kIdLimit || kIndex[id] < 0) return nullptr;
  return &kTypes[kIndex[id]];
}

std::span<const TypeTraits> all_types() { return kTypes; }

std::optional<std::uint64_t> tensor_bytes(const TypeTraits& traits, const std::uint64_t ne[4]) {
  if (ne[0] % traits.block_size != 0) return std::nullopt;
  // An empty tensor has 0 bytes even if the other factors alone would overflow.
  if (ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0) return 0;
  std::uint64_t bytes = ne[0] / traits.block_size;
  if (__builtin_mul_overflow(bytes, std::uint64_t{traits.type_size}, &bytes)) return std::nullopt;
  for (int i = 1; i < 4; ++i) {
    if (__builtin_mul_overflow(bytes, ne[i], &bytes)) return std::nullopt;
  }
  return bytes;
}

}  // namespace ggufs
