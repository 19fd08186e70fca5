// The chunk cache's folder layout, its checks before touching anything, and the trim. Every
// step below ROOT goes through a directory handle opened O_NOFOLLOW (openat and its kin, POSIX
// 2008), so no link at any level is followed. See chunk_cache.h.
#include "ggufs/chunk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>  // renameat2, RENAME_NOREPLACE (glibc, Linux 3.15)
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string_view>
#include <utility>

#include "ggufs/error.h"
#include "ggufs/names.h"
#include "ggufs/platform.h"

namespace ggufs {
namespace fs = std::filesystem;

namespace {

// The first line every cache tag starts with (the Cache Directory Tagging Specification), and
// the line that says the cache is ours.
constexpr const char* kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55";
constexpr const char* kTagOwner = "# ggufs: chunks of remote GGUF models (ggufs's chunk cache)";
constexpr const char* kTagName = "CACHEDIR.TAG";
constexpr const char* kChunksName = "chunks-v2";
constexpr std::time_t kStalePartSeconds = 10 * 60;
// A read marks its chunk used only when it was last marked longer ago than this: the trim's
// order needs no finer grain, and a chunk read over and over costs no metadata write each time.
constexpr std::time_t kUseGrainSeconds = 60;

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// An open file descriptor, closed when it goes.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

bool is_chunk_name(const std::string& s) {
  return !s.empty() && s.size() <= 20 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ".N.PID.TID.SEQ.part" (this layout) or ".N.TID.tmp" (the layout before the tag).
bool is_part_name(const std::string& s) {
  if (s.size() < 3 || s[0] != '.') return false;
  const bool part = s.ends_with(".part"), tmp = s.ends_with(".tmp");
  if (!part && !tmp) return false;
  const std::string mid = s.substr(1, s.size() - 1 - (part ? 5 : 4));
  return !mid.empty() && std::all_of(mid.begin(), mid.end(),
                                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// ".CACHEDIR.TAG.PID.TID.SEQ.part": a tag being written, by this mount or another.
bool is_tag_part_name(const std::string& s) {
  const std::string head = std::string(".") + kTagName;
  return s.starts_with(head) && s.size() > head.size() && s[head.size()] == '.' &&
         is_part_name(s.substr(head.size()));
}

// A name of this process and thread, never used twice: for files being written.
std::string unique_suffix() {
  static std::atomic<std::uint64_t> seq{0};
  return fmt::format("{}.{}.{}.part", ::getpid(), ::gettid(), ++seq);
}

// The names in the folder `dir` (a handle), without "." and ".."; false when it cannot be
// listed. Lists through a handle of its own, so `dir` may be listed by others meanwhile.
bool list(int dir, std::vector<std::string>& names) {
  Fd own(::openat(dir, ".", kDirFlags));
  if (!own) return false;
  const std::unique_ptr<DIR, int (*)(DIR*)> d(::fdopendir(own.get()), ::closedir);
  if (!d) return false;
  own.release();  // closedir closes it
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d.get());
    if (!e) return errno == 0;  // errno tells the caller why not
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
}

// The folder `name` in `dir`, opened without following a link; -1 when it is not a folder.
int open_dir(int dir, const std::string& name) { return ::openat(dir, name.c_str(), kDirFlags); }

// Whether the regular file `name` in `dir` (not a link, never blocking) starts with `head`
// (at most 64 KiB is read).
bool file_holds(int dir, const char* name, const std::string& head) {
  Fd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::string text(std::min<std::size_t>(64 << 10, static_cast<std::size_t>(st.st_size)), '\0');
  const ssize_t got = ::pread(fd.get(), text.data(), text.size(), 0);
  return got >= 0 && std::string_view(text.data(), static_cast<std::size_t>(got)).find(head) == 0;
}

std::string tag_text() {
  return fmt::format(
      "{}\n{}\n# For information about cache directory tags see https://bford.info/cachedir/\n",
      kTagSignature, kTagOwner);
}

bool tag_is_ours(int root) {
  return file_holds(root, kTagName, std::string(kTagSignature) + "\n" + kTagOwner + "\n");
}

// Why the folder behind `fd` is not the user's own to keep a cache in (a chunk put there would
// be served as a model's bytes), or "" when it is: owned by the effective user, not writable by
// group or others.
std::string not_own_folder(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fmt::format("cannot be examined: {}", std::strerror(errno));
  if (st.st_uid != ::geteuid()) {
    return fmt::format(
        "it is owned by user {}, not by user {} who runs ggufs: another user could put chunks "
        "there that would be served as a model's bytes; use a folder of your own "
        "(-o cache_dir)",
        st.st_uid, ::geteuid());
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return fmt::format(
        "it is writable by group or others (mode {:04o}): they could put chunks there that "
        "would be served as a model's bytes; remove that permission (chmod go-w) or use "
        "another folder (-o cache_dir)",
        st.st_mode & 07777);
  }
  return "";
}

// Makes `p` and its missing parents, each 0700 (the mode the XDG Base Directory Specification
// asks of the folders it names, made when missing). False when `p` could not be made.
bool make_private_dirs(const fs::path& p) {
  if (::mkdir(p.c_str(), 0700) == 0 || errno == EEXIST) return true;
  if (errno != ENOENT || !p.has_relative_path() || p.parent_path() == p) return false;
  return make_private_dirs(p.parent_path()) && (::mkdir(p.c_str(), 0700) == 0 || errno == EEXIST);
}

// Why ROOT could not be opened as a folder without following a link (errno `err`).
std::string why_not_opened(const fs::path& root, int err) {
  struct stat st {};
  if (::lstat(root.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return "it is a symbolic link (name the folder it points to)";
  }
  if (::lstat(root.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) return "it is not a folder";
  return fmt::format("it cannot be opened and listed: {}", std::strerror(err));
}

// A KEY folder of the layout before the tag: chunk and part files only.
bool is_legacy_key_dir(int root, const std::string& name) {
  if (!is_sha256_hex(name)) return false;
  const Fd dir(open_dir(root, name));
  std::vector<std::string> names;
  if (!dir || !list(dir.get(), names)) return false;
  return std::all_of(names.begin(), names.end(), [&](const std::string& n) {
    struct stat st {};
    return ::fstatat(dir.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           (is_chunk_name(n) || is_part_name(n));
  });
}

// Deletes the files of the KEY folder `name` in `root`, then the folder.
void remove_key_dir(int root, const std::string& name) {
  const Fd dir(open_dir(root, name));
  std::vector<std::string> names;
  if (dir && list(dir.get(), names)) {
    for (const std::string& n : names) ::unlinkat(dir.get(), n.c_str(), 0);
  }
  ::unlinkat(root, name.c_str(), AT_REMOVEDIR);
}

// Writes the tag into `root`: to a name of its own (O_EXCL), then renamed to CACHEDIR.TAG
// without replacing whatever may have appeared there (Linux's RENAME_NOREPLACE, else a hard
// link, which never replaces either). True when the tag in place is ours.
bool write_tag(int root) {
  const std::string part = fmt::format(".{}.{}", kTagName, unique_suffix());
  const std::string text = tag_text();
  bool whole = false;
  {
    const Fd fd(::openat(root, part.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
    if (!fd) return false;
    whole = ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fsync(fd.get()) == 0;
  }
  if (whole && ::renameat2(root, part.c_str(), root, kTagName, RENAME_NOREPLACE) == 0) return true;
  const bool linked = whole && (errno == EINVAL || errno == ENOSYS) &&
                      ::linkat(root, part.c_str(), root, kTagName, 0) == 0;
  ::unlinkat(root, part.c_str(), 0);
  return linked || tag_is_ours(root);  // also when another mount wrote it first
}

bool earlier(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

}  // namespace

fs::path ChunkCache::default_root() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "ggufs";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "ggufs";
  }
  // A shared folder such as /tmp: a name per user, so that each user's cache is a folder of
  // their own (another user's folder of that name is refused, never adopted).
  const char* tmp = std::getenv("TMPDIR");
  return fs::path(tmp && *tmp ? tmp : "/tmp") / fmt::format("ggufs-cache-{}", ::geteuid());
}

std::string ChunkCache::key(const std::string& url, const std::string& etag,
                            const std::string& last_modified, std::uint64_t size) {
  const std::string id = fmt::format("{}\n{}\n{}\n{}", url, etag, last_modified, size);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(id.data(), id.size(), md, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

ChunkCache::ChunkCache(fs::path root, std::uint64_t limit_bytes)
    : root_(std::move(root)), chunks_(root_ / kChunksName), limit_(limit_bytes) {
  const auto refuse = [&](const fs::path& folder, const std::string& why) {
    return IoError(fmt::format("cache folder {}: {}", printable(folder.string()), why));
  };
  Fd dir(::open(root_.c_str(), kDirFlags));
  if (!dir && errno == ENOENT) {
    // A folder that cannot be made (read-only, no permission) only costs fetching again.
    if (!make_private_dirs(root_)) return;
    dir = Fd(::open(root_.c_str(), kDirFlags));
  }
  if (!dir) throw refuse(root_, why_not_opened(root_, errno));
  if (const std::string why = not_own_folder(dir.get()); !why.empty()) throw refuse(root_, why);
  std::vector<std::string> names;
  if (!list(dir.get(), names)) {
    throw refuse(root_, fmt::format("it cannot be listed: {}", std::strerror(errno)));
  }
  // Listed before the tag is read: a tag another mount writes meanwhile is then seen as ours.
  if (!tag_is_ours(dir.get())) {
    // Not (yet) our cache: take it only when nothing in it is someone else's.
    std::vector<std::string> legacy;
    for (const std::string& name : names) {
      if (is_legacy_key_dir(dir.get(), name)) {
        legacy.push_back(name);
      } else if (!is_tag_part_name(name)) {
        throw refuse(root_,
                     fmt::format("it holds files that are not ggufs's chunk cache ('{}'); choose "
                                 "an empty or new folder with -o cache_dir (ggufs deletes old "
                                 "chunks in its cache folder, so it never uses a folder of other "
                                 "files)",
                                 printable(name)));
      }
    }
    // Chunks of the older layout were stored before every answer was checked: not trusted.
    for (const std::string& name : legacy) remove_key_dir(dir.get(), name);
    if (!write_tag(dir.get())) return;  // an unwritable cache only costs fetching again
  }
  ::mkdirat(dir.get(), kChunksName, 0700);
  Fd chunks(open_dir(dir.get(), kChunksName));
  if (!chunks) {
    if (errno == ENOENT || errno == EACCES) return;  // could not be made
    throw refuse(chunks_, why_not_opened(chunks_, errno));
  }
  if (const std::string why = not_own_folder(chunks.get()); !why.empty()) {
    throw refuse(chunks_, why);
  }
  chunks_fd_ = chunks.release();
}

ChunkCache::~ChunkCache() {
  if (chunks_fd_ >= 0) ::close(chunks_fd_);
}

int ChunkCache::open_key(const std::string& key, bool create) const {
  if (chunks_fd_ < 0 || !is_sha256_hex(key)) return -1;
  if (create) ::mkdirat(chunks_fd_, key.c_str(), 0700);
  Fd dir(open_dir(chunks_fd_, key));
  if (!dir || !not_own_folder(dir.get()).empty()) return -1;
  return dir.release();
}

bool ChunkCache::has(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes) const {
  const Fd dir(open_key(key, false));
  struct stat st {};
  return dir && ::fstatat(dir.get(), std::to_string(n).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) == chunk_bytes;
}

bool ChunkCache::read(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes,
                      std::uint64_t from, std::uint64_t len, char* dst) const {
  const Fd dir(open_key(key, false));
  if (!dir) return false;
  // O_NONBLOCK: a FIFO planted here must not block the open; it is then refused as not regular.
  const Fd fd(::openat(dir.get(), std::to_string(n).c_str(),
                       O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) != chunk_bytes) {
    return false;
  }
  std::uint64_t done = 0;
  while (done < len) {
    const ssize_t got = ::pread(fd.get(), dst + done, len - done, static_cast<off_t>(from + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  if (done != len) return false;
  // Marks the chunk used for the trim, by its modification time: the kernel does not keep the
  // access time for us (noatime mounts never update it, relatime, the default, at most once a
  // day), while the modification time is set when the chunk is written and by nothing but us
  // after, so one time orders chunks by their last write or read.
  if (std::time(nullptr) - modification_time(st).tv_sec >= kUseGrainSeconds)
    ::futimens(fd.get(), nullptr);
  return true;
}

void ChunkCache::store(const std::string& key, std::uint64_t n, const std::vector<char>& bytes) {
  const Fd dir(open_key(key, true));
  if (!dir) return;
  const std::string part = fmt::format(".{}.{}", n, unique_suffix());
  bool placed = false;
  {
    Fd fd(::openat(dir.get(), part.c_str(),
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    if (!fd) return;
    // The part file goes on every way out but its rename, an exception included.
    struct PartGuard {
      int dir;
      const std::string& name;
      const bool& placed;
      ~PartGuard() {
        if (!placed) ::unlinkat(dir, name.c_str(), 0);
      }
    } guard{dir.get(), part, placed};
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t put = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) break;
      done += static_cast<std::size_t>(put);
    }
    // On disk before it has its name: after a power loss, the rename may have reached the disk
    // without the bytes, leaving a chunk of the right size full of zeros that would be served.
    const bool whole = done == bytes.size() && ::fsync(fd.get()) == 0 && ::close(fd.release()) == 0;
    placed =
        whole && ::renameat(dir.get(), part.c_str(), dir.get(), std::to_string(n).c_str()) == 0;
  }
  bool due;
  {
    const std::lock_guard lock(trim_mu_);
    written_since_trim_ += bytes.size();
    due = written_since_trim_ >= limit_ / 8;
  }
  if (due) trim();
}

void ChunkCache::trim() {
  if (chunks_fd_ < 0) return;
  const std::lock_guard lock(trim_mu_);
  written_since_trim_ = 0;
  struct Chunk {
    struct timespec used;
    std::size_t key;  // in keys
    std::string name;
    std::uint64_t bytes;
  };
  std::vector<Chunk> chunks;
  std::vector<std::string> keys, names;
  std::uint64_t total = 0;
  const std::time_t now = std::time(nullptr);
  // Only KEY folders and, inside them, chunk and part files, each examined through the handle
  // of its folder: nothing else is ever touched, and no link is followed.
  if (!list(chunks_fd_, keys)) return;
  std::erase_if(keys, [](const std::string& k) { return !is_sha256_hex(k); });
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const Fd dir(open_key(keys[k], false));
    names.clear();
    if (!dir || !list(dir.get(), names)) continue;
    for (const std::string& name : names) {
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
          !S_ISREG(st.st_mode)) {
        continue;
      }
      if (is_part_name(name)) {
        if (now - modification_time(st).tv_sec > kStalePartSeconds)
          ::unlinkat(dir.get(), name.c_str(), 0);
      } else if (is_chunk_name(name)) {
        total += static_cast<std::uint64_t>(st.st_size);
        chunks.push_back({modification_time(st), k, name, static_cast<std::uint64_t>(st.st_size)});
      }
    }
  }
  if (total > limit_) {
    // Least recently used first (see read()).
    std::sort(chunks.begin(), chunks.end(),
              [](const Chunk& a, const Chunk& b) { return earlier(a.used, b.used); });
    Fd dir;
    std::size_t open_key_index = keys.size();
    for (const Chunk& c : chunks) {
      if (total <= limit_ / 10 * 9) break;
      if (c.key != open_key_index) {
        dir = Fd(open_key(keys[c.key], false));
        open_key_index = c.key;
      }
      if (dir && ::unlinkat(dir.get(), c.name.c_str(), 0) == 0) total -= c.bytes;
    }
  }
  for (const std::string& k : keys) ::unlinkat(chunks_fd_, k.c_str(), AT_REMOVEDIR);  // if empty
}

}  // namespace ggufs
