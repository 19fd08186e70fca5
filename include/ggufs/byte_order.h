// Byte swapping for big-endian GGUF files (the GGUF specification, ggml docs/gguf.md: every number
// in the file, metadata and tensor elements alike, is big-endian there). Hosts are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ggufs {

inline std::uint16_t byte_swap(std::uint16_t v) { return __builtin_bswap16(v); }
inline std::uint32_t byte_swap(std::uint32_t v) { return __builtin_bswap32(v); }
inline std::uint64_t byte_swap(std::uint64_t v) { return __builtin_bswap64(v); }

/// Reverses the bytes of the unsigned integer of type U at `p`, in place.
template <class U>
void swap_in_place(std::uint8_t* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  v = byte_swap(v);
  std::memcpy(p, &v, sizeof v);
}

/// Reverses the bytes of each of the `n_bytes / width` elements of `width` bytes (1, 2, 4 or 8)
/// at `p`, in place.
inline void swap_elements(std::uint8_t* p, std::size_t n_bytes, std::size_t width) {
  for (std::size_t i = 0; i + width <= n_bytes; i += width) {
    if (width == 2) swap_in_place<std::uint16_t>(p + i);
    if (width == 4) swap_in_place<std::uint32_t>(p + i);
    if (width == 8) swap_in_place<std::uint64_t>(p + i);
  }
}

}  // namespace ggufs
