// The read path: bytes of any node at any offset, for the FUSE adapter and for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ggufs/byte_source.h"
#include "ggufs/error.h"
#include "ggufs/gguf.h"
#include "ggufs/tree.h"

namespace ggufs {

/// Serves reads of tree nodes from the backing file. Stateless apart from per-thread scratch
/// buffers, so it may be called from many threads at once.
class ContentReader {
 public:
  /// `sources[i]` holds shard i of a split model (GgufFile::shards); one source for a single file.
  /// `tail`, where given, is a second file read in place, as paired_file (ggufs/model.h) numbers
  /// a model and its projector: its tensors follow `file`'s (node and piece index
  /// file.tensors.size() + i is its tensor i) and its shards follow `file`'s in `sources`. A
  /// library's models share one projector's file this way instead of each holding a copy of its
  /// tensor infos.
  ContentReader(const GgufFile& file, std::vector<const ByteSource*> sources,
                const GgufFile* tail = nullptr)
      : file_(file),
        tail_(tail),
        tail_shard_(static_cast<std::uint32_t>(file.shards.empty() ? 1 : file.shards.size())),
        sources_(std::move(sources)) {}
  ContentReader(const GgufFile& file, const ByteSource& backing)
      : ContentReader(file, {&backing}) {}

  /// Copies bytes [offset, offset + size) of `node` (clipped to its st_size) into `dst` and
  /// returns the count. kDecoded nodes decode only the blocks that cover the range, in chunks
  /// of bounded size (memory stays bounded whatever the tensor size). Throws IoError when the
  /// backing file cannot supply the tensor's bytes (short read or OS error).
  std::size_t read(const Node& node, char* dst, std::size_t size, std::uint64_t offset) const;

  /// Where the bytes of a read lie in the backing file when they are the stored bytes unchanged,
  /// so the caller can splice them instead of copying: `size` bytes (clipped to st_size) at byte
  /// `offset` of descriptor `fd`. That is every read of a kRaw node, and the reads of the
  /// float32 data (past the .npy header) of f32/ and npy/ nodes of F32 tensors in little-endian
  /// files, whose decoding is the identity (src/ggml/README.md §5). Empty otherwise, and for a
  /// backing source without a descriptor. Throws IoError (as read does) when the backing file no
  /// longer holds those bytes.
  struct Extent {
    int fd;
    std::uint64_t offset;   ///< byte offset in the backing file
    std::size_t size;       ///< bytes
    std::string_view path;  ///< the backing file's path, for messages
  };
  std::optional<Extent> stored_extent(const Node& node, std::size_t size,
                                      std::uint64_t offset) const;

 private:
  std::size_t read_decoded(const Node& node, char* dst, std::size_t size,
                           std::uint64_t offset) const;
  std::size_t read_composite(const Node& node, char* dst, std::size_t size,
                             std::uint64_t offset) const;
  std::optional<Extent> composite_extent(const Node& node, std::size_t size,
                                         std::uint64_t offset) const;
  // Bytes [begin, begin + size) of tensor `tensor`'s elements in form `data`, to `out`;
  // `request` is the size of the whole read (large ones stream their output past the caches).
  // `add` is added to every float32 value before it is converted (Piece::add), then each
  // becomes log(-v) where `log_negated` (Piece::log_negated).
  void read_elements(std::size_t tensor, ViewData data, char* out, std::size_t size,
                     std::uint64_t begin, std::size_t request, float add = 0,
                     bool log_negated = false) const;
  // Bytes [begin, begin + size) of kTensor piece `p`'s elements (its order, first element and
  // addend), to `out`.
  void read_piece_elements(const Piece& p, char* out, std::size_t size, std::uint64_t begin,
                           std::size_t request) const;
  void read_transposed(const Piece& p, char* out, std::size_t size, std::uint64_t begin,
                       std::size_t request) const;
  void read_interleaved(const Piece& p, char* out, std::size_t size, std::uint64_t begin,
                        std::size_t request) const;
  void read_mxfp4(const Piece& p, char* out, std::size_t size, std::uint64_t begin) const;
  void read_mlx(const Piece& p, char* out, std::size_t size, std::uint64_t begin) const;
  IoError truncated(const TensorInfo& t, std::uint64_t end) const;
  // Tensor i of the pair (`file_`'s, then `tail_`'s), and a tensor's shard in its numbering.
  const TensorInfo& tensor(std::size_t i) const {
    return i < file_.tensors.size() ? file_.tensors[i]
                                    : tail_->tensors.at(i - file_.tensors.size());
  }
  std::uint32_t shard_of(const TensorInfo& t) const {
    const bool in_tail = tail_ && !tail_->tensors.empty() && &t >= tail_->tensors.data() &&
                         &t < tail_->tensors.data() + tail_->tensors.size();
    return in_tail ? tail_shard_ + t.shard : t.shard;
  }
  const ByteSource& source(const TensorInfo& t) const { return *sources_.at(shard_of(t)); }
  const std::string& shard_path(std::uint32_t shard) const {
    const GgufFile& f = shard < tail_shard_ || !tail_ ? file_ : *tail_;
    const std::uint32_t s = &f == &file_ ? shard : shard - tail_shard_;
    return f.shards.empty() ? f.path : f.shards.at(s).path;
  }
  const std::string& path_of(const TensorInfo& t) const { return shard_path(shard_of(t)); }
  const GgufFile& file_;
  const GgufFile* tail_;
  std::uint32_t tail_shard_;  // the first shard of `tail_` in the pair's numbering
  std::vector<const ByteSource*> sources_;
};

}  // namespace ggufs
