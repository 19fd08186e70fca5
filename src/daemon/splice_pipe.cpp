#include "splice_pipe.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {

namespace {
constexpr int kPipeBytes = 1 << 20;
}  // namespace

SplicePipe::SplicePipe() { open(); }

SplicePipe::~SplicePipe() { close(); }

void SplicePipe::open() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  if (::fcntl(fds[1], F_SETPIPE_SZ, kPipeBytes) < kPipeBytes) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

void SplicePipe::close() {
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  read_fd_ = write_fd_ = -1;
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
