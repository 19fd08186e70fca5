// mlx/'s own parts (folder_views.h, mlx_folder_layout): which hf/ weights keep ggml's blocks in
// MLX's quantized form, their tensors, and config.json's "quantization". The folder itself is
// laid out with hf/'s steps (hf_folder.cpp), from the same state_dict (hf_weights.h).
#pragma once

#include <string>
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

/// Weight `w` as MLX's quantized `<module>.weight` (U32), `.scales` and `.biases` (F32),
/// appended to `out`, when its GGUF tensors keep their blocks exactly: a 2-D `.weight` whose
/// transform moves whole rows (kNone, kFirstRows, kReversePermute, kConcatRows; not an expert of a
/// stack), all of one ggml type with an affine MLX form (mlx_blocks.h), in a little-endian file.
/// Returns the form, or nullptr (and `out` unchanged) where `w` is served as float.
const MlxBlockForm* mlx_tensors(const GgufFile& file, const HfWeight& w,
                                std::vector<SafetensorsTensor>& out);

/// config.json (`config_json`, hf/'s) with mlx-lm's "quantization" and its copy
/// "quantization_config" (mlx_lm/utils.py, load_model): the most common form of `modules` as
/// the default {"group_size", "bits", "mode"}, an entry per module of another form, `false` per
/// module served as float. Unchanged when no module is quantized (mlx-lm loads it as float).
/// Re-dumped with sorted keys and indent 2, as hf/ writes it.
void add_mlx_quantization(std::string& config_json, const std::vector<MlxModule>& modules);

}  // namespace ggufs
