#include "splice_pipe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {

namespace {
constexpr std::size_t kMinPipeBytes = std::size_t{1} << 20;
}  // namespace

SplicePipe::SplicePipe(std::size_t bytes) : want_(std::max(bytes, kMinPipeBytes)) { open(); }

SplicePipe::~SplicePipe() { close(); }

void SplicePipe::open() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  int got = ::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(want_));
  if (got < 0 && want_ > kMinPipeBytes) got = ::fcntl(fds[1], F_SETPIPE_SZ, int{kMinPipeBytes});
  if (got < static_cast<int>(kMinPipeBytes)) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  capacity_ = static_cast<std::size_t>(got);
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

bool SplicePipe::fits(std::uint64_t offset, std::size_t size) const {
  static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t slots = (offset % page + size + page - 1) / page;
  return slots <= capacity_ / page;
}

void SplicePipe::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
  capacity_ = 0;
}

void SplicePipe::reset() {
  close();
  open();
}

void SplicePipe::fill(int fd, std::uint64_t offset, std::size_t size, std::string_view path) {
  auto at = static_cast<loff_t>(offset);
  for (std::size_t left = size; left > 0;) {
    const ssize_t n = ::splice(fd, &at, write_fd_, nullptr, left, SPLICE_F_MOVE);
    if (n > 0) {
      left -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = errno;
    reset();
    if (n == 0) {
      throw IoError(fmt::format("{}: file ends before byte {}", printable(path), offset + size),
                    Fault::kTruncated);
    }
    throw IoError(fmt::format("{}: read of {} bytes at byte {} failed: {}", printable(path), size,
                              offset, std::strerror(err)));
  }
}

}  // namespace ggufs
