#include "background.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "ggufs/error.h"

namespace ggufs {

Background Background::detach(bool foreground) {
  if (foreground) return Background(-1);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) ::_exit(kExitMountFailed);
  const pid_t pid = ::fork();
  if (pid < 0) ::_exit(kExitMountFailed);
  if (pid > 0) {
    ::close(pipe_fds[1]);
    char status = 0;
    ssize_t r;
    while ((r = ::read(pipe_fds[0], &status, 1)) < 0 && errno == EINTR) {
    }
    // Without our byte the daemon died before the mount answered.
    ::_exit(r == 1 ? kExitOk : kExitMountFailed);
  }
  ::close(pipe_fds[0]);
  ::setsid();
  if (::chdir("/") != 0) {
    // Not fatal: only keeps the daemon from pinning the caller's working directory.
  }
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(null, 2);
    if (null > 2) ::close(null);
  }
  return Background(pipe_fds[1]);
}

void Background::ready() {
  if (fd_ < 0) return;
  const char ok = 0;
  while (::write(fd_, &ok, 1) < 0 && errno == EINTR) {
  }
  ::close(fd_);
  fd_ = -1;
}

void Background::drop() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Background::~Background() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ggufs
