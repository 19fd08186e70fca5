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
  kDecoded,  ///< `text` (a .npy header, or empty) followed by the tensor's decoded elements
};

/// The elements of a per-tensor view file.
enum class ViewData {
  kStored,   ///< the tensor's bytes as stored (NodeKind::kRaw)
  kFloat32,  ///< every element as float32 little-endian, decoded block by block
  kFloat16,  ///< every element as IEEE binary16 little-endian: the float32 value rounded to
             ///< nearest even, bit-equal to NumPy's astype(float16) (float_to_half_as_numpy)
};

/// One per-tensor view: a folder at the root holding one file per tensor. A new view is one
/// row here (and, for a new kind of element, one case in ContentReader).
struct TensorView {
  std::string_view folder;  ///< the folder's name
  std::string_view suffix;  ///< appended to the tensor's file name (".npy" or "")
  ViewData data;
  bool npy_header;  ///< the file is a NumPy .npy 1.0 file: a header, then the elements
  /// Bytes per element of the data (0: as stored).
  constexpr std::uint32_t element_bytes() const {
    return data == ViewData::kFloat32 ? 4 : data == ViewData::kFloat16 ? 2 : 0;
  }
};

/// Every per-tensor view, in the order of their folders. Stored bytes exist for every tensor
/// whose byte size is known; the others for tensors that decode_to_f32.
inline constexpr TensorView kTensorViews[] = {
    {"raw", "", ViewData::kStored, false},
    {"f32", "", ViewData::kFloat32, false},
    {"npy", ".npy", ViewData::kFloat32, true},
    {"f16", "", ViewData::kFloat16, false},
};

/// One file or directory.
struct Node {
  std::string name;  ///< file name (already escaped, see file_name_for)
  Ino parent = kRootIno;
  NodeKind kind = NodeKind::kDirectory;
  std::uint64_t size = 0;            ///< st_size in bytes
  std::string text;                  ///< kText: the content; kDecoded: the prefix (npy header)
  std::size_t tensor = 0;            ///< kRaw, kDecoded: index into GgufFile::tensors
  const TensorView* view = nullptr;  ///< kRaw, kDecoded: the view the file belongs to
  std::vector<Ino> children;         ///< kDirectory: entries in file order
};

/// Whether tensor `t` of `file` gets f32/ and npy/ files: its type has a decoder and, in a
/// big-endian file, is a plain type (block size 1), whose elements are swapped to host order;
/// quantized blocks of big-endian files are served raw only.
bool decodes_to_f32(const GgufFile& file, const TensorInfo& t);

/// The tree: /gguf.json, /tensors.tsv, /metadata/<key>, then a folder per row of kTensorViews
/// (/raw/<tensor>, /f32/<tensor>, /npy/<tensor>.npy, /f16/<tensor>). Tensors whose type has no
/// decoder get only raw/ files; tensors whose byte size cannot be computed get none.
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
