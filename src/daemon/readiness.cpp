#include "readiness.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace ggufs {
namespace {

void write_line(const char* path, const std::string& line) {
  if (!path) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_APPEND, 0644);
  if (fd < 0) return;  // nobody to tell; the exit code still says it
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

}  // namespace

void notify_ready(const char* notify_pipe, pid_t daemon_pid) {
  write_line(notify_pipe, "READY=1\n");
  ::sd_pid_notify(daemon_pid, 0, "READY=1\nSTATUS=mounted");
}

void notify_failed(const char* notify_pipe, int exit_code) {
  write_line(notify_pipe, fmt::format("ERROR={}\n", exit_code));
  ::sd_notifyf(0, "STATUS=mount failed (exit code %d)\nERRNO=%d", exit_code, EIO);
}

}  // namespace ggufs
