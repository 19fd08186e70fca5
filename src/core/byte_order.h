// Byte swapping for big-endian GGUF files (ggml-types.md §6: every number in the file, metadata
// and tensor elements alike, is big-endian there). Hosts are little-endian.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ggufs {

inline std::uint16_t byte_swap(std::uint16_t v) { return __builtin_bswap16(v); }
inline std::uint32_t byte_swap(std::uint32_t v) { return __builtin_bswap32(v); }
inline std::uint64_t byte_swap(std::uint64_t v) { return __builtin_bswap64(v); }

/// Reverses the bytes of each of the `n_bytes / width` elements of `width` bytes (1, 2, 4 or 8)
/// at `p`, in place.
inline void swap_elements(std::uint8_t* p, std::size_t n_bytes, std::size_t width) {
  for (std::size_t i = 0; i + width <= n_bytes; i += width) {
    switch (width) {
      case 2: {
        std::uint16_t v;
        std::memcpy(&v, p + i, 2);
        v = byte_swap(v);
        std::memcpy(p + i, &v, 2);
        break;
      }
      case 4: {
        std::uint32_t v;
        std::memcpy(&v, p + i, 4);
        v = byte_swap(v);
        std::memcpy(p + i, &v, 4);
        break;
      }
      case 8: {
        std::uint64_t v;
        std::memcpy(&v, p + i, 8);
        v = byte_swap(v);
        std::memcpy(p + i, &v, 8);
        break;
      }
      default:
        return;  // single bytes have no order
    }
  }
}

}  // namespace ggufs
