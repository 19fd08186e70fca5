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
  /// A pipe of 1 MiB (the largest reply is 1008 KiB); ok() is false where one cannot be made.
  SplicePipe();
  ~SplicePipe();
  SplicePipe(const SplicePipe&) = delete;
  SplicePipe& operator=(const SplicePipe&) = delete;

  bool ok() const { return read_fd_ >= 0; }
  int read_fd() const { return read_fd_; }

  /// Moves `size` bytes (at most 1 MiB) at byte `offset` of `fd` into the pipe. Throws IoError
  /// naming `path` and the byte range when the read fails (Fault::kReadError) or ends early
  /// (Fault::kTruncated); the pipe is left empty then.
  void fill(int fd, std::uint64_t offset, std::size_t size, std::string_view path);

  /// Empties the pipe, after a reply that did not take all of its bytes.
  void reset();

 private:
  void open();
  void close();
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace ggufs
