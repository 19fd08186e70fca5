// The virtual directory tree of a mounted GGUF file, built once at mount time and immutable
// afterwards (so lookups and reads need no locks).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ggufs/gguf.h"

namespace ggufs {

/// Inode number; the root is 1 (FUSE_ROOT_ID), node i has inode i + 1.
using Ino = std::uint64_t;
inline constexpr Ino kRootIno = 1;

/// What a node's bytes are.
enum class NodeKind {
  kDirectory,
  kText,     ///< bytes rendered at mount time, held in `text`
  kRaw,      ///< tensor bytes as stored: [file_offset, file_offset + size) of the backing file
  kDecoded,  ///< `text` (a .npy header, or empty) followed by the tensor dequantized to float32
};

/// One file or directory.
struct Node {
  std::string name;  ///< file name (already escaped, see file_name_for)
  Ino parent = kRootIno;
  NodeKind kind = NodeKind::kDirectory;
  std::uint64_t size = 0;     ///< st_size in bytes
  std::string text;           ///< kText: the content; kDecoded: the prefix (npy header)
  std::size_t tensor = 0;     ///< kRaw, kDecoded: index into GgufFile::tensors
  std::vector<Ino> children;  ///< kDirectory: entries in file order
};

/// Whether tensor `t` of `file` gets f32/ and npy/ files: its type has a decoder and, in a
/// big-endian file, is a plain type (block size 1), whose elements are swapped to host order;
/// quantized blocks of big-endian files are served raw only.
bool decodes_to_f32(const GgufFile& file, const TensorInfo& t);

/// The tree: /gguf.json, /tensors.tsv, /metadata/<key>, /raw/<tensor>, /f32/<tensor>,
/// /npy/<tensor>.npy. Tensors whose type has no decoder get no f32/ and npy/ files; tensors
/// whose byte size cannot be computed get no raw/ file either.
class Tree {
 public:
  /// Builds the tree for `file` (renders every text file). Never fails on a parsed file.
  explicit Tree(const GgufFile& file);

  /// The node of `ino`, or nullptr when there is none.
  const Node* node(Ino ino) const;
  /// The child `name` of directory `parent`, or 0 when there is none.
  Ino lookup(Ino parent, std::string_view name) const;
  /// Number of nodes (inodes 1..count()).
  std::size_t count() const { return nodes_.size(); }

 private:
  Ino add(Ino parent, Node n);
  std::vector<Node> nodes_;
  std::unordered_map<std::string, Ino> index_;  // key: parent ino, '/', name
};

}  // namespace ggufs
