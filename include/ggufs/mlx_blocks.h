// ggml's quantized blocks in MLX's quantized form, exactly: for each ggml type whose values MLX
// can reproduce bit for bit, the MLX quantization (mode, bits, group size) and an encoder of one
// row. The foundation of serving a model as an MLX (mlx-lm) model without requantizing.
//
// MLX's form of a quantized matrix [out, in] (mlx `mlx/ops.cpp`, affine_quantize /
// affine_dequantize / fp_dequantize; CPU `mlx/backend/cpu/quantized.cpp`; mlx-lm
// `mlx_lm/utils.py`, whose config "quantization" names group_size, bits and mode, per layer too):
// - `weight`: uint32 [out, in·bits/32], a bit stream over little-endian uint32 words, least
//   significant bit first: element i of a row is bits [i·bits, (i+1)·bits) of the row's stream,
//   so 3-, 5- and 6-bit values cross word boundaries;
// - mode "affine": `scales` and `biases` [out, in/group_size] (float32 here), and element i
//   dequantizes to scale·q + bias (one float32 product, then one float32 sum) with the scale and
//   bias of group i div group_size;
// - modes "mxfp4" and "nvfp4": 4-bit E2M1 codes (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
//   negatives) and uint8 `scales` [out, in/group_size], no biases: an E8M0 exponent e
//   (2^(e − 127), group 32) or an FP8 E4M3 value (group 16).
//
// The exact forms (ggml's values: src/ggml/README.md §6–§11; ggml's ggml-quants.c
// dequantize_row_*). Every product either side forms here is exact in float32 (a binary16's 11
// significant bits times integers of at most 8, or 6 and then 5, bits: at most 22), so ggml's
// one rounded sum or difference and MLX's agree, fused or not; only the sign of a zero may
// differ (ggml's 0·d is −0 for a negative d, MLX's d·q + (−d·q) is +0), so values compare equal
// with ==, not bit for bit:
// - Q4_0, Q5_0: d·(q − 8), d·(q − 16) → affine 4 or 5 bits, group 32, scale d, bias −8d, −16d;
// - Q4_1, Q5_1: d·q + m → affine 4 or 5 bits, group 32, scale d, bias m;
// - Q8_0, Q8_1: d·q with q int8 → affine 8 bits, group 32, q + 128 stored, bias −128d;
// - Q4_K, Q5_K: (d·sc)·q − dmin·mn per 32 → affine 4 or 5 bits, group 32, scale d·sc (ggml's
//   float32 product), bias −(dmin·mn);
// - TQ1_0, TQ2_0 (one d per 256), Q2_0 (per 64): d·(q − 1) → affine 2 bits, group 128 (MLX's
//   largest), 64 for Q2_0, scale d, bias −d;
// - Q1_0: ±d per 128 → affine 2 bits, group 128, q 0 or 2, scale d, bias −d;
// - MXFP4: E2M1·2^(e − 127) → mxfp4 (group 32): the E8M0 byte as stored, codes in element order;
// - NVFP4: E2M1·UE4M3 per 16 → nvfp4 (group 16): the scale byte as E4M3 (bit 7 cleared, 0x7F as
//   0x00), codes in element order.
// No exact form: Q2_K, Q3_K and Q6_K (a scale per 16 elements, below MLX's smallest affine group of
// 32), Q8_K (a float32 d: d·(q + 128) is not exact), the IQ types (non-uniform grids) and the plain
// types (served as float).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ggufs/ggml_type.h"

namespace ggufs {

/// MLX's quantization modes, as mlx-lm's config and mx.dequantize name them (mode_name).
enum class MlxMode : std::uint8_t { kAffine, kMxfp4, kNvfp4 };

/// "affine", "mxfp4", "nvfp4".
std::string_view mlx_mode_name(MlxMode mode);

/// The MLX form of one ggml type: the parameters of mlx-lm's per-layer "quantization" entry.
struct MlxBlockForm {
  GgmlType type;             ///< the ggml type
  MlxMode mode;              ///< MLX's mode
  std::uint32_t bits;        ///< bits per element in the packed weight: 2, 4, 5 or 8
  std::uint32_t group_size;  ///< elements per scale (and bias): 16, 32, 64 or 128
};

/// MLX's own affine form of float32 values, `bits` (2, 3, 4, 5, 6 or 8) a value, group 32 (the
/// form mlx_lm.convert writes with --q-bits and --q-group-size 32); nullptr for another `bits`.
/// Its `type` is GGML_TYPE_F32: the values it quantizes (quantize_mlx_row), not blocks it keeps.
const MlxBlockForm* mlx_requantized_form(std::uint32_t bits);

/// Every ggml type with an exact MLX form, in type id order.
std::span<const MlxBlockForm> mlx_block_forms();

/// The MLX form of ggml type `type`, or nullptr when it has none (see above) or is unknown.
const MlxBlockForm* mlx_block_form(std::uint32_t type);

/// The outputs of one row of `ne0` elements (ne0 = whole blocks × the type's block size).
/// Word and element counts, not bytes.
struct MlxRow {
  std::span<std::uint32_t> weight;      ///< ne0 · bits / 32 words (native uint32 values)
  std::span<float> scales;              ///< affine: ne0 / group_size; mxfp4, nvfp4: empty
  std::span<float> biases;              ///< affine: ne0 / group_size; mxfp4, nvfp4: empty
  std::span<std::uint8_t> scale_bytes;  ///< mxfp4, nvfp4: ne0 / group_size; affine: empty
};

/// Words of one row's packed weight: ne0 · bits / 32.
std::size_t mlx_weight_words(const MlxBlockForm& form, std::size_t ne0);

/// Groups (scales, and biases for affine) of one row: ne0 / group_size.
std::size_t mlx_groups(const MlxBlockForm& form, std::size_t ne0);

/// Whether encode_mlx_row wrote MLX's exact form of the row.
enum class MlxRowStatus {
  kOk,
  /// A block's scale has no MLX equivalent, so MLX's value would differ from ggml's: an MXFP4
  /// exponent 255 (ggml reads 2^127, MLX 2^128 = inf), an NVFP4 scale byte 0xFF (ggml ignores
  /// bit 7 and reads 480, above E4M3's largest finite 448), or an infinite fp16 d of a form
  /// d·(q − k) (Q4_0, Q5_0, Q8_0, Q8_1, TQ1_0, TQ2_0, Q1_0, Q2_0: ggml's (q − k)·d is ±inf, or NaN
  /// at q = k, MLX's d·q + (−k·d) NaN for every q). The outputs are then partly written.
  kNoExactForm,
  /// quantize_mlx_row: a value is NaN or infinite, or a group's range (max − min) or the
  /// dequantized value of one of its codes overflows float32 (MLX's own quantize then gives an
  /// infinite scale and NaN weights), which MLX's affine form cannot hold. The outputs are then
  /// partly written.
  kNotFinite,
};

/// Encodes one row: `blocks` holds the row's whole blocks of ggml type `type` as stored
/// (little-endian; blocks.size() bytes, a multiple of the type's bytes per block), and `out` the
/// spans of sizes mlx_weight_words and mlx_groups for ne0 = blocks.size() / type_size ×
/// block_size. Either part may be left out: `out.weight` empty, only the scales (and biases) are
/// written (a reader of those alone skips the packing); `out.scales`, `out.biases` and
/// `out.scale_bytes` all empty, only the weight (the status is the same either way). Writes no
/// other memory and allocates nothing. Throws
/// std::invalid_argument when `type` has no MLX form, blocks.size() is not a whole number of
/// blocks, or a span has another size.
MlxRowStatus encode_mlx_row(std::uint32_t type, std::span<const std::uint8_t> blocks,
                            const MlxRow& out);

/// Quantizes one row of float32 values as MLX's affine quantize does on the CPU, bit for bit
/// (mx.quantize, mode "affine": mlx/backend/cpu/quantized.cpp, quantize; all in float32): per
/// group of form.group_size values, scale = max((max − min) / (2^bits − 1), 1e-7), negated
/// unless |min| > |max|; edge = min or max (the larger magnitude); q0 = rint(edge / scale); where
/// q0 ≠ 0, scale = edge / q0 and bias = edge, else bias 0; each q = clamp(rint((x − bias) /
/// scale), 0, 2^bits − 1), packed as encode_mlx_row packs. `values` holds ne0 elements, a multiple
/// of form.group_size, and `out` the spans of mlx_weight_words and mlx_groups sizes (scale_bytes
/// empty; weight may be empty, then only the scales and biases are written). Returns kNotFinite
/// when a value is NaN or infinite, or a group's range or the dequantized value (scale·q + bias)
/// of its smallest or largest value is not finite in float32. Allocates nothing. Throws
/// std::invalid_argument when `form` is not affine, ne0 is not whole groups, or a span has another
/// size.
MlxRowStatus quantize_mlx_row(std::span<const float> values, const MlxBlockForm& form,
                              const MlxRow& out);

}  // namespace ggufs
