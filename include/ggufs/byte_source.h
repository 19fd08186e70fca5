// Where a GGUF file's bytes come from: a file descriptor (pread) or memory (tests, fuzzing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

struct stat;

namespace ggufs {

/// Opens `path` read-only as a regular file and returns its descriptor (close-on-exec), with
/// `st` its fstat. Every file ggufs reads from a model's folder or a store goes through here: a
/// FIFO, socket, device or directory planted under a model's name is refused with IoError
/// ("PATH: not a regular file (a FIFO)"), and never blocks the caller. The path is checked with
/// stat first, so nothing else is even opened; the open itself uses O_NONBLOCK (POSIX open(2):
/// a FIFO opened for reading without it waits for a writer, forever) in case the path was swapped
/// in between, and fstat decides. Links are followed (the Hugging Face cache's snapshots are
/// links to its blobs). Throws IoError naming the path and the OS error when it cannot be opened.
int open_regular_file(const std::string& path, struct stat& st);

/// The whole of the regular file `path` as bytes, opened by open_regular_file (so a FIFO or a
/// device in its place is refused, never waited on): for small files a user or a store hands
/// ggufs (a token file, the AWS CLI's files). Throws IoError naming the path when it cannot be
/// opened or read, is not a regular file, or holds more than `max_bytes` bytes.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes);

/// Random-access, read-only bytes of known size.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Total size in bytes.
  virtual std::uint64_t size() const = 0;
  /// Copies up to `n` bytes at byte `offset` into `dst`; returns the count copied (short only at
  /// the end of the data). Throws IoError when the underlying read fails. Thread-safe.
  virtual std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const = 0;
  /// Throws IoError when bytes [offset, offset + n) can no longer be trusted (the source changed
  /// since it was opened); read_at does this itself. For callers that read the bytes another way.
  virtual void check(std::uint64_t /*offset*/, std::size_t /*n*/) const {}
  /// A descriptor the bytes can be read from at their own offsets (for splice), or -1.
  virtual int fd() const { return -1; }
  /// The name of the bytes in messages ("" for memory): a path, or a URL without its query.
  virtual std::string name() const { return ""; }
  /// Whether reads may wait for a network (the daemon serves them off its request threads).
  virtual bool remote() const { return false; }
};

/// A file opened read-only; the descriptor is closed by the destructor.
///
/// The model file may change under a mount. Every read first checks it is still the file that
/// was parsed: the same size and modification time on our descriptor, and the path still naming
/// the same inode. A read throws IoError with Fault::kTruncated when the file shrank below the
/// bytes asked for (bytes before the new end are still served), kModified when it changed
/// otherwise, kReplaced when the path was renamed over, kReadError when pread fails. A deleted
/// path is not a fault: the descriptor keeps the same bytes.
class FileSource final : public ByteSource {
 public:
  /// Opens `path` read-only. Throws IoError naming the path and the OS error.
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::uint64_t size() const override { return size_; }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override;
  /// Throws the IoError for a change since opening that affects [offset, offset + n).
  void check(std::uint64_t offset, std::size_t n) const override;
  int fd() const override { return fd_; }
  std::string name() const override { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
  std::uint64_t dev_ = 0, ino_ = 0;
};

/// Bytes held in memory.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {}
  std::uint64_t size() const override { return bytes_.size(); }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override;

 private:
  std::vector<std::uint8_t> bytes_;
};

}  // namespace ggufs
