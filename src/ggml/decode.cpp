#include "ggufs/decode.h"

#include <algorithm>
#include <cstdint>

#include "kernels_x86.h"

#if GGUFS_X86_KERNELS
#include <immintrin.h>
#endif

namespace ggufs {

void decode_streaming(const TypeTraits& traits, const std::uint8_t* src, float* dst,
                      std::size_t n_blocks) {
  const BlockDecoder stream = streaming_decoder_for(traits);
  const auto misaligned = reinterpret_cast<std::uintptr_t>(dst) % 64;
  if (stream == nullptr || misaligned % sizeof(float) != 0) {
    return traits.to_float(src, dst, n_blocks);
  }
  // Every block's output starts at the alignment of dst (a block's output is a multiple of 64
  // bytes), so the head up to the first cache line boundary is only possible for plain types.
  std::size_t head = 0;
  if (misaligned != 0) {
    if (traits.block_size != 1) return traits.to_float(src, dst, n_blocks);
    head = std::min<std::size_t>(n_blocks, (64 - misaligned) / sizeof(float));
    traits.to_float(src, dst, head);
  }
  stream(src + head * traits.type_size, dst + head, n_blocks - head);
#if GGUFS_X86_KERNELS
  _mm_sfence();  // streaming stores are weakly ordered: make them visible before returning
#endif
}

}  // namespace ggufs
