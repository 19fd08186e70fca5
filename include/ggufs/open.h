// Opening what a mount serves from what the user names (a GGUF file, a split model's first shard,
// an http(s)://, s3:// or hf:// URL, "ollama:NAME[:TAG]", a folder or "ollama:" as a library) with
// the mount's choices: shared by the ggufs command (src/daemon) and the Python package
// (src/python), so that both serve the same tree from the same source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/http_source.h"
#include "ggufs/library.h"
#include "ggufs/library_scan.h"
#include "ggufs/model.h"
#include "ggufs/tree.h"

namespace ggufs {

/// A wrong option value: what() is the one line to show ("hf_dtype=f8: must be f32, f16 or
/// bf16"); the ggufs command prefixes "-o " and exits with kExitUsage, the Python package raises
/// ValueError.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// `value` of option `option` (safetensors_dtype, hf_dtype, mlx_dtype): "f32", "f16" or "bf16".
/// Throws UsageError otherwise.
ViewData parse_float_dtype(std::string_view option, std::string_view value);

/// hf_max_shard_size: bytes, or a count of KB, MB, GB or TB (powers of 1000, as save_pretrained's
/// max_shard_size="5GB"; huggingface_hub's parse_size_to_int), positive and at most 2^50 bytes.
/// Throws UsageError otherwise.
std::uint64_t parse_shard_size(std::string_view value);

/// mlx_requantize: 0 (off), 8, 6 or 4 bits. Throws UsageError otherwise.
std::uint32_t parse_mlx_requantize(std::uint64_t bits);

/// "ollama:" names Ollama's whole store (a library); "ollama:NAME[:TAG]" one of its models.
inline constexpr std::string_view kOllamaScheme = "ollama:";
inline bool is_ollama(std::string_view source) { return source.starts_with(kOllamaScheme); }

/// The folder whose models `source` serves as a library: `source` itself when it is a local
/// folder, Ollama's store for "ollama:" (then `store`, when given, receives it with why it is the
/// one); nullopt for a model. Never throws but std::bad_alloc.
std::optional<std::string> library_folder(const std::string& source, OllamaStore* store = nullptr);

/// The models of library `folder` (find_ollama_models for "ollama:", else find_gguf_models),
/// none opened. Throws IoError naming the folder when it cannot be read.
std::vector<LibraryEntry> find_library_models(const std::string& folder, const std::string& source,
                                              std::vector<std::string>& warnings);

/// Opens and parses the model `source` names: a GGUF file, a split model's first shard or a URL
/// (open_model with open_source), or "ollama:NAME[:TAG]" (the blob its manifest names in the
/// store find_ollama_store chooses; `store`, when given, receives that store). Throws UsageError
/// for a malformed Ollama reference, IoError (a missing manifest: "NAME: no such model in the
/// Ollama store ...") and ParseError as open_model does.
Model open_named_model(const std::string& source, const RemoteOptions& remote,
                       const ShardProgress& progress = {}, OllamaStore* store = nullptr);

/// Everything a mount takes besides its mount point.
struct OpenOptions {
  RemoteOptions remote;
  TreeOptions tree;
  std::string mmproj;  ///< --mmproj: a vision projector to pair a single model with; empty: none
};

/// What `ggufs SOURCE MNT` serves, without mounting it: a library (library_folder) or one model
/// (open_named_model, paired with options.mmproj, laid out as ServedModel). `warnings` receives
/// the lines the daemon logs at mount (a model's left-out tensors, a library's unreadable
/// folders); `log` the lines a library logs as its models open; `metadata`, where given, receives
/// a single model's metadata pairs (ServedModel keeps only their rendered files). Throws UsageError
/// (an --mmproj with a library; a bad Ollama reference), IoError, ParseError (the file or projector
/// at fault), std::bad_alloc.
std::unique_ptr<Library> open_served(const std::string& source, const OpenOptions& options,
                                     std::vector<std::string>& warnings, LibraryLog log = {},
                                     std::vector<KeyValue>* metadata = nullptr);

/// The extended attributes of node `f` as the mount shows them: those of its tensor for the
/// per-tensor views (tensor_xattrs), user.ggufs.view for what a whole-model file or folder view
/// is, and those the tree set (a model root's user.ggufs.hf: why a folder view is absent).
std::vector<std::pair<std::string, std::string>> node_xattrs(const Library::Found& f);

}  // namespace ggufs
