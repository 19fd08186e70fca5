#include "passthrough.h"

#include <fmt/format.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "backing_ids.h"
#include "fuse_version.h"
#include "log.h"

namespace ggufs {
namespace {

// fuse_file_info::fh of a file opened in passthrough, and of one the daemon serves as the first
// open of its inode met a transient failure (0 otherwise: libfuse zeroes it): the opens
// passthrough_release counts down.
constexpr std::uint64_t kPassthroughHandle = 1;
constexpr std::uint64_t kFallbackHandle = 2;

std::atomic<fuse_session*> session{nullptr};  // one mount per process

#if GGUFS_LIBFUSE_3_17
// FUSE_DEV_IOC_BACKING_CLOSE of Linux's include/uapi/linux/fuse.h (6.9), the ioctl
// fuse_passthrough_close makes on the session's descriptor (lib/fuse_lowlevel.c); spelled out
// here as the kernel headers of older build machines lack it.
constexpr unsigned long kBackingCloseIoctl = _IOW(229, 2, std::uint32_t);

int kernel_open(BackingIds::Request req, int fd) {
  errno = 0;
  const int id = fuse_passthrough_open(static_cast<fuse_req_t>(req), fd);
  // Taken right after the call. libfuse logs the error first (through log_escaped, main.cpp,
  // which keeps errno) and returns 0, which BackingIds takes for EIO when errno is 0.
  const int error = errno;
  return id > 0 ? id : -error;
}

void kernel_close(BackingIds::Request req, int id) {
  if (req) {
    fuse_passthrough_close(static_cast<fuse_req_t>(req), id);  // libfuse logs a failure
    return;
  }
  // The reply to the open failed, and libfuse freed its request with it: the same ioctl on the
  // same descriptor (the session's: backing ids belong to the connection, clone_fd or not).
  fuse_session* se = session.load();
  const int dev = se ? fuse_session_fd(se) : -1;
  if (dev >= 0 && ::ioctl(dev, kBackingCloseIoctl, &id) == 0) return;
  const int error = dev < 0 ? EBADF : errno;
  try {  // no exception out of here: the caller has no request left to answer EIO with
    log_message(LogLevel::kWarning,
                fmt::format("passthrough: cannot close the backing id {} of an interrupted open: "
                            "{}; Linux keeps it until the unmount",
                            id, std::strerror(error)));
  } catch (...) {
  }
}

BackingIds& ids() {
  static BackingIds b(BackingIds::Kernel{kernel_open, kernel_close});  // one mount per process
  return b;
}

// Whether this process has CAP_SYS_ADMIN, which Linux requires to register a backing file
// (fs/fuse/passthrough.c, fuse_backing_open). True when it cannot tell: the kernel then decides.
bool has_cap_sys_admin() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return true;
  return (data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN)) != 0;
}

// Logs Linux's refusal of a backing file for the open `o` (libfuse logged the OS error just
// before, in fuse_passthrough_open). Throws nothing: the open is counted already, and an open
// answered EIO gets no release.
void log_refusal(const BackingIds::Opened& o) {
  try {
    if (o.turned_off) {
      // ELOOP for a file on a stacked file system, EPERM in a user namespace: every open would
      // fail the same way.
      log_message(LogLevel::kWarning,
                  "passthrough: off from now on: Linux refused a backing file (see the line "
                  "above); ggufs serves the files opened from now on itself");
    } else {
      // Out of memory or of ids for a moment: one warning for each errno, the next ones at -v.
      log_message(o.first_of_its_kind ? LogLevel::kWarning : LogLevel::kInfo,
                  fmt::format("passthrough: Linux could not register a backing file this time "
                              "({}); ggufs serves this open itself, and passthrough stays on",
                              std::strerror(o.error)));
    }
  } catch (...) {
  }
}
#else
BackingIds& ids() {
  static BackingIds b(BackingIds::Kernel{});  // never turned on: never calls Linux
  return b;
}
#endif

}  // namespace

void passthrough_session(fuse_session* se) { session.store(se); }

void passthrough_init([[maybe_unused]] fuse_conn_info* conn) {
  std::string why;
#if GGUFS_LIBFUSE_3_17
  if (!(conn->capable & FUSE_CAP_PASSTHROUGH)) {
    why = "this kernel does not offer it (Linux 6.9 or later, CONFIG_FUSE_PASSTHROUGH)";
  } else if (!has_cap_sys_admin()) {
    why = "ggufs runs without CAP_SYS_ADMIN, which Linux requires for it";
  } else {
    conn->want |= FUSE_CAP_PASSTHROUGH;
    ids().turn_on();
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
  const BackingIds::Opened o = ids().open(req, ino, fd);
  if (o.error) log_refusal(o);
  if (!o.counted) return false;
  if (o.id <= 0) {
    fi->fh = kFallbackHandle;  // its release lets the inode's next first open try again
    return false;
  }
  fi->backing_id = o.id;
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

void passthrough_release(fuse_req_t req, fuse_ino_t ino, const fuse_file_info* fi) {
  if (fi->fh != kPassthroughHandle && fi->fh != kFallbackHandle) return;
  ids().release(req, ino);
}

}  // namespace ggufs
