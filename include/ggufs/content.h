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
  ContentReader(const GgufFile& file, std::vector<const ByteSource*> sources)
      : file_(file), sources_(std::move(sources)) {}
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
  const ByteSource& source(const TensorInfo& t) const { return *sources_.at(t.shard); }
  const std::string& shard_path(std::uint32_t shard) const {
    return file_.shards.empty() ? file_.path : file_.shards[shard].path;
  }
  const std::string& path_of(const TensorInfo& t) const { return shard_path(t.shard); }
  const GgufFile& file_;
  std::vector<const ByteSource*> sources_;
};

}  // namespace ggufs
