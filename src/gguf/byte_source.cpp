#include "ggufs/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ggufs/error.h"
#include "ggufs/names.h"
#include "ggufs/platform.h"

namespace ggufs {
namespace {

std::int64_t mtime_ns(const struct stat& st) { return modification_time_ns(st); }

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "not a file";
}

[[noreturn]] void not_regular(const std::string& path, mode_t mode) {
  throw IoError(fmt::format("{}: not a regular file ({})", printable(path), file_kind(mode)));
}

}  // namespace

int open_regular_file(const std::string& path, struct stat& st) {
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) not_regular(path, st.st_mode);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    throw IoError(fmt::format("{}: cannot open: {}", printable(path), std::strerror(err)),
                  Fault::kReadError, err);
  }
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("{}: cannot stat: {}", printable(path), std::strerror(err)),
                  Fault::kReadError, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    not_regular(path, st.st_mode);
  }
  // Reads of a regular file never wait on O_NONBLOCK (open(2)); cleared all the same, so the
  // descriptor behaves as a plain one wherever it is handed (splice, mmap).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes) {
  struct stat st {};
  const int fd = open_regular_file(path, st);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  std::string text;
  try {
    if (size > max_bytes) {
      throw IoError(
          fmt::format("{}: larger than {} bytes ({} bytes)", printable(path), max_bytes, size));
    }
    text.resize(static_cast<std::size_t>(size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n =
          ::pread(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        throw IoError(fmt::format("{}: cannot read: {}", printable(path), std::strerror(errno)));
      }
      if (n == 0) break;  // shrunk meanwhile: what is there
      done += static_cast<std::size_t>(n);
    }
    text.resize(done);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

FileSource::FileSource(const std::string& path) : path_(path) {
  struct stat st {};
  fd_ = open_regular_file(path, st);
  size_ = static_cast<std::uint64_t>(st.st_size);
  mtime_ns_ = mtime_ns(st);
  dev_ = st.st_dev;
  ino_ = st.st_ino;
}

void FileSource::check(std::uint64_t offset, std::size_t n) const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    throw IoError(fmt::format("{}: cannot stat: {}", printable(path_), std::strerror(errno)));
  }
  const auto now = static_cast<std::uint64_t>(st.st_size);
  if (now < size_) {
    // Shrinking keeps the bytes before the new end: only reads past it fail.
    if (offset + n > now) {
      throw IoError(fmt::format("{}: truncated while mounted (now {} bytes, was {})",
                                printable(path_), now, size_),
                    Fault::kTruncated);
    }
  } else if (now != size_ || mtime_ns(st) != mtime_ns_) {
    throw IoError(fmt::format("{}: modified while mounted; its tensors are no longer served",
                              printable(path_)),
                  Fault::kModified);
  }
  struct stat at_path {};
  if (::stat(path_.c_str(), &at_path) == 0 && (at_path.st_dev != dev_ || at_path.st_ino != ino_)) {
    throw IoError(fmt::format("{}: replaced by another file while mounted; its tensors are no "
                              "longer served",
                              printable(path_)),
                  Fault::kReplaced);
  }
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileSource::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  check(offset, n);
  auto* out = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read of {} bytes at byte {} failed: {}", printable(path_), n,
                                offset, std::strerror(errno)));
    }
    if (r == 0) break;  // end of file
    done += static_cast<std::size_t>(r);
  }
  return done;
}

std::size_t MemorySource::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  if (offset >= bytes_.size()) return 0;
  const std::size_t k =
      static_cast<std::size_t>(std::min<std::uint64_t>(n, bytes_.size() - offset));
  std::memcpy(dst, bytes_.data() + offset, k);
  return k;
}

}  // namespace ggufs
