// Going to the background after mounting, with the command returning only once the mount is
// ready for use (fuse_daemonize returns in the parent as soon as it forks).
#pragma once

namespace ggufs {

/// The link from a detached daemon to the command that started it.
class Background {
 public:
  /// In the foreground, does nothing. Otherwise forks: the child detaches (new session, working
  /// directory /, standard streams on /dev/null) and returns; the parent never returns: it waits
  /// until the child calls ready() and exits 0, or exits 4 (mount failed) if the child dies first.
  static Background detach(bool foreground);

  /// Lets the waiting parent exit 0. Call once, when the mount answers; a no-op in the foreground.
  void ready();

  /// Closes this process's end of the link without signalling (after handing it to a child that
  /// will call ready()), so the parent sees the end of the pipe if that child dies first.
  void drop();

  Background(Background&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  ~Background();

 private:
  explicit Background(int fd) : fd_(fd) {}
  int fd_;  ///< write end of the pipe the parent waits on; -1 in the foreground or once ready
};

}  // namespace ggufs
