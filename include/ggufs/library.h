// What a mount serves: one model at the root, or a library of models, one folder each, whose
// files are opened and parsed on the first lookup inside their folder.
#pragma once

#include <time.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ggufs/content.h"
#include "ggufs/model.h"
#include "ggufs/tree.h"

namespace ggufs {

/// One model as a mount serves it: its open files, its tree and its read path. Built once and
/// immutable afterwards; not movable, as the tree and the reader refer to `model.file`.
struct ServedModel {
  /// Builds the tree of `model` (rendering every text file), then drops the parsed metadata
  /// values, which the tree now holds rendered (a vocabulary takes several times its size in the
  /// file as parsed values). With a projector, the folder views are laid out from the pair
  /// (paired_file, dropped once laid out); the reader reads the projector's tensors in its own
  /// file (ContentReader's tail). The projector itself is not modified: it may be shared
  /// (ProjectorCache). Never fails on a parsed model.
  ServedModel(Model model, const TreeOptions& options);
  /// A model that cannot be served: a folder holding only `error`, with `message` (already made
  /// printable) and a newline. `mtime`: the time its folder shows.
  ServedModel(std::string message, const struct timespec& mtime);
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  /// What the tree and the read path index: the model's tensors at their own indices
  /// (`model.file`), its projector's after them (`model.projector->file`), as paired_file
  /// numbers them.
  Model model;
  Tree tree;
  ContentReader reader;
  /// The absolute path of each shard (user.gguf.file); for a remote model its URL without the
  /// query string. Empty for an error folder.
  std::vector<std::string> file_paths;
  /// Of the (first) backing file; the mount time for a remote model. Shown for every node.
  struct timespec mtime {};
  /// One line per thing the tree leaves out: tensors with raw/ files only (no float32 decoding
  /// of their type), unknown type ids, and what the whole-model views could not include. Each
  /// line starts with the model's path.
  std::vector<std::string> warnings;

  /// The descriptor of the local file that `node` is byte for byte, or -1. Only `model.gguf` of
  /// a single-file model qualifies (one kSource piece covering the whole of a file with a
  /// descriptor): not a split model's (a merge), not raw/ (a byte range), not a remote model
  /// (no descriptor). The daemon opens such a node in FUSE passthrough, so the kernel reads the
  /// file itself, without FileSource's checks (a file modified in place shows its new bytes
  /// there instead of failing reads). `node` must belong to this model. Never fails.
  int whole_file_fd(const Node& node) const;

 private:
  // `paired`: paired_file of `model` when it has a projector, made before `model` is moved.
  ServedModel(Model&& model, std::optional<GgufFile> paired, const TreeOptions& options);
};

/// A model in a library, found by a scan (library_scan.h) and opened only when first used.
struct LibraryEntry {
  std::string name;  ///< its folder's name before escaping ("llama3.2:3b", "tiny-llama")
  std::string path;  ///< the file it comes from (a .gguf file, a first shard, an Ollama manifest)
  struct timespec mtime {};  ///< of that file: what its folder shows before it is opened
  /// Opens and parses the model; throws IoError or ParseError (or another std::exception) with a
  /// message naming the file at fault.
  std::function<Model()> open;
  /// The vision projector the scan pairs the model with (open_paired), empty for none.
  std::string projector;
  /// Why the scan pairs none of the projectors beside the model (Model::unpaired), else empty.
  std::string unpaired;
};

/// Called with one line for each model that opened with warnings or failed to open.
using LibraryLog = std::function<void(const std::string& line)>;

/// The inodes of a mount. A single model's tree keeps its own inode numbers (Tree: root 1). In
/// a library, the root (1) lists one folder per entry, and node `n` of entry k's tree has inode
/// ((k + 1) << 32) | n, so an entry's inodes exist before its tree does; its folder is node 1.
/// Thread-safe: entries are opened under a lock of their own, once; found nodes stay valid for
/// the life of the library.
class Library {
 public:
  /// A node and the model it belongs to.
  struct Found {
    const Node* node = nullptr;          ///< nullptr: no such inode
    const ServedModel* model = nullptr;  ///< nullptr for the library's own folders
    Ino base = 0;                        ///< inode of the model's node n: base | n
    struct timespec mtime {};            ///< what the node shows (ServedModel::mtime)
    Ino global(Ino n) const { return base | n; }
  };

  /// A mount of one model: its tree at the root.
  explicit Library(std::unique_ptr<ServedModel> model);

  /// A library of `entries`, in the order given (the folders' listing order). Folder names are
  /// file_name_for(name), cut like long key names (key_file_name) when longer than NAME_MAX;
  /// a name taken by an earlier entry gets "~2", "~3", … (the first free one). `options`: of
  /// every entry's tree; `log`: told of warnings and failures as entries are opened; `mtime`:
  /// what the root shows.
  Library(std::vector<LibraryEntry> entries, const TreeOptions& options, LibraryLog log,
          const struct timespec& mtime);

  /// The node of inode `ino`. An entry's folder (its node 1) is returned as a placeholder (its
  /// name, no children) when `open` is false and the entry is not open yet; otherwise the entry
  /// is opened first (a model that fails to open becomes a folder holding `error`).
  Found find(Ino ino, bool open = true) const;

  /// The inode of `name` in folder `parent`, or 0 when there is none. Opens the entry a folder
  /// belongs to, but not the entry that `name` is the folder of.
  Ino lookup(Ino parent, std::string_view name) const;

  /// The inode of the folder holding folder `ino` (for ".."): the root for the root and for an
  /// entry's folder.
  Ino parent(Ino ino) const;

  /// The path of inode `ino` below the mount point, names joined by '/' ("raw/blk.0.attn_q.weight";
  /// in a library "tiny-llama/raw/..."), for log lines; "" for the root. Opens no model.
  std::string path_of(Ino ino) const;

  /// Inodes that exist now (opened trees and the library's own folders), for statfs.
  std::size_t node_count() const;

  /// The folder names, in entry order (empty for a single model).
  std::vector<std::string> folder_names() const;
  /// Entry `k` (0-based, folder order) as the scan found it; k < folder_names().size().
  const LibraryEntry& entry(std::size_t k) const { return slots_.at(k)->entry; }

 private:
  struct Slot {
    LibraryEntry entry;
    Node folder;  // placeholder: name and kind only
    mutable std::mutex mu;
    mutable std::unique_ptr<const ServedModel> model;
    mutable std::atomic<const ServedModel*> ready{nullptr};
  };
  const ServedModel& open_slot(Slot& slot) const;

  std::unique_ptr<ServedModel> single_;
  Node root_;  // the library's root: its children are the entries' folder inodes
  std::vector<std::unique_ptr<Slot>> slots_;
  std::unordered_map<std::string, std::size_t> by_name_;
  TreeOptions options_;
  LibraryLog log_;
  struct timespec mtime_ {};
};

}  // namespace ggufs
