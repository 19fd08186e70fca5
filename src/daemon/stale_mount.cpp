#include "stale_mount.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "ggufs/names.h"

extern char** environ;

namespace ggufs {

std::string shell_quote(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_not_of(
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                       "qrstuvwxyz0123456789_./-+:=@%,") == std::string::npos;
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool clear_stale_mount(const std::string& mountpoint, bool force) {
  // statfs, not stat: FUSE always asks the daemon for it, while stat may be answered from the
  // attributes the kernel cached before the daemon died (ggufs caches them forever).
  // A request the kernel aborted as the daemon died answers ECONNABORTED; the next one then
  // finds the connection gone.
  struct statfs sfs {};
  int result = ::statfs(mountpoint.c_str(), &sfs);
  if (result != 0 && errno == ECONNABORTED) result = ::statfs(mountpoint.c_str(), &sfs);
  if (result == 0 || errno != ENOTCONN) return true;
  const std::string shown = printable(mountpoint);
  if (!force) {
    fmt::print(stderr,
               "ggufs: {}: {}: a FUSE daemon serving it died without unmounting it.\n"
               "Clear it with:\n"
               "  fusermount3 -u {}\n"
               "or mount again with -o force (which runs fusermount3 -uz first).\n",
               shown, std::strerror(ENOTCONN), printable(shell_quote(mountpoint)));
    return false;
  }
  // Lazy unmount, as the user would; fusermount3 is set-uid, so this also works for non-root.
  const char* argv[] = {"fusermount3", "-u", "-z", "--", mountpoint.c_str(), nullptr};
  pid_t pid = 0;
  int status = 0;
  const int err = ::posix_spawnp(&pid, "fusermount3", nullptr, nullptr,
                                 const_cast<char* const*>(argv), environ);
  if (err != 0) {
    fmt::print(stderr, "ggufs: -o force: cannot run fusermount3: {}\n", std::strerror(err));
    return false;
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fmt::print(stderr, "ggufs: -o force: fusermount3 -uz {} failed\n", shown);
    return false;
  }
  if (::statfs(mountpoint.c_str(), &sfs) != 0) {
    fmt::print(stderr, "ggufs: {}: still unusable after fusermount3 -uz: {}\n", shown,
               std::strerror(errno));
    return false;
  }
  fmt::print(stderr, "ggufs: {}: cleared a stale mount (fusermount3 -uz)\n", shown);
  return true;
}

}  // namespace ggufs
