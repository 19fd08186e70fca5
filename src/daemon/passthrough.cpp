#include "passthrough.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "fuse_version.h"
#include "log.h"

namespace ggufs {
namespace {

// fuse_file_info::fh of a file opened in passthrough (0 otherwise: libfuse zeroes it).
constexpr std::uint64_t kPassthroughHandle = 1;

struct State {
  std::mutex mu;
  bool on = false;
  struct Backing {
    int id;
    unsigned opens;
  };
  std::unordered_map<fuse_ino_t, Backing> ids;  // the inodes open in passthrough
};

State& state() {
  static State s;  // one mount per process
  return s;
}

#if GGUFS_LIBFUSE_3_17
// Whether this process has CAP_SYS_ADMIN, which Linux requires to register a backing file
// (fs/fuse/passthrough.c, fuse_backing_open). True when it cannot tell: the kernel then decides.
bool has_cap_sys_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return true;
  return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}
#endif

}  // namespace

void passthrough_init([[maybe_unused]] fuse_conn_info* conn) {
  std::string why;
#if GGUFS_LIBFUSE_3_17
  if (!(conn->capable & FUSE_CAP_PASSTHROUGH)) {
    why = "this kernel does not offer it (Linux 6.9 or later, CONFIG_FUSE_PASSTHROUGH)";
  } else if (!has_cap_sys_admin()) {
    why = "ggufs runs without CAP_SYS_ADMIN, which Linux requires for it";
  } else {
    conn->want |= FUSE_CAP_PASSTHROUGH;
    const std::lock_guard lock(state().mu);
    state().on = true;
    log_message(LogLevel::kInfo,
                "passthrough: on: a model.gguf that is a whole local file is read by the kernel "
                "from that file");
    return;
  }
#else
  why = fmt::format("ggufs was built with libfuse {}.{}, older than 3.17", FUSE_MAJOR_VERSION,
                    FUSE_MINOR_VERSION);
#endif
  log_message(LogLevel::kInfo,
              fmt::format("passthrough: off: {}; ggufs serves every read itself", why));
}

bool passthrough_open([[maybe_unused]] fuse_req_t req, fuse_ino_t ino, [[maybe_unused]] int fd,
                      [[maybe_unused]] fuse_file_info* fi) {
#if GGUFS_LIBFUSE_3_17
  State& s = state();
  const std::lock_guard lock(s.mu);
  int id = 0;
  if (const auto it = s.ids.find(ino); it != s.ids.end()) {
    ++it->second.opens;
    id = it->second.id;
  } else if (s.on && fd >= 0) {
    id = fuse_passthrough_open(req, fd);
    if (id > 0) {
      s.ids.emplace(ino, State::Backing{id, 1});
    } else {
      // libfuse logged the OS error (ELOOP for a file on a stacked file system, EPERM in a user
      // namespace); the inodes open in passthrough keep their ids.
      s.on = false;
      log_message(LogLevel::kWarning,
                  "passthrough: off from now on: Linux refused a backing file (see the line "
                  "above); ggufs serves the files opened from now on itself");
    }
  }
  if (id <= 0) return false;
  fi->backing_id = id;
  fi->fh = kPassthroughHandle;
  // Linux refuses (EINVAL, then EIO to the opener) a passthrough open with flags other than
  // FOPEN_PASSTHROUGH_MASK's: keep_cache among them (fs/fuse/iomode.c); the page cache is then
  // the backing file's anyway.
  fi->keep_cache = 0;
  return true;
#else
  (void)ino;
  return false;
#endif
}

void passthrough_release([[maybe_unused]] fuse_req_t req, fuse_ino_t ino,
                         const fuse_file_info* fi) {
  if (fi->fh != kPassthroughHandle) return;
  State& s = state();
  const std::lock_guard lock(s.mu);
  const auto it = s.ids.find(ino);
  if (it == s.ids.end() || --it->second.opens > 0) return;
#if GGUFS_LIBFUSE_3_17
  if (req) fuse_passthrough_close(req, it->second.id);
#endif
  s.ids.erase(it);
}

}  // namespace ggufs
