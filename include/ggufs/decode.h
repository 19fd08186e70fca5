// Decoding outputs larger than the CPU caches: the same decoders (the same bits), with the float32
// output written by non-temporal (streaming) stores, which go to memory without first reading
// each destination cache line and without evicting the caches' useful contents. Reads through
// the mount never come here: a reply (at most 1 MiB) is copied by the kernel right after it is
// decoded, so it is written through the cache (TypeTraits::to_float).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggufs/ggml_type.h"

namespace ggufs {

/// Float32 output, in bytes, from which a single decode is better streamed: the 32 MiB L3 cache
/// of the machines ggufs is measured on (a smaller output can still be in the cache for whoever
/// reads it next: a 16 MiB decode measured faster through the cache), and 32× the largest reply
/// through the mount.
inline constexpr std::size_t kStreamingMinBytes = std::size_t{32} << 20;

/// Decodes `n_blocks` blocks of `traits`'s type to float32, the same bits as traits.to_float.
/// `src` holds n_blocks × type_size bytes; `dst` receives n_blocks × block_size floats. Where
/// streaming_decoder_for() has a decoder (AVX-512) and `dst` is 64-byte aligned (or, for plain
/// types, float-aligned: the floats before the first cache line boundary are written plainly),
/// the output is written with non-temporal stores followed by a store fence; otherwise this is
/// traits.to_float. Never fails; traits.to_float must not be null.
void decode_streaming(const TypeTraits& traits, const std::uint8_t* src, float* dst,
                      std::size_t n_blocks);

}  // namespace ggufs
