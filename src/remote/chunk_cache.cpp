// The chunk cache's folder layout, its checks before touching anything, and the trim.
// See chunk_cache.h.
#include "ggufs/chunk_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace fs = std::filesystem;

namespace {

// The first line every cache tag starts with (the Cache Directory Tagging Specification), and
// the line that says the cache is ours.
constexpr const char* kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55";
constexpr const char* kTagOwner = "# ggufs: chunks of remote GGUF models (ggufs's chunk cache)";
constexpr const char* kTagName = "CACHEDIR.TAG";
constexpr const char* kChunksName = "chunks-v2";
constexpr auto kStalePart = std::chrono::minutes(10);

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

bool is_regular(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

bool is_plain_dir(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::directory;
}

bool tag_is_ours(const fs::path& tag) {
  if (!is_regular(tag)) return false;
  std::ifstream in(tag);
  std::string first, text;
  std::getline(in, first);
  std::ostringstream rest;
  rest << in.rdbuf();
  return first == kTagSignature && rest.str().find(kTagOwner) != std::string::npos;
}

// A KEY folder of the layout before the tag: chunk and part files only.
bool is_legacy_key_dir(const fs::path& dir) {
  if (!is_plain_dir(dir) || !is_sha256_hex(dir.filename().string())) return false;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!is_regular(e.path()) || (!is_chunk_name(name) && !is_part_name(name))) return false;
  }
  return !ec;
}

}  // namespace

fs::path ChunkCache::default_root() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "ggufs";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "ggufs";
  }
  return fs::temp_directory_path() / "ggufs-cache";
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
  std::error_code ec;
  const fs::path tag = root_ / kTagName;
  if (!tag_is_ours(tag)) {
    // Not (yet) our cache: take it only when nothing in it is someone else's.
    std::vector<fs::path> legacy;
    for (const auto& e : fs::directory_iterator(root_, ec)) {
      if (!is_legacy_key_dir(e.path())) {
        throw IoError(fmt::format(
            "cache folder {}: it holds files that are not ggufs's chunk cache ('{}'); choose "
            "an empty or new folder with -o cache_dir (ggufs deletes old chunks in its cache "
            "folder, so it never uses a folder of other files)",
            printable(root_.string()), printable(e.path().filename().string())));
      }
      legacy.push_back(e.path());
    }
    // Chunks of the older layout were stored before every answer was checked: not trusted.
    for (const fs::path& dir : legacy) {
      for (const auto& e : fs::directory_iterator(dir, ec)) fs::remove(e.path(), ec);
      fs::remove(dir, ec);
    }
    fs::create_directories(root_, ec);
    std::ofstream out(tag);
    out << kTagSignature << "\n"
        << kTagOwner << "\n"
        << "# For information about cache directory tags see https://bford.info/cachedir/\n";
    if (!out.flush()) return;  // an unwritable cache only costs fetching again
  }
  fs::create_directories(chunks_, ec);
  enabled_ = is_plain_dir(chunks_) && ::access(chunks_.c_str(), W_OK) == 0;
}

bool ChunkCache::has(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes) const {
  if (!enabled_) return false;
  struct stat st {};
  const fs::path p = chunks_ / key / std::to_string(n);
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         static_cast<std::uint64_t>(st.st_size) == chunk_bytes;
}

bool ChunkCache::read(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes,
                      std::uint64_t from, std::uint64_t len, char* dst) const {
  if (!enabled_) return false;
  const fs::path p = chunks_ / key / std::to_string(n);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  std::uint64_t done = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      static_cast<std::uint64_t>(st.st_size) == chunk_bytes) {
    while (done < len) {
      const ssize_t got = ::pread(fd, dst + done, len - done, static_cast<off_t>(from + done));
      if (got <= 0) break;
      done += static_cast<std::uint64_t>(got);
    }
  }
  ::close(fd);
  return done == len;
}

void ChunkCache::store(const std::string& key, std::uint64_t n, const std::vector<char>& bytes) {
  if (!enabled_) return;
  static std::atomic<std::uint64_t> seq{0};
  const fs::path dir = chunks_ / key;
  std::error_code ec;
  fs::create_directory(dir, ec);
  const fs::path part = dir / fmt::format(".{}.{}.{}.{}.part", n, ::getpid(), ::gettid(), ++seq);
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (put <= 0) break;
    done += static_cast<std::size_t>(put);
  }
  ::close(fd);
  if (done == bytes.size()) {
    fs::rename(part, dir / std::to_string(n), ec);
  } else {
    fs::remove(part, ec);
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
  if (!enabled_) return;
  const std::lock_guard lock(trim_mu_);
  written_since_trim_ = 0;
  struct Chunk {
    fs::file_time_type when;
    fs::path path;
    std::uint64_t bytes;
  };
  std::vector<Chunk> chunks;
  std::vector<fs::path> keys;
  std::uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  // Only KEY folders and, inside them, chunk and part files: nothing else is ever touched, and
  // no link is followed.
  for (const auto& k : fs::directory_iterator(chunks_, ec)) {
    if (!is_plain_dir(k.path()) || !is_sha256_hex(k.path().filename().string())) continue;
    keys.push_back(k.path());
    std::error_code inner;
    for (const auto& e : fs::directory_iterator(k.path(), inner)) {
      const std::string name = e.path().filename().string();
      if (!is_regular(e.path())) continue;
      const auto when = fs::last_write_time(e.path(), inner);
      if (is_part_name(name)) {
        if (!inner && now - when > kStalePart) fs::remove(e.path(), inner);
        continue;
      }
      if (!is_chunk_name(name)) continue;
      const std::uint64_t bytes = fs::file_size(e.path(), inner);
      if (inner) continue;
      total += bytes;
      chunks.push_back({when, e.path(), bytes});
    }
  }
  if (total > limit_) {
    std::sort(chunks.begin(), chunks.end(),
              [](const Chunk& a, const Chunk& b) { return a.when < b.when; });
    for (const Chunk& c : chunks) {
      if (total <= limit_ / 10 * 9) break;
      if (fs::remove(c.path, ec)) total -= c.bytes;
    }
  }
  for (const fs::path& k : keys) fs::remove(k, ec);  // only empty folders go
}

}  // namespace ggufs
