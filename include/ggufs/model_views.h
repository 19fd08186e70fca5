// Whole-model views: files at the mount's root that hold the whole model in another container,
// laid out at mount time as pieces (rendered header bytes, padding, spliced byte ranges of the
// model's files, decoded tensors). A new whole-model view is one row of kModelViews and one
// layout function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/gguf.h"
#include "ggufs/tree.h"

namespace ggufs {

/// A laid-out whole-model file: `text` holds the rendered bytes that kText pieces refer to.
struct ModelLayout {
  std::string text;
  std::vector<Piece> pieces;  ///< in order, without gaps, from byte 0
  std::string what;           ///< what the file is, for user.ggufs.view
  std::uint64_t size() const { return pieces.empty() ? 0 : pieces.back().at + pieces.back().size; }
};

/// Lays out a whole-model view of `file`; nullopt when the view cannot be offered for it. Each
/// thing left out (a tensor, or the whole view) adds one line to `warnings`.
using LayoutFn = std::optional<ModelLayout> (*)(const GgufFile& file, const TreeOptions& options,
                                                std::vector<std::string>& warnings);

/// `model.gguf`: one GGUF file holding the whole model. A single file is its own bytes (one
/// kSource piece). A split model is the file llama.cpp's `llama-gguf-split --merge` writes
/// (tools/gguf-split/gguf-split.cpp, gguf_merge; ggml's gguf.cpp, gguf_write_to_buf): a GGUF v3
/// header with the first shard's key/values in order, except that split.count is removed and
/// appended last as uint16 0 (gguf_set_val_u16 removes a key and appends it); every tensor info
/// of every shard in shard order, n_dims written as ggml_n_dims (trailing ne of 1 dropped, at
/// least 1), offsets the running sum of the tensors' byte sizes each padded to the alignment;
/// zero padding to the alignment after the header and after each tensor's data. The tool pads
/// to 32 bytes whatever general.alignment says; this layout pads to general.alignment (the same
/// for the default 32, and a valid file otherwise). Not offered for a big-endian split model, or
/// one with a tensor of unknown size.
std::optional<ModelLayout> merged_gguf_layout(const GgufFile& file, const TreeOptions& options,
                                              std::vector<std::string>& warnings);

/// `model.safetensors` (the safetensors format: 8-byte little-endian header length N, N bytes of
/// JSON padded with spaces to a multiple of 8, then one buffer that the tensors' data_offsets
/// cover exactly, in file order). Every tensor that has f32/ (decodes_to_f32) or is a plain
/// I8, I16, I32, I64 or F64 tensor, under its GGUF name, shape = ne reversed. dtype: F32, F16,
/// BF16, F64, I8, I16, I32, I64 as stored (little-endian), quantized types F32 (bit-equal to
/// f32/); with options.safetensors_dtype set, every floating tensor in that dtype, rounded from
/// its f32/ values. "__metadata__" holds "format": "pt", every scalar key as its
/// metadata/<key> text without the final newline (arrays left out), and, when tensors had to be
/// left out, "ggufs.omitted_tensors": a JSON array of their names. Not offered when the header
/// would pass the format's 100 000 000-byte limit.
std::optional<ModelLayout> safetensors_layout(const GgufFile& file, const TreeOptions& options,
                                              std::vector<std::string>& warnings);

/// A whole-model file at the mount's root.
struct ModelView {
  std::string_view name;  ///< file name at the root
  LayoutFn layout;
};

/// Every whole-model view, in the order of their files.
inline constexpr ModelView kModelViews[] = {
    {"model.gguf", merged_gguf_layout},
    {"model.safetensors", safetensors_layout},
};

}  // namespace ggufs
