// The read path: bytes of any node at any offset, for the FUSE adapter and for tests.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ggufs/byte_source.h"
#include "ggufs/gguf.h"
#include "ggufs/tree.h"

namespace ggufs {

/// Serves reads of tree nodes from the backing file. Stateless apart from per-thread scratch
/// buffers, so it may be called from many threads at once.
class ContentReader {
 public:
  ContentReader(const GgufFile& file, const ByteSource& backing) : file_(file), backing_(backing) {}

  /// Copies bytes [offset, offset + size) of `node` (clipped to its st_size) into `dst` and
  /// returns the count. kDecoded nodes decode only the blocks that cover the range, in chunks
  /// of bounded size (memory stays bounded whatever the tensor size). Throws IoError when the
  /// backing file cannot supply the tensor's bytes (short read or OS error).
  std::size_t read(const Node& node, char* dst, std::size_t size, std::uint64_t offset) const;

 private:
  std::size_t read_decoded(const Node& node, char* dst, std::size_t size,
                           std::uint64_t offset) const;
  const GgufFile& file_;
  const ByteSource& backing_;
};

}  // namespace ggufs
