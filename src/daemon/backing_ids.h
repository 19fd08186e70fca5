// The backing ids of FUSE passthrough (passthrough.h), without libfuse: which inodes are open in
// passthrough under which id, whether passthrough is on, and what a refusal by Linux does to
// it. The two calls to Linux are injected, so the rules can be tested without a mount (and on a
// libfuse older than 3.17, where passthrough.cpp never calls them).
#pragma once

#include <bitset>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace ggufs {

/// Whether Linux's refusal (`error`, an errno) to register a backing file is of the moment: the
/// kernel was short of memory or of ids (fs/fuse/passthrough.c, fuse_backing_open and
/// fuse_backing_id_alloc: ENOMEM, ENOSPC), or the process of descriptors, or the call was
/// interrupted. The next open may well succeed, so such a failure costs that open only. Any
/// other (ELOOP: a backing file on a stacked file system; EPERM: no CAP_SYS_ADMIN in the
/// mount's user namespace; EOPNOTSUPP, EINVAL...) would fail every open again.
constexpr bool transient_backing_error(int error) {
  switch (error) {
    case ENOMEM:
    case EMFILE:
    case ENFILE:
    case EAGAIN:
    case EINTR:
    case ENOSPC:
      return true;
    default:
      return false;
  }
}

/// The backing ids of one mount. Linux takes one backing id per inode, and fails (EIO) an open
/// in the other mode than the files of that inode already open (fs/fuse/iomode.c,
/// fuse_file_io_open: fuse_inode_uncached_io_start refuses a passthrough open while files of
/// the inode are open in the page cache, and the other way round). So an inode is open either
/// in passthrough, all its opens sharing one id, closed with the last release, or served by the
/// daemon, until its last release; only a first open chooses. Thread-safe: the calls to Linux
/// are made under the lock, so two first opens of an inode cannot both register a file.
class BackingIds {
 public:
  /// The libfuse request (fuse_req_t) an open is answered or a release acknowledged through,
  /// opaque here. Null for the release of an open whose reply failed: libfuse frees the request
  /// in fuse_reply_open even when the reply cannot be written (lib/fuse_lowlevel.c,
  /// send_reply_ok), and the kernel sends no release for an open it never got.
  using Request = void*;

  /// The calls to Linux, made through libfuse in passthrough.cpp and faked in the tests.
  struct Kernel {
    /// FUSE_DEV_IOC_BACKING_OPEN (fuse_passthrough_open): registers the file open as `fd` as a
    /// backing file; returns its id (> 0) or -errno.
    std::function<int(Request req, int fd)> open;
    /// FUSE_DEV_IOC_BACKING_CLOSE (fuse_passthrough_close): unregisters `id`. `req` is null
    /// after a failed reply: the call must then go to the session's descriptor itself.
    std::function<void(Request req, int id)> close;
  };

  /// What became of an open.
  struct Opened {
    /// The backing id the open gets (> 0), or 0: the daemon serves the open.
    int id = 0;
    /// Whether release() must follow, for the release of the file or for a failed reply. Not
    /// for a file passthrough never concerned: no descriptor, or passthrough off.
    bool counted = false;
    /// When Linux refused the backing file: its errno; 0 otherwise.
    int error = 0;
    /// With `error`: whether passthrough went off with it (else the failure was transient and
    /// cost this open only), and whether it is the first failure of that errno (to warn once).
    bool turned_off = false;
    bool first_of_its_kind = false;
  };

  explicit BackingIds(Kernel kernel) : kernel_(std::move(kernel)) {}
  BackingIds(const BackingIds&) = delete;
  BackingIds& operator=(const BackingIds&) = delete;

  /// At INIT, when the kernel takes passthrough. Off until then.
  void turn_on() {
    const std::lock_guard lock(mu_);
    on_ = true;
  }

  bool on() const {
    const std::lock_guard lock(mu_);
    return on_;
  }

  /// An open of `ino`, whose bytes are all of the file open as `fd` (-1: they are not).
  Opened open(Request req, std::uint64_t ino, int fd) {
    const std::lock_guard lock(mu_);
    Opened r;
    if (const auto it = inodes_.find(ino); it != inodes_.end()) {
      // The mode of the inode's first open, passthrough off since or not: another would fail.
      ++it->second.opens;
      r.id = it->second.id;
      r.counted = true;
      return r;
    }
    if (!on_ || fd < 0) return r;
    // The entry first: once Linux gave an id, nothing may throw before it is recorded.
    const auto it = inodes_.emplace(ino, Inode{0, 1}).first;
    const int id = kernel_.open(req, fd);
    if (id > 0) {
      it->second.id = id;
      r.id = id;
      r.counted = true;
      return r;
    }
    r.error = id < 0 ? -id : EIO;
    if (const auto e = static_cast<std::size_t>(r.error); e < reported_.size()) {
      r.first_of_its_kind = !reported_[e];
      reported_[e] = true;
    } else {
      r.first_of_its_kind = true;
    }
    if (transient_backing_error(r.error)) {
      // Served by the daemon, and so are the inode's next opens while this one is open.
      r.counted = true;
    } else {
      // For good; the inodes open in passthrough keep their ids.
      inodes_.erase(it);
      on_ = false;
      r.turned_off = true;
    }
    return r;
  }

  /// The release of an open of `ino` that open() counted, or of its failed reply (`req` null):
  /// closes the inode's id with its last open, in either case.
  void release(Request req, std::uint64_t ino) {
    const std::lock_guard lock(mu_);
    const auto it = inodes_.find(ino);
    if (it == inodes_.end() || --it->second.opens > 0) return;
    const int id = it->second.id;
    inodes_.erase(it);
    if (id > 0) kernel_.close(req, id);
  }

 private:
  struct Inode {
    int id;  // 0: open with the daemon (a transient failure)
    unsigned opens;
  };

  const Kernel kernel_;
  mutable std::mutex mu_;
  bool on_ = false;
  std::unordered_map<std::uint64_t, Inode> inodes_;  // the inodes open with a counted open
  std::bitset<256> reported_;  // the errnos of the failures so far (none allocates)
};

}  // namespace ggufs
