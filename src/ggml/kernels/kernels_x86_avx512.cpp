// AVX-512 block decoders: the decoders whose output goes through the cache (TypeTraits::to_float at
// the AVX-512 level). The body is in kernels_x86_avx512.inc.
#define GGUFS_AVX512_NAMESPACE avx512
#define GGUFS_AVX512_STREAM 0
#include "kernels_x86_avx512.inc"
