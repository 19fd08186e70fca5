// A safetensors file laid out as pieces, shared by model.safetensors and hf/'s weight files.
// The format (safetensors' docs, "Format"): 8-byte little-endian header length N, N bytes of JSON
// padded with spaces to a multiple of 8, then one byte buffer that the tensors' data_offsets
// cover exactly, in file order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/model_views.h"
#include "ggufs/tree.h"

namespace ggufs {

/// One tensor of a safetensors file.
struct SafetensorsTensor {
  std::string key;                   ///< its JSON key: valid UTF-8, unique in the file
  std::string_view dtype;            ///< "F32", "F16", "BF16", …
  std::vector<std::uint64_t> shape;  ///< elements, outermost first
  /// Where its bytes come from, in order (`at` is set here): one piece, or several for an hf/
  /// weight the converter split (hf_weights.h, kConcatRows).
  std::vector<Piece> pieces;

  /// Its bytes.
  std::uint64_t size() const {
    std::uint64_t n = 0;
    for (const Piece& p : pieces) n += p.size;
    return n;
  }
};

/// The safetensors dtype of float elements of form `d` ("F32", "F16", "BF16").
constexpr std::string_view safetensors_dtype_name(ViewData d) {
  return d == ViewData::kFloat16 ? "F16" : d == ViewData::kBFloat16 ? "BF16" : "F32";
}

/// Lays out a safetensors file whose "__metadata__" is the JSON object text `metadata` and whose
/// buffer holds `tensors` in this order. nullopt, with a warning naming `file_name`, when the
/// header would pass the format's 100 000 000-byte limit (safetensors' MAX_HEADER_SIZE).
std::optional<ModelLayout> lay_out_safetensors(std::string metadata,
                                               const std::vector<SafetensorsTensor>& tensors,
                                               std::string_view file_name,
                                               std::vector<std::string>& warnings);

}  // namespace ggufs
