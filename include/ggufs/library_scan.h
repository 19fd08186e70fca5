// Finding the models of a library: a folder of GGUF files (the Hugging Face cache included) and
// Ollama's model store. Only names and file status are read here; each model's files are opened
// by LibraryEntry::open, on first use.
#pragma once

#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/library.h"
#include "ggufs/model.h"

namespace ggufs {

/// The models in folder `dir`, searched recursively, following symbolic links (the Hugging Face
/// cache links snapshots/<revision>/<file> to blobs/<hash>; a folder reached twice is searched
/// once). A model is a file named `*.gguf` (an entry named `<name>`: the file name without
/// ".gguf") or the shards of one split model, `<prefix>-NNNNN-of-MMMMM.gguf` (llama.cpp's
/// gguf-split names; one entry named after the prefix, opened from its lowest-numbered shard,
/// open_model finding the rest). Names beginning with '.' are skipped (the Hugging Face cache's
/// .locks and .no_exist, version-control folders). One file reached by several paths (two
/// snapshots of one blob) is one entry, at the first path. Entries come sorted by path. A
/// `*.gguf` name that cannot be examined (a dangling link) is still an entry, whose opening
/// then fails and says why. A sub-folder that cannot be read adds a line to `warnings`.
/// Vision projectors (is_projector_name) are entries too, and pair with the models beside them
/// (LibraryEntry::projector): where a folder holds one, every other model of that folder opens
/// with it, all sharing one parsed copy (ProjectorCache); where it holds several, none does, and
/// LibraryEntry::unpaired names them (a repository's projectors of several precisions: which one is
/// meant is not known). Throws IoError naming `dir` when it cannot be read itself.
std::vector<LibraryEntry> find_gguf_models(const std::string& dir,
                                           std::vector<std::string>& warnings);

/// Whether the file named `path` is a vision projector by its name, as the Hugging Face
/// repositories and llama.cpp name them (`mmproj-model-f16.gguf`, `mmproj-F16.gguf`,
/// `gemma-3-4b-it-mmproj.gguf`): its file name holds "mmproj", in any case.
bool is_projector_name(std::string_view path);

/// The vision projectors of one library, each opened and parsed once, by the first model that
/// pairs with it, then shared by every model that does (Model::projector): a library's memory
/// grows with its files, not with its models times its projector. Every scan makes one for the
/// entries it returns. Thread-safe: a library opens its models from several threads; a projector
/// being opened is waited for, not opened twice.
class ProjectorCache {
 public:
  /// The projector at `path` (open_model), opened on the first call for it. One that could not
  /// be read or parsed throws the first call's IoError or ParseError on every call, without
  /// being opened again; any other failure (memory ran out) is not kept: a later call retries.
  std::shared_ptr<const Model> open(const std::string& path);
  /// Projectors opened (or failed) so far.
  std::size_t size() const;

 private:
  struct Slot {
    std::mutex mu;  // held while the projector opens
    std::shared_ptr<const Model> model;
    std::exception_ptr error;
  };
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Slot>> slots_;
};

/// Opens the model at `path` (open_model) and, where `projector` is not empty, pairs it with the
/// projector at that path (attach_projector), taken from `projectors` when given (shared with
/// the other models that pair with it). A projector that does not open, or is none, leaves the
/// model unpaired, Model::unpaired naming the file and what was wrong; `unpaired` (a scan's
/// reason) is set as Model::unpaired as it is. Throws what open_model throws for `path`.
Model open_paired(const std::string& path, const std::string& projector,
                  const std::string& unpaired, ProjectorCache* projectors = nullptr);

/// Where Ollama's Linux installer keeps the models: it runs Ollama as the system user `ollama`,
/// whose home it makes /usr/share/ollama (ollama's scripts/install.sh, `useradd -d`).
inline constexpr const char* kOllamaSystemStore = "/usr/share/ollama/.ollama/models";

/// An Ollama model store and why it was chosen (for the log and --info).
struct OllamaStore {
  std::string path;  ///< the store's folder
  std::string why;   ///< e.g. "$OLLAMA_MODELS"
};

/// Ollama's model store: $OLLAMA_MODELS when set and not empty (Ollama's envconfig.Models); else
/// $HOME/.ollama/models (Ollama run by the user) unless it is missing and `system_store` is a
/// folder, or cannot be examined for lack of permission (then `system_store`, so that the mount
/// fails naming it); else $HOME/.ollama/models, missing, for the error to name. Never throws.
OllamaStore find_ollama_store(const std::string& system_store = kOllamaSystemStore);

/// The models of the Ollama store at `store`: one entry per manifest
/// `manifests/<registry>/<namespace>/<model>/<tag>`, named as `ollama list` names them:
/// `<model>:<tag>` for registry.ollama.ai/library, `<namespace>/<model>:<tag>` for other
/// namespaces of registry.ollama.ai, `<registry>/<namespace>/<model>:<tag>` otherwise. Entries
/// are sorted by name; each opens its manifest's model blob (open_ollama_manifest), manifests
/// naming one projector blob sharing its parsed copy (ProjectorCache). Throws
/// IoError naming the folder when `store`/manifests cannot be read.
std::vector<LibraryEntry> find_ollama_models(const std::string& store,
                                             std::vector<std::string>& warnings);

/// The manifest path of model reference `reference` (`NAME[:TAG]`, TAG "latest" when left out;
/// NAME is `model`, `namespace/model` or `registry/namespace/model`, as `ollama pull` takes it)
/// in `store`. Throws std::invalid_argument when the reference is malformed (an empty part, ".",
/// "..", or more than three parts).
std::string ollama_manifest_path(const std::string& store, const std::string& reference);

/// Ollama's media type of the layer holding the model's GGUF file.
inline constexpr const char* kOllamaModelMediaType = "application/vnd.ollama.image.model";
/// Ollama's media type of a layer holding a vision projector (an mmproj GGUF: Ollama's
/// server/images.go, "application/vnd.ollama.image.projector").
inline constexpr const char* kOllamaProjectorMediaType = "application/vnd.ollama.image.projector";

/// What an Ollama manifest says of the layer holding its model.
struct OllamaModelLayer {
  std::string digest_hex;             ///< the 64 lower-case hex digits of the layer's sha256 digest
  std::optional<std::uint64_t> size;  ///< the layer's "size" (bytes), when an unsigned integer
  /// The layers of media type kOllamaProjectorMediaType, in order (each without projectors).
  std::vector<OllamaModelLayer> projectors;
};

/// The first layer of media type kOllamaModelMediaType of the Ollama manifest (an OCI image
/// manifest, JSON) `text`, the content of file `manifest`. Throws ParseError naming `manifest`
/// when `text` is not JSON (at the byte offset of the syntax error, or of a number beyond the
/// range of a double), nests arrays and objects more than 64 levels deep (at the byte offset of
/// the bracket that opens level 65), or has no such layer or a digest that is not
/// `sha256:<64 hex digits>` (at offset 0). Messages quote at most 64 bytes of the manifest at a
/// time, made printable. Its layers of media type kOllamaProjectorMediaType are `projectors`,
/// their digests checked alike.
OllamaModelLayer parse_ollama_manifest(std::string_view text, const std::string& manifest);

/// Opens the model a manifest names: the manifest (an OCI image manifest, JSON) is read, its
/// first layer of media type kOllamaModelMediaType gives the digest `sha256:<64 hex digits>`,
/// and the blob `blobs/sha256-<hex>` of `store` is opened with open_model. Throws IoError when
/// the manifest or the blob cannot be read or the blob's size differs from the layer's `size`
/// (the message names the file), ParseError when the manifest is larger than 1 MiB or as
/// parse_ollama_manifest throws, and what open_model throws for the blob. A manifest with one
/// projector layer opens the model paired with that blob (open_paired: one that does not open
/// leaves the model unpaired, saying why); with several, unpaired. `projectors`: as open_paired
/// takes it (manifests that name one blob share it).
Model open_ollama_manifest(const std::string& store, const std::string& manifest,
                           ProjectorCache* projectors = nullptr);

}  // namespace ggufs
