#include "ggufs/byte_source.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ggufs/error.h"

namespace ggufs {

FileSource::FileSource(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    throw IoError(fmt::format("{}: cannot stat: {}", path, std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw IoError(fmt::format("{}: not a regular file", path));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t FileSource::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  auto* out = static_cast<char*>(dst);
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read of {} bytes at byte {} failed: {}", path_, n, offset,
                                std::strerror(errno)));
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
