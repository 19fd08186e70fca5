// A pipe that a read's stored bytes are spliced into from the backing file before the reply
// hands them to libfuse (no copy through the daemon's memory either way). Splicing them here,
// rather than letting libfuse splice from the backing file itself, puts a failed read in our
// hands: the reply becomes EIO with a log line, where libfuse would reply the read's own errno
// (ENOTCONN from a dead FUSE backing mount, say) and log nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ggufs {

class SplicePipe {
 public:
  /// A pipe of at least `bytes` (the largest reply, max_read) where the system lets us grow it
  /// that far (/proc/sys/fs/pipe-max-size, 1 MiB by default, binds all but root), else of 1 MiB;
  /// ok() is false where not even that can be made.
  explicit SplicePipe(std::size_t bytes);
  ~SplicePipe();
  SplicePipe(const SplicePipe&) = delete;
  SplicePipe& operator=(const SplicePipe&) = delete;

  bool ok() const { return read_fd_ >= 0; }
  /// Whether fill() can move `size` bytes at byte `offset` of a file at once. A pipe holds one
  /// page per slot and splicing from a file fills a slot per page it touches (Linux,
  /// fs/splice.c), so a range that starts inside a page needs one slot more than its size in
  /// pages: 1 MiB at an unaligned offset does not fit a 1 MiB pipe, and fill() would wait for
  /// ever for room.
  bool fits(std::uint64_t offset, std::size_t size) const;
  int read_fd() const { return read_fd_; }

  /// Moves `size` bytes (where fits(offset, size)) at byte `offset` of `fd` into the pipe. Throws
  /// IoError naming `path` and the byte range when the read fails (Fault::kReadError) or ends early
  /// (Fault::kTruncated); the pipe is left empty then.
  void fill(int fd, std::uint64_t offset, std::size_t size, std::string_view path);

  /// Empties the pipe, after a reply that did not take all of its bytes.
  void reset();

 private:
  void open();
  void close();
  std::size_t want_;  ///< the capacity asked for
  std::size_t capacity_ = 0;
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace ggufs
