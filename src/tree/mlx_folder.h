// mlx/'s own parts (folder_views.h, mlx_folder_layout): which hf/ weights keep ggml's blocks in
// MLX's quantized form, their tensors, and config.json's "quantization". The folder itself is
// laid out with hf/'s steps (hf_folder.cpp), from the same state_dict (hf_weights.h).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_weights.h"
#include "ggufs/mlx_blocks.h"
#include "safetensors_file.h"

namespace ggufs {

/// The form of one module of mlx/ that mlx-lm could quantize (a 2-D `.weight`): its name (the
/// weight's minus ".weight") and its MLX form, or nullptr where it is served as float32.
struct MlxModule {
  std::string name;
  const MlxBlockForm* form = nullptr;
};

/// mlx/'s state_dict: hf/'s `weights` under mlx-lm's names (`names`, HfModel::mlx_names). Each
/// GGUF expert stack whose experts are all there, in order, as kSelect weights named by
/// names.experts becomes one weight under mlx-lm's stacked name, of shape [E, out, in] and
/// transform kNone (GGUF's stack, ne = [in, out, E], holds the stacked tensor's elements in
/// order); a stack that is not whole keeps hf/'s per-expert names (mlx-lm's sanitize stacks
/// them). Each weight names.unfused names becomes its GGUF tensors as stored (kNone, their numpy
/// shapes) under mlx-lm's names. `stacked[i]` says whether weights[i] is a 3-D stack of experts.
struct MlxWeights {
  std::vector<HfWeight> weights;
  std::vector<bool> stacked;
};
MlxWeights mlx_weights(const GgufFile& file, const std::vector<HfWeight>& weights,
                       const MlxNames& names);

/// The bytes one row of `ne0` elements in MLX form `form` takes in an mlx/ piece of kind `kind`:
/// its packed uint32 words (kMlxWeight), a float32 (kMlxScales, kMlxBiases) or a byte
/// (kMlxScaleBytes) per group. The layout (mlx_tensors) and the read (ContentReader::read_mlx)
/// both size rows by it.
std::uint64_t mlx_row_bytes(Piece::Kind kind, const MlxBlockForm& form, std::uint64_t ne0);

/// Weight `w` as MLX's quantized `<module>.weight` (U32), `.scales` and `.biases` (F32),
/// appended to `out`, when its GGUF tensors keep their blocks exactly: a 2-D `.weight` whose
/// transform moves whole rows (kNone, kFirstRows, kReversePermute, kConcatRows; not one expert of
/// a stack), or, where `stack`, a whole expert stack [E, out, in] (mlx_weights; mlx-lm's
/// QuantizedSwitchLinear: weight [E, out, in·bits/32], scales and biases [E, out, in/group]); all
/// of one ggml type with an affine MLX form (mlx_blocks.h), in a little-endian file; or a stack of
/// MXFP4 (mode "mxfp4": `.weight` and `.scales` as uint8 E8M0 bytes [E, out, in/32], no biases;
/// a block whose exponent byte is 255, which MLX reads as infinity, fails its read). Otherwise,
/// where `requantize` (-o mlx_requantize) names the bits of mlx_requantized_form and every GGUF
/// tensor of `w` holds decodable ggml blocks (not a float type) with rows of whole groups of 32,
/// the same tensors with rows quantized on read by MLX's own affine quantize (Piece::mlx_bits; a
/// row holding NaN or infinity fails its read). Returns the form, or nullptr (and `out`
/// unchanged) where `w` is served as float.
const MlxBlockForm* mlx_tensors(const GgufFile& file, const HfWeight& w, bool stack,
                                std::uint32_t requantize, std::vector<SafetensorsTensor>& out);

/// mlx/'s config.json (`config`) with mlx-lm's "quantization" and its copy
/// "quantization_config" (mlx_lm/utils.py, load_model): the most common form of `modules` as
/// the default {"group_size", "bits", "mode"}, an entry per module of another form, `false` per
/// module served as float. Unchanged when no module is quantized (mlx-lm loads it as float).
void add_mlx_quantization(nlohmann::json& config, const std::vector<MlxModule>& modules);

}  // namespace ggufs
