// Finding the models of a library: a folder of GGUF files (the Hugging Face cache included) and
// Ollama's model store. Only names and file status are read here; each model's files are opened
// by LibraryEntry::open, on first use.
#pragma once

#include <string>
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
/// Throws IoError naming `dir` when it cannot be read itself.
std::vector<LibraryEntry> find_gguf_models(const std::string& dir,
                                           std::vector<std::string>& warnings);

/// Ollama's model store: $OLLAMA_MODELS, else $HOME/.ollama/models (Ollama's envconfig.Models).
std::string ollama_store_path();

/// The models of the Ollama store at `store`: one entry per manifest
/// `manifests/<registry>/<namespace>/<model>/<tag>`, named as `ollama list` names them:
/// `<model>:<tag>` for registry.ollama.ai/library, `<namespace>/<model>:<tag>` for other
/// namespaces of registry.ollama.ai, `<registry>/<namespace>/<model>:<tag>` otherwise. Entries
/// are sorted by name; each opens its manifest's model blob (open_ollama_manifest). Throws
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

/// Opens the model a manifest names: the manifest (an OCI image manifest, JSON) is read, its
/// first layer of media type kOllamaModelMediaType gives the digest `sha256:<64 hex digits>`,
/// and the blob `blobs/sha256-<hex>` of `store` is opened with open_model. Throws IoError when
/// the manifest or the blob cannot be read or the blob's size differs from the layer's `size`
/// (the message names the file), ParseError when the manifest is not JSON (byte offset of the
/// syntax error) or has no such layer or a malformed digest (offset 0), and what open_model
/// throws for the blob.
Model open_ollama_manifest(const std::string& store, const std::string& manifest);

}  // namespace ggufs
