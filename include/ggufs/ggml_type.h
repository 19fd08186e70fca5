// The ggml tensor type table: one entry per type id, the only place that knows block sizes,
// bytes per block and which decoder a type uses (source: shared ggml-types.md §1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ggufs {

/// Decodes `n_blocks` consecutive blocks of one ggml type to float32.
/// `src` holds n_blocks × type_size bytes (as stored in the file, little-endian);
/// `dst` receives n_blocks × block_size floats (elements, not bytes). Never fails.
using BlockDecoder = void (*)(const std::uint8_t* src, float* dst, std::size_t n_blocks);

/// Traits of one ggml type (ggml-types.md §1, "All types").
struct TypeTraits {
  std::uint32_t id;          ///< ggml type id as stored in a tensor info
  std::string_view name;     ///< ggml type name as users know it: "Q4_K", "BF16"
  std::uint32_t block_size;  ///< elements per block (1 for plain types, 32..256 for quants)
  std::uint32_t type_size;   ///< bytes per block
  BlockDecoder to_float;     ///< nullptr where ggufs does not decode this type (yet)
};

/// The traits of type `id`, or nullptr for a removed id (4, 5, 31–33, 36–38) or an unknown one
/// (≥ 43): such tensors have no computable byte size (ggml-types.md §1).
const TypeTraits* type_traits(std::uint32_t id);

/// Every known type, in id order.
std::span<const TypeTraits> all_types();

/// Bytes of a tensor of `traits` with 4 dimensions `ne` (ne[0] fastest):
/// (ne[0] / block_size) × type_size × ne[1] × ne[2] × ne[3] (ggml-types.md §1).
/// nullopt when ne[0] is not a multiple of the block size or the result overflows uint64.
std::optional<std::uint64_t> tensor_bytes(const TypeTraits& traits, const std::uint64_t ne[4]);

}  // namespace ggufs
