// Folder views: folders at the mount's root that hold the whole model as another ecosystem's
// folder of files (hf/: a Hugging Face model folder), laid out at mount time. Their text files are
// rendered then; their weight files are whole-model layouts (model_views.h) read on demand. A new
// folder view is one row of kFolderViews and one layout function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/hf_tokenizer.h"
#include "ggufs/hf_weights.h"
#include "ggufs/model_views.h"
#include "ggufs/tree.h"

namespace ggufs {

/// One file of a folder view: rendered text, or a laid-out file read piece by piece.
struct FolderFile {
  std::string name;
  std::string text;  ///< when `layout` is empty
  std::optional<ModelLayout> layout;
};

/// A laid-out folder.
struct FolderLayout {
  std::vector<FolderFile> files;  ///< in directory order
  std::string what;               ///< what the folder is, for user.ggufs.view
};

/// A folder view of a model, or why there is none.
struct FolderResult {
  std::optional<FolderLayout> folder;
  /// One line naming the key or tensor at fault when `folder` is empty; empty otherwise.
  std::string reason;
};

/// What every folder view is laid out from, rendered once per model: the transformers model
/// (render_hf_model: config.json without "dtype", which each folder adds for its own dtype, and
/// the state_dict plan) and the tokenizer (render_hf_tokenizer). hf/, hf-mxfp4/ and mlx/ are
/// encodings of this one rendering, so a mount plans the model and renders a vocabulary once.
struct HfRendering {
  HfModelResult model;
  HfTokenizerResult tokenizer;
  bool has_vocabulary = false;  ///< the file holds tokenizer.ggml.tokens
  /// With a projector: the vision-language model (render_hf_vision), or why the pair is not one
  /// (hf/ is then the text model alone); hf/ serves it, mlx/ and hf-mxfp4/ the text model.
  std::optional<HfModelResult> vision;
};

/// Renders `file` for the folder views; with `paired` and `projector` (a ProjectorPair:
/// paired_file of `file` and its projector, and the projector's own file), the vision-language
/// model too, whose weights index `paired` (the text model's index both, its tensors first). A
/// projector never takes the text model's rendering away. An out-of-memory while rendering
/// becomes the model's reason ("not enough memory", error.h). Never throws.
HfRendering render_hf(const GgufFile& file, const GgufFile* paired = nullptr,
                      const GgufFile* projector = nullptr);

/// Lays out a folder view of `file` from its rendering (render_hf of the same file). Each thing
/// the folder leaves out adds one line to `warnings`; the reason there is no folder is returned,
/// not added. Never throws for any model.
using FolderLayoutFn = FolderResult (*)(const GgufFile& file, const HfRendering& hf,
                                        const TreeOptions& options,
                                        std::vector<std::string>& warnings);

/// `hf/`: the model as a Hugging Face model folder that transformers 4.57.6 loads with
/// from_pretrained, as its own GGUF import (from_pretrained(dir, gguf_file=…)) would build the
/// model: config.json and generation_config.json (render_hf_config); tokenizer.json,
/// tokenizer_config.json and special_tokens_map.json (render_hf_tokenizer; left out, with a
/// warning, for a model without tokenizer.ggml.tokens, on which AutoTokenizer fails as on the
/// import); the weights (hf_weight_map) as save_pretrained writes them
/// (transformers/modeling_utils.py, save_pretrained; huggingface_hub's
/// split_state_dict_into_shards_factory): tensors taken in state_dict order into shards of at
/// most options.hf_max_shard_size bytes (a larger tensor alone in a shard of its own, listed
/// before the shard being filled), `model.safetensors` for one shard, else
/// `model-0000i-of-0000N.safetensors` and `model.safetensors.index.json`
/// ({"metadata": {"total_parameters", "total_size"}, "weight_map"}, sorted keys, indent 2); in
/// each file the tensors sorted by name (safetensors' writer sorts by dtype, then name), with
/// "__metadata__" {"format": "pt"}. Every tensor has dtype options.hf_dtype: its ggml-decoded
/// float32 values (f32/), transformed as hf_weights.h says, rounded to the dtype; stored bytes of
/// that dtype are spliced where no transform applies. config.json gets "dtype" when hf_dtype is
/// not float32.
///
/// No folder when render_hf_config or hf_weight_map gives none, or render_hf_tokenizer gives none
/// for a model with tokenizer.ggml.tokens (their reason: a model transformers would not load, or
/// would load wrong), or a weight's GGUF
/// tensor has no decoder, is big-endian and quantized, or does not hold the elements its shape
/// needs.
FolderResult hf_folder_layout(const GgufFile& file, const HfRendering& hf,
                              const TreeOptions& options, std::vector<std::string>& warnings);
/// The same, rendering `file` first (render_hf): for a single folder.
FolderResult hf_folder_layout(const GgufFile& file, const TreeOptions& options,
                              std::vector<std::string>& warnings);

/// `hf-mxfp4/`: hf/ with gpt-oss's MXFP4 experts as transformers stores them (the Hub's
/// gpt-oss checkpoints; integrations/mxfp4.py): each experts matrix hf/ serves as `name` becomes
/// `name_blocks` (E, rows, cols/32, 16) and `name_scales` (E, rows, cols/32) U8, the ggml blocks'
/// codes and scales moved, not requantized (the inverse of gpt_oss.py, GptOssModel.repack_mxfp4),
/// gate_up_proj's rows the gate's and the up's alternating (generate_extra_tensors' [::2], [1::2]);
/// config.json gets the Hub's quantization_config, which the GGUF does not carry. Sharded as
/// hf/. No folder when an expert matrix is not MXFP4 or hf/ has none.
FolderResult hf_mxfp4_folder_layout(const GgufFile& file, const HfRendering& hf,
                                    const TreeOptions& options, std::vector<std::string>& warnings);
/// The same, rendering `file` first (render_hf): for a single folder.
FolderResult hf_mxfp4_folder_layout(const GgufFile& file, const TreeOptions& options,
                                    std::vector<std::string>& warnings);

/// `mlx/`: the model as an MLX model folder that mlx-lm 0.32 (mlx_lm.load, mlx_lm.generate) takes
/// as it is, ggml's quantized blocks kept where MLX's quantized form holds them exactly
/// (mlx_blocks.h): hf/'s folder (the same config, tokenizer files, state_dict and shards, every
/// float tensor of options.mlx_dtype, float32 by default, whatever hf_dtype says; expert stacks
/// whole under mlx-lm's names, mlx_weights) except that each 2-D `.weight` (a linear or embedding
/// module) or expert stack whose transform moves whole rows (kNone, kFirstRows, kReversePermute,
/// kConcatRows) and whose GGUF tensors are all of one type with an MLX form is `<module>.weight`
/// (U32 [out, in·bits/32]), `.scales` and `.biases` (F32 [out, in/group_size]), encoded row by
/// row on read (encode_mlx_row), or, with options.mlx_requantize, quantized by MLX's own affine
/// quantize where they hold other ggml blocks (mlx_folder.h, mlx_tensors); config.json gets
/// mlx-lm's "quantization" and "quantization_config" (add_mlx_quantization) and, where a value
/// is not ggml's (requantized, or rounded by mlx_dtype), "ggufs_not_exact": name → what was done.
/// No folder where hf/ has none (its reason).
FolderResult mlx_folder_layout(const GgufFile& file, const HfRendering& hf,
                               const TreeOptions& options, std::vector<std::string>& warnings);
/// The same, rendering `file` first (render_hf): for a single folder.
FolderResult mlx_folder_layout(const GgufFile& file, const TreeOptions& options,
                               std::vector<std::string>& warnings);

/// Whether the file is gpt-oss with MXFP4 experts (hf-mxfp4/ is a view of it).
bool has_mxfp4_experts(const GgufFile& file);

/// A folder at the mount's root.
struct FolderView {
  std::string_view name;  ///< the folder's name at the root
  /// Extended attribute of the model's root that says why the folder is not offered.
  std::string_view absent_xattr;
  FolderLayoutFn layout;
  /// Whether the view is one of this kind of model at all (null: every model); where not, it is
  /// neither offered nor said to be absent.
  bool (*applies)(const GgufFile& file) = nullptr;
};

/// Every folder view, in the order of their folders.
inline constexpr FolderView kFolderViews[] = {
    {"hf", "user.ggufs.hf", hf_folder_layout},
    {"hf-mxfp4", "user.ggufs.hf-mxfp4", hf_mxfp4_folder_layout, has_mxfp4_experts},
    {"mlx", "user.ggufs.mlx", mlx_folder_layout},
};

}  // namespace ggufs
