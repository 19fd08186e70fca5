#include "fuse_adapter.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ggufs/error.h"
#include "ggufs/names.h"
#include "ggufs/open.h"
#include "ggufs/xattrs.h"
#include "log.h"
#include "passthrough.h"
#include "remote_reads.h"
#include "request_size.h"
#include "splice_pipe.h"

namespace ggufs {
namespace {

// The image never changes while mounted, so entries, attributes and negative lookups may be
// cached for as long as the kernel likes.
constexpr double kForever = DBL_MAX;

const MountContext& ctx(fuse_req_t req) {
  return *static_cast<const MountContext*>(fuse_req_userdata(req));
}

// What a fault is, without names (for -o redact).
const char* fault_text(Fault fault) {
  switch (fault) {
    case Fault::kTruncated:
      return "the backing file was truncated";
    case Fault::kModified:
      return "the backing file was modified";
    case Fault::kReplaced:
      return "the backing file was replaced";
    case Fault::kReadError:
      break;
  }
  return "read error";
}

// One log line per distinct fault (its text with the numbers left out), not one per read: a
// truncated file fails every read of its tail, a dead server every chunk. At most 64 lines.
void log_fault_once(Fault fault, const Node& n, const char* detail) {
  static std::mutex mu;
  static std::set<std::string> logged;
  const std::string text = log_redacting() ? fault_text(fault) : detail;
  std::string shape = std::to_string(static_cast<int>(fault));
  for (const char ch : text) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) shape += ch;
  }
  {
    const std::lock_guard lock(mu);
    if (logged.size() >= 64 || !logged.insert(shape).second) return;
  }
  log_message(LogLevel::kError,
              fmt::format("read of {} failed: {} (EIO; the same fault is not logged again)",
                          log_name(n.name), text));
}

struct stat make_stat(const MountContext& c, Ino ino, const Library::Found& f) {
  const Node& n = *f.node;
  struct stat st {};
  st.st_ino = ino;
  if (n.kind == NodeKind::kDirectory) {
    st.st_mode = S_IFDIR | 0555;
    st.st_nlink = 2;
  } else {
    st.st_mode = S_IFREG | 0444;
    st.st_nlink = 1;
  }
  st.st_size = static_cast<off_t>(n.size);
  // The preferred I/O size: with -o direct_io every read() of a computed file is a request of
  // its own, so cp and cat (coreutils' io_blksize reads st_blksize at a time, at least 128 KiB)
  // are told 1 MiB, a full request and its remainder, as for dd bs=1M.
  st.st_blksize = c.direct_io && computed_bytes(n) ? 1 << 20 : 4096;
  st.st_blocks = static_cast<blkcnt_t>((n.size + 511) / 512);
  st.st_uid = c.uid;
  st.st_gid = c.gid;
  st.st_atim = st.st_mtim = st.st_ctim = f.mtime;
  return st;
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  const MountContext& c = ctx(req);
  fuse_entry_param e{};
  e.attr_timeout = e.entry_timeout = kForever;
  // A lookup inside a library's model folder opens that model (once); a lookup of the folder
  // itself does not.
  const Library::Found p = c.library.find(parent);
  if (!p.node) return void(fuse_reply_err(req, ENOENT));
  if (p.node->kind != NodeKind::kDirectory) return void(fuse_reply_err(req, ENOTDIR));
  if (const Ino ino = c.library.lookup(parent, name)) {
    e.ino = ino;
    e.attr = make_stat(c, ino, c.library.find(ino, /*open=*/false));
  }  // else ino 0: a cached negative entry
  fuse_reply_entry(req, &e);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  const MountContext& c = ctx(req);
  const Library::Found f = c.library.find(ino, /*open=*/false);
  if (!f.node) return void(fuse_reply_err(req, ENOENT));
  const struct stat st = make_stat(c, ino, f);
  fuse_reply_attr(req, &st, kForever);
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const MountContext& c = ctx(req);
  const Library::Found f = c.library.find(ino);
  const Node* n = f.node;
  if (!n) return void(fuse_reply_err(req, ENOENT));
  if (n->kind == NodeKind::kDirectory) return void(fuse_reply_err(req, EISDIR));
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return void(fuse_reply_err(req, EROFS));
  fi->keep_cache = 1;  // content never changes: keep the page cache across opens
  const std::string path =
      log_enabled(LogLevel::kInfo) && n->kind != NodeKind::kText ? c.library.path_of(ino) : "";
  const bool passed = passthrough_open(req, ino, f.model ? f.model->whole_file_fd(*n) : -1, fi);
  // -o direct_io: files whose bytes the daemon computes skip the page cache, each read() a
  // request of its own (direct_io_init). raw/, model.gguf, metadata and passthrough opens keep
  // it: their bytes are the file's, and llama.cpp maps model.gguf shared.
  if (c.direct_io && !passed && computed_bytes(*n)) fi->direct_io = 1;
  try {
    if (!path.empty()) {
      // The path, not the name: raw/ and f32/ hold files of the same name, and so do the models
      // of a library.
      log_message(LogLevel::kInfo,
                  fmt::format("open {}{}", log_name(path), passed ? " (passthrough)" : ""));
    }
  } catch (...) {
    passthrough_release(req, ino, fi);  // answered EIO (Guard): the open gets no release
    throw;
  }
  // Unanswered (the opener was interrupted), the open gets no release either: its backing id is
  // closed now, without the request, which libfuse freed.
  if (fuse_reply_open(req, fi) != 0) passthrough_release(nullptr, ino, fi);
}

void op_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  passthrough_release(req, ino, fi);
  fuse_reply_err(req, 0);
}

// Answers a read of node `n` (a file).
void serve_read(fuse_req_t req, const ContentReader& reader, const Node& n, size_t size,
                off_t off) {
  thread_local std::vector<char> buf;
  try {
    // Stored bytes (raw/, and F32 tensors' float32 data): spliced from the backing file into
    // our pipe, then from it into /dev/fuse by libfuse (which reads the pipe itself where it
    // cannot splice): no copy through our memory, and a failed read is ours to turn into EIO.
    thread_local SplicePipe pipe(ctx(req).max_read);
    const auto ext =
        pipe.ok() ? reader.stored_extent(n, size, static_cast<std::uint64_t>(off)) : std::nullopt;
    // A reply the pipe cannot hold (above pipe-max-size, 1 MiB, without CAP_SYS_RESOURCE) is
    // copied instead.
    if (ext && pipe.fits(ext->offset, ext->size)) {
      if (ext->size == 0) return void(fuse_reply_buf(req, nullptr, 0));
      pipe.fill(ext->fd, ext->offset, ext->size, ext->path);
      fuse_bufvec data = FUSE_BUFVEC_INIT(ext->size);
      data.buf[0].flags = FUSE_BUF_IS_FD;
      data.buf[0].fd = pipe.read_fd();
      if (fuse_reply_data(req, &data, FUSE_BUF_SPLICE_MOVE) != 0) pipe.reset();
      return;
    }
    buf.resize(size);
    const std::size_t got = reader.read(n, buf.data(), size, static_cast<std::uint64_t>(off));
    fuse_reply_buf(req, buf.data(), got);
  } catch (const IoError& e) {
    // Never let a fault under the mount take the daemon down: this read fails, others go on.
    log_fault_once(e.fault(), n, e.what());
    fuse_reply_err(req, EIO);
  } catch (const std::exception& e) {
    log_fault_once(Fault::kReadError, n, e.what());
    fuse_reply_err(req, EIO);
  }
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  const MountContext& c = ctx(req);
  const Library::Found f = c.library.find(ino);
  const Node* n = f.node;
  if (!n) return void(fuse_reply_err(req, ENOENT));
  if (n->kind == NodeKind::kDirectory) return void(fuse_reply_err(req, EISDIR));
  const ContentReader& reader = f.model->reader;
  if (c.remote_reads && n->kind != NodeKind::kText) {
    // Tensor bytes of a remote model may wait for a server: handed to the remote-read pool, so
    // this thread is free for the next request.
    c.remote_reads->submit([req, &reader, n, size, off](bool expired) {
      if (!expired) return serve_read(req, reader, *n, size, off);
      log_fault_once(Fault::kReadError, *n,
                     "not started within the read's time bound (-o read_timeout): the "
                     "server is slow or silent");
      fuse_reply_err(req, EIO);
    });
    return;
  }
  serve_read(req, reader, *n, size, off);
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  const Node* n = ctx(req).library.find(ino).node;
  if (!n) return void(fuse_reply_err(req, ENOENT));
  if (n->kind != NodeKind::kDirectory) return void(fuse_reply_err(req, ENOTDIR));
  fi->cache_readdir = 1;
  fi->keep_cache = 1;
  fuse_reply_open(req, fi);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  const MountContext& c = ctx(req);
  const Library::Found f = c.library.find(ino);
  const Node* dir = f.node;
  if (!dir) return void(fuse_reply_err(req, ENOENT));
  // Entry k (0 = ".", 1 = "..", then the children in file order) has offset k + 1.
  std::vector<char> buf(size);
  std::size_t used = 0;
  const std::size_t total = dir->children.size() + 2;
  for (std::size_t k = static_cast<std::size_t>(off); k < total; ++k) {
    struct stat st {};
    const char* name;
    if (k < 2) {
      name = k == 0 ? "." : "..";
      st.st_ino = k == 0 ? ino : c.library.parent(ino);
      st.st_mode = S_IFDIR;
    } else {
      // A library's model folders are listed without opening their models.
      const Ino child = f.global(dir->children[k - 2]);
      const Node* n = c.library.find(child, /*open=*/false).node;
      name = n->name.c_str();
      st.st_ino = child;
      st.st_mode = n->kind == NodeKind::kDirectory ? S_IFDIR : S_IFREG;
    }
    const std::size_t need = fuse_add_direntry(req, buf.data() + used, size - used, name, &st,
                                               static_cast<off_t>(k + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs s {};
  s.f_bsize = s.f_frsize = 4096;
  s.f_files = ctx(req).library.node_count();
  s.f_namemax = 255;
  s.f_flag = ST_RDONLY;
  fuse_reply_statfs(req, &s);
}

// Replies with `value`: its size when asked for the size (size 0), ERANGE when it does not fit.
void reply_xattr_value(fuse_req_t req, const std::string& value, size_t size) {
  if (size == 0) return void(fuse_reply_xattr(req, value.size()));
  if (value.size() > size) return void(fuse_reply_err(req, ERANGE));
  fuse_reply_buf(req, value.data(), value.size());
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  // Asked for by name, ggufs's own attributes of a library's model folder (why a folder view is
  // absent) are the model's: the model is opened for them. Other names and listings do not open
  // it, so that `ls -l` of a library stays cheap.
  const bool ours = std::string_view(name).starts_with("user.ggufs.");
  const Library::Found f = ctx(req).library.find(ino, /*open=*/ours);
  if (!f.node) return void(fuse_reply_err(req, ENOENT));
  for (const auto& [key, value] : node_xattrs(f)) {
    if (key == name) return reply_xattr_value(req, value, size);
  }
  fuse_reply_err(req, ENODATA);
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  const Library::Found f = ctx(req).library.find(ino, /*open=*/false);
  if (!f.node) return void(fuse_reply_err(req, ENOENT));
  std::string names;  // each name followed by a NUL, as listxattr(2) returns them
  for (const auto& [key, value] : node_xattrs(f)) {
    names += key;
    names += '\0';
  }
  reply_xattr_value(req, names, size);
}

// -o direct_io. A read() of a direct-I/O file reaches the daemon as requests of max_read,
// several in flight when the kernel may send them asynchronously (FUSE_CAP_ASYNC_DIO, which
// libfuse asks for by default), written by the daemon straight into the reader's buffer: no page
// cache to allocate and fill, one copy fewer. A shared mmap of such a file needs
// FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6, libfuse 3.16); without it the kernel refuses it with
// ENODEV (fs/fuse/file.c, fuse_file_mmap), which the log says once.
void direct_io_init(fuse_conn_info* conn) {
#ifdef FUSE_CAP_DIRECT_IO_ALLOW_MMAP
  if (conn->capable & FUSE_CAP_DIRECT_IO_ALLOW_MMAP) {
    conn->want |= FUSE_CAP_DIRECT_IO_ALLOW_MMAP;
    return;
  }
  const std::string why = "the kernel lacks FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6)";
#else
  static_cast<void>(conn);
  const std::string why =
      fmt::format("libfuse {}.{} cannot ask for FUSE_DIRECT_IO_ALLOW_MMAP (3.16)",
                  FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION);
#endif
  log_message(LogLevel::kWarning,
              fmt::format("-o direct_io: a shared mmap of a decoded or whole-model file fails "
                          "with ENODEV: {}; read() and private maps work",
                          why));
}

void op_init(void* userdata, fuse_conn_info* conn) {
  // Splice raw/ replies (see op_read). Requests of at most max_read (1008 KiB by default; the
  // read-ahead window ggufs sets is four of them).
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  if (conn->capable & FUSE_CAP_SPLICE_MOVE) conn->want |= FUSE_CAP_SPLICE_MOVE;
  const unsigned max_read = static_cast<const MountContext*>(userdata)->max_read;
  set_request_size(conn, max_read);
  if (const unsigned effective = effective_max_read(max_read); effective < max_read) {
    log_message(LogLevel::kInfo,
                fmt::format("read requests of at most {} bytes, not max_read={}: libfuse {}.{} "
                            "and fs.fuse.max_pages_limit allow no more",
                            effective, max_read, FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION));
  }
  passthrough_init(conn);
  if (static_cast<const MountContext*>(userdata)->direct_io) direct_io_init(conn);
}

// Every request handler runs inside Guard<handler>::run: an exception it lets out (an
// allocation failure, a bug) answers EIO with one log line instead of unwinding into libfuse,
// which cannot take it. The handlers reply last, so nothing is answered twice.
template <auto Handler>
struct Guard;
template <typename... Args, void (*Handler)(fuse_req_t, Args...)>
struct Guard<Handler> {
  static void run(fuse_req_t req, Args... args) noexcept {
    try {
      Handler(req, args...);
      return;
    } catch (const std::exception& e) {
      log_failure(e.what());
    } catch (...) {
      log_failure("an unknown exception");
    }
    fuse_reply_err(req, EIO);
  }
  // The log line may itself fail to allocate: the request is answered all the same.
  static void log_failure(const char* what) noexcept {
    try {
      log_message(LogLevel::kError, fmt::format("request failed: {} (EIO)", what));
    } catch (...) {
    }
  }
};

const fuse_lowlevel_ops kOps = [] {
  fuse_lowlevel_ops ops{};
  ops.init = op_init;
  ops.lookup = Guard<op_lookup>::run;
  ops.getattr = Guard<op_getattr>::run;
  ops.open = Guard<op_open>::run;
  ops.read = Guard<op_read>::run;
  ops.release = Guard<op_release>::run;
  ops.opendir = Guard<op_opendir>::run;
  ops.readdir = Guard<op_readdir>::run;
  ops.statfs = Guard<op_statfs>::run;
  ops.getxattr = Guard<op_getxattr>::run;
  ops.listxattr = Guard<op_listxattr>::run;
  return ops;
}();

}  // namespace

const fuse_lowlevel_ops& fuse_operations() { return kOps; }

}  // namespace ggufs
