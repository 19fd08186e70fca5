// AVX-512 block decoders: the same decoders with non-temporal output stores (decode_streaming,
// decode.h). The body is in kernels_x86_avx512.inc.
#define GGUFS_AVX512_NAMESPACE avx512_stream
#define GGUFS_AVX512_STREAM 1
#include "kernels_x86_avx512.inc"
