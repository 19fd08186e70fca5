// Where a GGUF file's bytes come from: a file descriptor (pread) or memory (tests, fuzzing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ggufs {

/// Random-access, read-only bytes of known size.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// Total size in bytes.
  virtual std::uint64_t size() const = 0;
  /// Copies up to `n` bytes at byte `offset` into `dst`; returns the count copied (short only at
  /// the end of the data). Throws IoError when the underlying read fails. Thread-safe.
  virtual std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const = 0;
};

/// A file opened read-only; the descriptor is closed by the destructor.
class FileSource final : public ByteSource {
 public:
  /// Opens `path` read-only. Throws IoError naming the path and the OS error.
  explicit FileSource(const std::string& path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::uint64_t size() const override { return size_; }
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override;
  int fd() const { return fd_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
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
