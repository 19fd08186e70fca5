// The ggml tensor type table: one entry per type id, the only place that knows block sizes,
// bytes per block and which decoder a type uses (source: src/ggml/README.md §2).
//
// Each type has a scalar reference decoder (kernels.h) and, where it pays, SIMD decoders for x86-64
// (SSE4.1; AVX2 with F16C; AVX-512) and arm64 (NEON). `to_float` is the fastest decoder the CPU
// supports, chosen once at the first use of the table, so one binary runs on every machine of its
// architecture. The environment variable GGUFS_ISA caps the level for tests and benchmarks:
// `scalar`, `sse4.1`, `avx2`, `avx512` or `neon` (a level above what the CPU supports is lowered
// to it; unset, empty or an unknown name means the best level). SIMD decoders give the same
// float32 bits as the reference (a NaN may come out as another NaN). Other architectures use the
// reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ggufs {

/// ggml's tensor type ids, with ggml's names: the values of `enum ggml_type` in ggml's
/// ggml/include/ggml.h, which GGUF stores in every tensor info (src/ggml/README.md §2). The
/// names are ggml's own so that code here reads like ggml's; code that writes a type id names it.
/// Ids 4, 5, 31–33 and 36–38 were removed from GGUF and have no name, as in ggml; a file may still
/// hold them, or an id ≥ GGML_TYPE_COUNT, so ids read from files stay std::uint32_t.
enum GgmlType : std::uint32_t {
  GGML_TYPE_F32 = 0,
  GGML_TYPE_F16 = 1,
  GGML_TYPE_Q4_0 = 2,
  GGML_TYPE_Q4_1 = 3,
  // 4 (Q4_2) and 5 (Q4_3): removed
  GGML_TYPE_Q5_0 = 6,
  GGML_TYPE_Q5_1 = 7,
  GGML_TYPE_Q8_0 = 8,
  GGML_TYPE_Q8_1 = 9,
  GGML_TYPE_Q2_K = 10,
  GGML_TYPE_Q3_K = 11,
  GGML_TYPE_Q4_K = 12,
  GGML_TYPE_Q5_K = 13,
  GGML_TYPE_Q6_K = 14,
  GGML_TYPE_Q8_K = 15,
  GGML_TYPE_IQ2_XXS = 16,
  GGML_TYPE_IQ2_XS = 17,
  GGML_TYPE_IQ3_XXS = 18,
  GGML_TYPE_IQ1_S = 19,
  GGML_TYPE_IQ4_NL = 20,
  GGML_TYPE_IQ3_S = 21,
  GGML_TYPE_IQ2_S = 22,
  GGML_TYPE_IQ4_XS = 23,
  GGML_TYPE_I8 = 24,
  GGML_TYPE_I16 = 25,
  GGML_TYPE_I32 = 26,
  GGML_TYPE_I64 = 27,
  GGML_TYPE_F64 = 28,
  GGML_TYPE_IQ1_M = 29,
  GGML_TYPE_BF16 = 30,
  // 31–33 (Q4_0_4_4, Q4_0_4_8, Q4_0_8_8): removed
  GGML_TYPE_TQ1_0 = 34,
  GGML_TYPE_TQ2_0 = 35,
  // 36–38 (IQ4_NL_4_4, IQ4_NL_4_8, IQ4_NL_8_8): removed
  GGML_TYPE_MXFP4 = 39,
  GGML_TYPE_NVFP4 = 40,
  GGML_TYPE_Q1_0 = 41,
  GGML_TYPE_Q2_0 = 42,
  GGML_TYPE_COUNT = 43,  ///< the first unknown id
};

/// Decodes `n_blocks` consecutive blocks of one ggml type to float32.
/// `src` holds n_blocks × type_size bytes (as stored in the file, little-endian);
/// `dst` receives n_blocks × block_size floats (elements, not bytes). Never fails.
using BlockDecoder = void (*)(const std::uint8_t* src, float* dst, std::size_t n_blocks);

/// Traits of one ggml type (src/ggml/README.md §2, "All types").
struct TypeTraits {
  GgmlType id;                ///< ggml type id as stored in a tensor info
  std::string_view name;      ///< ggml type name as users know it: "Q4_K", "BF16"
  std::uint32_t block_size;   ///< elements per block (1 for plain types, 32..256 for quants)
  std::uint32_t type_size;    ///< bytes per block
  BlockDecoder to_float;      ///< the fastest decoder for this CPU; nullptr where ggufs does not
                              ///< decode this type (none today; unit_kernels.cpp's policy)
  BlockDecoder to_float_ref;  ///< the scalar reference decoder (for tests), nullptr likewise
};

/// Instruction set levels of the decoders, in increasing order; on x86-64 each includes the ones
/// below. A build has code for its own architecture's levels only: on arm64 the levels are
/// kScalar and kNeon, and a request for an x86-64 level there gets the reference decoders.
enum class Isa {
  kScalar,  ///< portable C++: the reference decoders
  kSse41,   ///< x86-64 SSE4.1
  kAvx2,    ///< x86-64 AVX2 and F16C
  kAvx512,  ///< x86-64 AVX-512 F, BW, VL and DQ (and AVX2, F16C)
  kNeon,    ///< arm64 Advanced SIMD (NEON)
};

/// "scalar", "sse4.1", "avx2", "avx512", "neon": the names GGUFS_ISA accepts.
std::string_view isa_name(Isa isa);

/// The best level this CPU (and OS) supports; kScalar on other architectures.
Isa cpu_isa();

/// The level `to_float` was chosen for: cpu_isa(), lowered by GGUFS_ISA if that is set.
Isa active_isa();

/// The decoder `traits` would use at level `isa` (lowered to cpu_isa() if above it): the SIMD
/// decoder of the highest level ≤ `isa` that has one, else the reference. For tests and benchmarks.
BlockDecoder decoder_for(const TypeTraits& traits, Isa isa);

/// The decoder of `traits` whose full-vector output stores are non-temporal (the same bits as
/// its AVX-512 decoder): only where the active level is AVX-512 and the type has an AVX-512
/// decoder; nullptr otherwise. It needs `dst` 64-byte aligned and a store fence after it:
/// decode_streaming (decode.h) is the way to call it.
BlockDecoder streaming_decoder_for(const TypeTraits& traits);

/// The traits of type `id`, or nullptr for a removed id (4, 5, 31–33, 36–38) or an unknown one
/// (≥ GGML_TYPE_COUNT): such tensors have no computable byte size (src/ggml/README.md §2).
const TypeTraits* type_traits(std::uint32_t id);

/// Every known type, in id order.
std::span<const TypeTraits> all_types();

/// Bytes of a tensor of `traits` with 4 dimensions `ne` (ne[0] fastest):
/// (ne[0] / block_size) × type_size × ne[1] × ne[2] × ne[3] (src/ggml/README.md §2).
/// nullopt when ne[0] is not a multiple of the block size or the result overflows uint64.
std::optional<std::uint64_t> tensor_bytes(const TypeTraits& traits, const std::uint64_t ne[4]);

}  // namespace ggufs
