// ggufs-ceiling: the fastest a libfuse daemon can serve reads on this machine, mounted and
// served exactly as ggufs is, the ceiling that scripts/bench measures ggufs's mount against.
//
//   ggufs-ceiling [-f] [-d] [-s] [-o opt,...] [--size BYTES] MOUNTPOINT
//
// The root holds one regular file, `data`, of BYTES bytes (default 1 GiB), mode 0444. Its bytes
// repeat a 1 MiB pattern (byte i of the file is p(i mod 2^20), p(j) = (j ^ (j >> 8)) & 0xff) held
// in memory from the start, and a read is answered with fuse_reply_buf pointing into it: no file
// I/O, no decoding, no copy or computation of ours. What a read then costs is FUSE itself (the
// request, the thread hand-off, the kernel copying the reply into the page cache), which is what
// ggufs cannot go below. The buffer holds the pattern over a period of max_read rounded up to
// 1 MiB, twice, so any request (at most max_read) starting in the first copy is contiguous.
//
// Every setting that shapes reads is ggufs's own, taken from its source:
//   - mount options: -oro,default_permissions,subtype=…, -omax_read=N (-o max_read=N as ggufs
//     takes it, default kDefaultMaxRead, 1032192, options.h) and -ofsname=…
//     (src/daemon/main.cpp, mount_file);
//     the subtype and fsname here are "ggufs-ceiling", so the mount cannot pass for a ggufs one;
//   - fuse_parse_cmdline for -f, -d, -s, -o clone_fd, -o max_threads (libfuse's defaults: no
//     clone_fd, 10 threads), then fuse_session_new, fuse_set_signal_handlers,
//     fuse_session_mount and fuse_session_loop_mt with a fuse_loop_config made by
//     fuse_loop_cfg_create with clone_fd and max_threads set from those (max_idle_threads left
//     at libfuse's default), or fuse_session_loop with -s (main.cpp, serve);
//   - init: FUSE_CAP_SPLICE_WRITE and FUSE_CAP_SPLICE_MOVE wanted where capable, max_read and
//     max_write by set_request_size (request_size.h), max_readahead and every other want bit
//     left as libfuse sets them (fuse_adapter.cpp, op_init);
//   - keep_cache on open, cache_readdir and keep_cache on opendir, entry, attribute and negative
//     entry timeouts of DBL_MAX, st_blksize 4096, statfs as ggufs answers it (fuse_adapter.cpp);
//   - with -o direct_io, as ggufs -o direct_io treats its decoded files: FOPEN_DIRECT_IO on
//     open, st_blksize 1 MiB, FUSE_CAP_DIRECT_IO_ALLOW_MMAP wanted where capable;
//   - read_ahead_kb of the mount's bdi: four requests of max_read by default (4032 KiB;
//     read_ahead_kb_for, options.h;
//     -o read_ahead_kb=N as ggufs takes it, 0 keeps the kernel's), set by set_read_ahead_kb
//     (bdi.cpp, compiled in) after INIT from a grandchild that stat()s the mount point first,
//     as main.cpp's serve does;
//   - detaching without -f: Background (background.cpp, compiled in): ggufs forks itself after
//     fuse_session_mount (not fuse_daemonize, whose parent returns at the fork) and the command
//     returns only once that grandchild has seen the mount answer and set its read-ahead.
// Not mirrored, because they are not on the read path of a local model: the tree, the Guard
// wrapper of each handler (these throw nothing), xattrs, logging, -o notify_pipe and systemd
// readiness, stale-mount clearing and creating MOUNTPOINT.
//
// Unmount with: fusermount3 -u MOUNTPOINT
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "background.h"
#include "bdi.h"
#include "ggufs/error.h"   // the exit codes
#include "options.h"       // kDefaultMaxRead, read_ahead_kb_for (header only)
#include "request_size.h"  // set_request_size (header only)

namespace {

using namespace ggufs;

constexpr const char* kUsage =
    "usage: ggufs-ceiling [-f] [-d] [-s] [--copy] [-o opt[,opt...]] [--size BYTES] MOUNTPOINT\n"
    "\n"
    "Mounts at MOUNTPOINT a read-only file system with one file, `data`, of BYTES bytes\n"
    "(default 1073741824) served from memory, with ggufs's mount and FUSE settings: the\n"
    "fastest reads a FUSE daemon gets here, to compare ggufs with (scripts/bench).\n"
    "Returns once the mount is ready (without -f). Unmount with: fusermount3 -u MOUNTPOINT\n"
    "\n"
    "options:\n"
    "  -f                  stay in the foreground (SIGINT/SIGTERM unmount)\n"
    "  -d                  debug: log every FUSE request (implies -f)\n"
    "  -s                  serve requests on a single thread\n"
    "  --copy              reply with bytes copied from memory (writev) instead of spliced\n"
    "                      from a memory file's page cache (the default, as ggufs serves\n"
    "                      stored bytes)\n"
    "  -o max_read=N       largest read request in bytes (default 1032192, as ggufs)\n"
    "  -o read_ahead_kb=N  kernel read-ahead of the mount in KiB (default four requests of\n"
    "                      max_read, as ggufs: 4032; 0\n"
    "                      keeps the kernel's default; needs root)\n"
    "  -o direct_io        open `data` with FOPEN_DIRECT_IO, as ggufs -o direct_io opens its\n"
    "                      decoded files: no page cache, replies written into the reader\n"
    "  -o opt              other FUSE options (clone_fd, max_threads=N, allow_other, ...)\n";

// The pattern's own period: byte i of the file is p(i mod kPattern).
constexpr std::size_t kPattern = std::size_t{1} << 20;

// The period of the buffer: max_read rounded up to a multiple of kPattern, so the largest
// request fits in it. Set once before the mount.
std::size_t g_period = kPattern;

// The content over two periods, so that [off % g_period, off % g_period + n) is inside it for any
// n ≤ g_period: a reply is always one contiguous range.
std::vector<unsigned char> g_pattern;

// The same bytes in a memory file (memfd), which replies splice from as ggufs splices stored
// bytes from the page cache of the model's file; -1 with --copy (or where memfd fails): replies
// are copied from g_pattern with writev instead.
int g_memfd = -1;

constexpr fuse_ino_t kDataIno = FUSE_ROOT_ID + 1;
constexpr const char* kDataName = "data";

// As ggufs (fuse_adapter.cpp): nothing changes while mounted, so the kernel may cache entries,
// attributes and negative lookups for ever.
constexpr double kForever = DBL_MAX;

struct Ceiling {
  std::uint64_t size;
  uid_t uid;
  gid_t gid;
  struct timespec mtime;
  unsigned max_read;
  bool direct_io;  // -o direct_io
};

const Ceiling& ctx(fuse_req_t req) { return *static_cast<const Ceiling*>(fuse_req_userdata(req)); }

// Built as ggufs's make_stat builds them.
struct stat make_stat(const Ceiling& c, fuse_ino_t ino) {
  struct stat st {};
  st.st_ino = ino;
  if (ino == FUSE_ROOT_ID) {
    st.st_mode = S_IFDIR | 0555;
    st.st_nlink = 2;
  } else {
    st.st_mode = S_IFREG | 0444;
    st.st_nlink = 1;
    st.st_size = static_cast<off_t>(c.size);
    st.st_blocks = static_cast<blkcnt_t>((c.size + 511) / 512);
  }
  // As ggufs's make_stat: 1 MiB for a direct-I/O file (cat reads st_blksize at a time).
  st.st_blksize = c.direct_io && ino == kDataIno ? 1 << 20 : 4096;
  st.st_uid = c.uid;
  st.st_gid = c.gid;
  st.st_atim = st.st_mtim = st.st_ctim = c.mtime;
  return st;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  if (parent == kDataIno) return void(fuse_reply_err(req, ENOTDIR));
  if (parent != FUSE_ROOT_ID) return void(fuse_reply_err(req, ENOENT));
  fuse_entry_param e{};
  e.attr_timeout = e.entry_timeout = kForever;
  if (std::strcmp(name, kDataName) == 0) {
    e.ino = kDataIno;
    e.attr = make_stat(ctx(req), kDataIno);
  }  // else ino 0: a cached negative entry, as ggufs replies
  fuse_reply_entry(req, &e);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  if (ino != FUSE_ROOT_ID && ino != kDataIno) return void(fuse_reply_err(req, ENOENT));
  const struct stat st = make_stat(ctx(req), ino);
  fuse_reply_attr(req, &st, kForever);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == FUSE_ROOT_ID) return void(fuse_reply_err(req, EISDIR));
  if (ino != kDataIno) return void(fuse_reply_err(req, ENOENT));
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return void(fuse_reply_err(req, EROFS));
  fi->keep_cache = 1;  // as ggufs: the page cache outlives each open, so 2nd reads hit it
  if (ctx(req).direct_io) fi->direct_io = 1;  // as ggufs's op_open with -o direct_io
  fuse_reply_open(req, fi);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  if (ino != kDataIno) return void(fuse_reply_err(req, ino == FUSE_ROOT_ID ? EISDIR : ENOENT));
  const std::uint64_t file_size = ctx(req).size;
  const auto at = static_cast<std::uint64_t>(off);
  if (at >= file_size) return void(fuse_reply_buf(req, nullptr, 0));
  // max_read keeps size ≤ g_period; the bound only guards the buffer's end.
  const std::size_t n = static_cast<std::size_t>(
      std::min<std::uint64_t>({size, file_size - at, static_cast<std::uint64_t>(g_period)}));
  if (g_memfd >= 0) {
    // As ggufs's stored bytes: spliced from a page cache (here the memfd's) to /dev/fuse.
    fuse_bufvec data = FUSE_BUFVEC_INIT(n);
    data.buf[0].flags = static_cast<fuse_buf_flags>(FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK);
    data.buf[0].fd = g_memfd;
    data.buf[0].pos = static_cast<off_t>(at % g_period);
    fuse_reply_data(req, &data, FUSE_BUF_SPLICE_MOVE);
    return;
  }
  fuse_reply_buf(req, reinterpret_cast<const char*>(g_pattern.data() + at % g_period), n);
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kDataIno) return void(fuse_reply_err(req, ENOTDIR));
  if (ino != FUSE_ROOT_ID) return void(fuse_reply_err(req, ENOENT));
  fi->cache_readdir = 1;  // as ggufs
  fi->keep_cache = 1;
  fuse_reply_open(req, fi);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  if (ino != FUSE_ROOT_ID) return void(fuse_reply_err(req, ino == kDataIno ? ENOTDIR : ENOENT));
  // Entry k (".", "..", "data") has offset k + 1, as in ggufs.
  char buf[512];
  const std::size_t room = std::min(size, sizeof buf);
  std::size_t used = 0;
  for (auto k = static_cast<std::size_t>(off); k < 3; ++k) {
    struct stat st {};
    st.st_ino = k < 2 ? FUSE_ROOT_ID : kDataIno;
    st.st_mode = k < 2 ? S_IFDIR : S_IFREG;
    const char* name = k == 0 ? "." : k == 1 ? ".." : kDataName;
    const std::size_t need =
        fuse_add_direntry(req, buf + used, room - used, name, &st, static_cast<off_t>(k + 1));
    if (need > room - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf, used);
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs s {};
  s.f_bsize = s.f_frsize = 4096;
  s.f_files = 2;
  s.f_namemax = 255;
  s.f_flag = ST_RDONLY;
  fuse_reply_statfs(req, &s);
}

// ggufs's op_init (fuse_adapter.cpp), value for value.
void op_init(void* userdata, fuse_conn_info* conn) {
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
  const Ceiling& c = *static_cast<const Ceiling*>(userdata);
  set_request_size(conn, c.max_read);
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
  // As ggufs's direct_io_init: shared maps of the direct-I/O file where the kernel allows them.
  if (c.direct_io && (conn->capable & FUSE_CAP_DIRECT_IO_ALLOW_MMAP)) {
    conn->want |= FUSE_CAP_DIRECT_IO_ALLOW_MMAP;
  }
#endif
}

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = op_lookup;
  ops.getattr = op_getattr;
  ops.open = op_open;
  ops.read = op_read;
  ops.opendir = op_opendir;
  ops.readdir = op_readdir;
  ops.statfs = op_statfs;
  return ops;
}();

// Our own options, parsed out of the argument list before libfuse sees it.
struct Cli {
  char* size = nullptr;  // malloc'ed by fuse_opt_parse
  int copy = 0;          // --copy: replies copied from memory (writev), not spliced
  unsigned max_read = kDefaultMaxRead;
  unsigned read_ahead_kb = kReadAheadAuto;
  int direct_io = 0;
};

const fuse_opt kOptions[] = {
    {"--size %s", offsetof(Cli, size), 0},
    {"--size=%s", offsetof(Cli, size), 0},
    {"--copy", offsetof(Cli, copy), 1},
    {"max_read=%u", offsetof(Cli, max_read), 0},            // as ggufs's options.cpp
    {"read_ahead_kb=%u", offsetof(Cli, read_ahead_kb), 0},  // as ggufs's options.cpp
    {"direct_io", offsetof(Cli, direct_io), 1},             // as ggufs's options.cpp
    FUSE_OPT_END,
};

// BYTES as a decimal count; false if it is not one.
bool parse_size(const char* text, std::uint64_t& out) {
  if (!text || *text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v > static_cast<unsigned long long>(INT64_MAX)) return false;
  out = v;
  return true;
}

// Mounts and serves until unmounted: main.cpp's serve, without the remote-read pool, logging
// and readiness notifications.
int serve(fuse_args& args, const fuse_cmdline_opts& opts, unsigned read_ahead_kb, Ceiling& c) {
  fuse_session* se = fuse_session_new(&args, &kOps, sizeof kOps, &c);
  if (!se) return kExitMountFailed;  // libfuse printed why
  int rc = kExitMountFailed;
  if (fuse_set_signal_handlers(se) == 0) {
    if (fuse_session_mount(se, opts.mountpoint) == 0) {
      // As ggufs: return only once the mount answers and its read-ahead is raised, which must
      // happen after INIT (it resets it). A grandchild without /dev/fuse waits for the mount,
      // so the connection dies with the daemon, and the daemon keeps no zombie.
      Background bg = Background::detach(opts.foreground);
      const pid_t tuner = ::fork();  // no threads yet: fork is safe
      if (tuner == 0) {
        ::close(fuse_session_fd(se));
        if (const pid_t worker = ::fork(); worker != 0) ::_exit(worker < 0 ? 1 : 0);
        struct stat st {};
        if (::stat(opts.mountpoint, &st) != 0) ::_exit(1);
        if (read_ahead_kb) set_read_ahead_kb(opts.mountpoint, read_ahead_kb);
        bg.ready();
        ::_exit(0);
      }
      if (tuner > 0) ::waitpid(tuner, nullptr, 0);  // exits at once (see above)
      if (tuner < 0) bg.ready();
      bg.drop();
      int loop;
      if (opts.singlethread) {
        loop = fuse_session_loop(se);
      } else {
        fuse_loop_config* cfg = fuse_loop_cfg_create();
        fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
        fuse_loop_cfg_set_max_threads(cfg, opts.max_threads);
        loop = fuse_session_loop_mt(se, cfg);
        fuse_loop_cfg_destroy(cfg);
      }
      rc = loop >= 0 ? kExitOk : kExitMountFailed;  // a signal's number: a clean unmount too
      fuse_session_unmount(se);
    }
    fuse_remove_signal_handlers(se);
  }
  fuse_session_destroy(se);
  return rc;
}

int run(int argc, char** argv) {
  fuse_args args = FUSE_ARGS_INIT(argc, argv);
  std::unique_ptr<fuse_args, void (*)(fuse_args*)> args_guard(&args, fuse_opt_free_args);
  Cli cli;
  if (fuse_opt_parse(&args, &cli, kOptions, nullptr) != 0) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::unique_ptr<char, void (*)(void*)> size_guard(cli.size, std::free);
  std::uint64_t size = std::uint64_t{1} << 30;
  if (cli.size && !parse_size(cli.size, size)) {
    std::fprintf(stderr, "ggufs-ceiling: --size %s: not a byte count\n%s", cli.size, kUsage);
    return kExitUsage;
  }
  fuse_cmdline_opts opts{};
  if (fuse_parse_cmdline(&args, &opts) != 0) {
    std::fputs(kUsage, stderr);
    return kExitUsage;
  }
  std::unique_ptr<char, void (*)(void*)> mountpoint_guard(opts.mountpoint, std::free);
  if (opts.show_help) {
    std::fputs(kUsage, stdout);
    return kExitOk;
  }
  if (!opts.mountpoint) {
    std::fprintf(stderr, "ggufs-ceiling: MOUNTPOINT is missing\n%s", kUsage);
    return kExitUsage;
  }

  if (cli.max_read < kMinMaxRead || cli.max_read > kMaxMaxRead) {
    std::fprintf(stderr, "ggufs-ceiling: -o max_read=%u: not from %u to %u bytes\n", cli.max_read,
                 kMinMaxRead, kMaxMaxRead);
    return kExitUsage;
  }
  g_period = (cli.max_read + kPattern - 1) / kPattern * kPattern;
  // Every page of the pattern written now, before the mount: no read ever faults one in.
  g_pattern.resize(2 * g_period);
  for (std::size_t i = 0; i < g_pattern.size(); ++i) {
    const std::size_t j = i % kPattern;
    g_pattern[i] = static_cast<unsigned char>(j ^ (j >> 8));
  }
  if (!cli.copy) {
    g_memfd = ::memfd_create("ggufs-ceiling", MFD_CLOEXEC);
    if (g_memfd >= 0 && ::write(g_memfd, g_pattern.data(), g_pattern.size()) !=
                            static_cast<ssize_t>(g_pattern.size())) {
      ::close(g_memfd);
      g_memfd = -1;
    }
  }
  Ceiling c{size, ::getuid(), ::getgid(), {}, cli.max_read, cli.direct_io != 0};
  ::clock_gettime(CLOCK_REALTIME, &c.mtime);

  // ggufs's mount options (main.cpp, mount_file), with our own subtype and fsname.
  const std::string max_read = "-omax_read=" + std::to_string(cli.max_read);
  fuse_opt_add_arg(&args, "-oro,default_permissions,subtype=ggufs-ceiling");
  fuse_opt_add_arg(&args, max_read.c_str());
  fuse_opt_add_arg(&args, "-ofsname=ggufs-ceiling");
  const unsigned read_ahead_kb =
      cli.read_ahead_kb == kReadAheadAuto ? read_ahead_kb_for(cli.max_read) : cli.read_ahead_kb;
  return serve(args, opts, read_ahead_kb, c);
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
