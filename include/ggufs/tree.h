// The virtual directory tree of a mounted GGUF file, built once at mount time and immutable
// afterwards (so lookups and reads need no locks).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ggufs/gguf.h"

namespace ggufs {

/// Inode number; the root is 1 (FUSE_ROOT_ID), node i has inode i + 1.
using Ino = std::uint64_t;
inline constexpr Ino kRootIno = 1;

/// What a node's bytes are.
enum class NodeKind {
  kDirectory,
  kText,       ///< bytes rendered at mount time, held in `text`
  kRaw,        ///< tensor bytes as stored: [file_offset, file_offset + size) of the backing file
  kDecoded,    ///< `text` (a .npy header, or empty) followed by the tensor's decoded elements
  kComposite,  ///< a whole-model file: a sequence of Pieces (model_views.h)
};

/// The elements of a per-tensor view file.
enum class ViewData {
  kStored,    ///< the tensor's bytes as stored (NodeKind::kRaw)
  kFloat32,   ///< every element as float32 little-endian, decoded block by block
  kFloat16,   ///< every element as IEEE binary16 little-endian: the float32 value rounded to
              ///< nearest even, bit-equal to NumPy's astype(float16) (float_to_half_as_numpy)
  kBFloat16,  ///< every element as bfloat16 little-endian: the float32 value rounded to nearest
              ///< even as torch.Tensor.to(torch.bfloat16) rounds (float_to_bf16_as_torch)
};

/// Bytes per element of `d` (0 for kStored: as stored).
constexpr std::uint32_t element_bytes(ViewData d) {
  return d == ViewData::kFloat32 ? 4 : d == ViewData::kStored ? 0 : 2;
}

/// One per-tensor view: a folder at the root holding one file per tensor. A new view is one
/// row here (and, for a new kind of element, one case in ContentReader).
struct TensorView {
  std::string_view folder;  ///< the folder's name
  std::string_view suffix;  ///< appended to the tensor's file name (".npy" or "")
  ViewData data;
  bool npy_header;  ///< the file is a NumPy .npy 1.0 file: a header, then the elements
  /// Bytes per element of the data (0: as stored).
  constexpr std::uint32_t element_bytes() const { return ggufs::element_bytes(data); }
};

/// Every per-tensor view, in the order of their folders. Stored bytes exist for every tensor
/// whose byte size is known; the others for tensors that decode_to_f32.
inline constexpr TensorView kTensorViews[] = {
    {"raw", "", ViewData::kStored, false},
    {"f32", "", ViewData::kFloat32, false},
    {"npy", ".npy", ViewData::kFloat32, true},
    {"f16", "", ViewData::kFloat16, false},
};

/// One run of bytes of a kComposite file. Pieces follow each other without gaps from byte 0.
struct Piece {
  enum class Kind : std::uint8_t {
    kText,    ///< bytes [from, from + size) of Node::text (a rendered header)
    kZeros,   ///< zero bytes (alignment padding)
    kSource,  ///< bytes [from, from + size) of file `shard` as they are: spliced
    kTensor,  ///< the elements of tensor `tensor` in form `data`; kStored: the stored bytes of
              ///< a plain type, swapped to little-endian in a big-endian file
    /// MXFP4 tensors' blocks as transformers stores them (hf-mxfp4/): rows of `cols` blocks,
    /// row q from `tensor` (`rows` = 1) or, `rows` = 2, rows alternating `tensor` (even q) and
    /// `tensor2` (odd), row q / 2; each source's rows start at its block `from`. kMxfp4Blocks:
    /// 16 bytes a block, byte i = code(2i) | code(2i + 1) << 4 (ggml's block_mxfp4 holds code j
    /// in qs[j]'s low nibble, code j + 16 in its high one); kMxfp4Scales: its E8M0 byte e.
    kMxfp4Blocks,
    kMxfp4Scales,
    /// A quantized matrix's rows in MLX's affine form (mlx_blocks.h, encode_mlx_row; mlx/):
    /// row r is row `from` + r of `tensor` (order kAsStored) or row `from` +
    /// hf_permuted_row(r, rows, n_head) (kPermuteRows, rows the piece's), its whole blocks
    /// encoded on read, or, where `mlx_bits` is set, decoded to float32 and quantized by MLX's
    /// own affine quantize (quantize_mlx_row; -o mlx_requantize). kMlxWeight: its uint32
    /// words; kMlxScales, kMlxBiases: its float32 scales or biases (affine); kMlxScaleBytes: its
    /// scale bytes (mxfp4).
    kMlxWeight,
    kMlxScales,
    kMlxBiases,
    kMlxScaleBytes,
  };
  /// kTensor: the order in which the tensor's elements are laid out (hf/ weights, hf_weights.h).
  enum class Order : std::uint8_t {
    kAsStored,     ///< GGUF order (ne[0] fastest)
    kPermuteRows,  ///< row r (ne[0] elements) is GGUF row hf_permuted_row(r, rows, n_head)
    kTransposed,   ///< a 2-D tensor's transpose: element (i, j) is GGUF element j·ne[0] + i
    /// A matrix of `rows` rows of `cols` elements from `tensor` and one from `tensor2`, each
    /// transposed, their columns interleaved: element (c, 2r + j) is element r·cols + c (after
    /// `from`) of `tensor` (j = 0) or `tensor2` (j = 1). Floats only.
    kInterleavedTransposed,
    /// qwen35's value heads back in HF order (HfWeight::untile_run): runs of `cols` elements
    /// in groups of `rows` runs (nv value heads); run o of a group is the group's GGUF run
    /// hf_untiled_head(o, n_head, rows), n_head the key heads.
    kUntileHeads,
  };
  Kind kind = Kind::kZeros;
  std::uint64_t at = 0;     ///< first byte of the piece in the file
  std::uint64_t size = 0;   ///< bytes
  std::uint64_t from = 0;   ///< kText: offset in Node::text; kSource: byte offset in the shard;
                            ///< kTensor: the element of the tensor the piece starts at;
                            ///< kMlx*: its row
  std::uint32_t shard = 0;  ///< kSource: GgufFile::shards index (0 for a single file)
  std::size_t tensor = 0;   ///< kTensor: index into GgufFile::tensors
  ViewData data = ViewData::kStored;  ///< kTensor
  Order order = Order::kAsStored;     ///< kTensor, kMlx* (kAsStored or kPermuteRows)
  std::uint64_t n_head = 0;           ///< kPermuteRows: heads; kUntileHeads: key heads
  float add = 0;  ///< kTensor of floats: added to each float32 value before it is converted
  bool log_negated = false;          ///< kTensor of floats: each float32 value v becomes log(-v)
  std::size_t tensor2 = 0;           ///< kInterleavedTransposed, kMxfp4*: the odd columns' tensor
  std::uint64_t rows = 0, cols = 0;  ///< kInterleavedTransposed: each source's matrix;
                                     ///< kUntileHeads: value heads, a run's elements
  std::uint8_t mlx_bits = 0;         ///< kMlx*: 0, or the bits of mlx_requantized_form
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
  std::vector<Piece> pieces;         ///< kComposite: the file's bytes, in order
  std::string what;  ///< kComposite, folder views' directories: what it is (user.ggufs.view)
  /// Extended attributes set by the tree (the model root's, saying why a folder view is absent).
  std::vector<std::pair<std::string, std::string>> xattrs;
};

/// Choices of the whole-model views, from mount options.
struct TreeOptions {
  /// -o safetensors_dtype: kStored keeps F32, F16, BF16 and F64 tensors as they are (quantized
  /// tensors become F32); kFloat32, kFloat16 or kBFloat16 makes every floating tensor that dtype.
  ViewData safetensors_dtype = ViewData::kStored;
  /// -o hf_dtype: the dtype of hf/'s weights (kFloat32, kFloat16 or kBFloat16); float32 is the
  /// dtype transformers' GGUF import gives (render_hf_config, HfConfig::torch_dtype).
  ViewData hf_dtype = ViewData::kFloat32;
  /// -o hf_max_shard_size: bytes per hf/ (and mlx/) weight file; save_pretrained's default "5GB".
  std::uint64_t hf_max_shard_size = 5'000'000'000;
  /// -o mlx_dtype: the dtype of mlx/'s float tensors (kFloat32, kFloat16 or kBFloat16); float32
  /// keeps every value exact. The quantized ones are ggml's blocks whatever it is.
  ViewData mlx_dtype = ViewData::kFloat32;
  /// -o mlx_requantize: 0, or the bits (8 or 6) of MLX's own affine form, group 32, into which
  /// mlx/ quantizes the matrices whose ggml blocks it cannot keep (mlx_folder.h, mlx_tensors).
  std::uint32_t mlx_requantize = 0;
};

/// Whether the daemon computes some of node `n`'s bytes: a decoded view's file, or a whole-model
/// file with a piece other than text, padding and a file's bytes as they are (Piece::kSource): a
/// decoded or byte-swapped tensor, an MLX row, ...; not raw/ or model.gguf. The files -o
/// direct_io opens with FOPEN_DIRECT_IO.
bool computed_bytes(const Node& n);

/// Whether tensor `t` of `file` gets f32/ and npy/ files: its type has a decoder and, in a
/// big-endian file, is a plain type (block size 1), whose elements are swapped to host order;
/// quantized blocks of big-endian files are served raw only.
bool decodes_to_f32(const GgufFile& file, const TensorInfo& t);

/// The tree: /gguf.json, /tensors.tsv, /metadata/<key>, then a folder per row of kTensorViews
/// (/raw/<tensor>, /f32/<tensor>, /npy/<tensor>.npy, /f16/<tensor>), then a file per row of
/// kModelViews (/model.gguf, /model.safetensors) that can be laid out for this model, then a
/// folder per row of kFolderViews (/hf/) that can be (folder_views.h). Tensors
/// whose type has no decoder get only raw/ files; tensors whose byte size cannot be computed get
/// none.
/// A model paired with its vision projector (model.h, attach_projector), for the folder views:
/// hf/ is then the vision-language model of both; or why a projector beside it is not paired
/// (hf/ is the text model alone and says why).
struct ProjectorPair {
  const GgufFile* paired = nullptr;     ///< paired_file: the model's keys, tensors, projector's
  const GgufFile* projector = nullptr;  ///< the projector's own file (its clip.* keys)
  std::string_view unpaired;            ///< without a projector: Model::unpaired
};

class Tree {
 public:
  /// Builds the tree for `file` (renders every text file and whole-model header). Never fails on
  /// a parsed file; what a whole-model view leaves out is listed in warnings(). With `pair`, the
  /// folder views are laid out from pair->paired (whose first tensors are `file`'s), with the
  /// projector.
  explicit Tree(const GgufFile& file, const TreeOptions& options = {},
                const ProjectorPair* pair = nullptr);

  /// The tree of a model that cannot be served (a library entry that does not open or parse):
  /// the root holds only the text file `error`, whose content is `message` and a newline.
  static Tree error_folder(std::string message);

  /// One line per thing the whole-model views could not include (a tensor, or a whole view),
  /// for the daemon to log at mount.
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// The node of `ino`, or nullptr when there is none.
  const Node* node(Ino ino) const;
  /// The child `name` of directory `parent`, or 0 when there is none.
  Ino lookup(Ino parent, std::string_view name) const;
  /// Number of nodes (inodes 1..count()).
  std::size_t count() const { return nodes_.size(); }

 private:
  Tree() = default;
  Ino add(Ino parent, Node n);
  std::vector<Node> nodes_;
  std::vector<std::string> warnings_;
  std::unordered_map<std::string, Ino> index_;  // key: parent ino, '/', name
};

}  // namespace ggufs
