// The on-disk cache of remote files' chunks, shared by every mount that names the same folder.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace ggufs {

/// Chunks of remote files, kept between mounts and trimmed to a size limit.
///
/// Layout, and the only files it ever writes or deletes (a cache folder pointed at a folder of
/// the user's must never destroy anything):
///   ROOT/CACHEDIR.TAG                 marks the folder as a cache (backup tools skip it)
///   ROOT/.CACHEDIR.TAG.PID.TID.SEQ.part      the tag being written (renamed when whole)
///   ROOT/chunks-v2/KEY/N              chunk N (bytes [N × chunk size, …)) of one remote file
///   ROOT/chunks-v2/KEY/.N.PID.TID.SEQ.part   a chunk being written (renamed to N when whole)
/// KEY is the sha256 (hex) of the file's identity: URL, ETag, Last-Modified and size. URLs and
/// credentials never appear in a name. Only chunks that passed every check of the answer that
/// brought them are stored, so a file here is trusted when its size is the chunk's size.
///
/// Whose folder. A chunk in the cache is served as the model's bytes, so nobody but the user
/// running ggufs may be able to put one there: ROOT must be owned by the effective user and not
/// writable by group or others, and so must chunks-v2 (a KEY folder that is not is ignored).
/// This holds alike for `-o cache_dir` and for the default folder: the risk is the same however
/// the folder was named, and a group-shared cache would let every member plant chunks. Folders
/// the cache creates (ROOT and any missing parent, as the XDG Base Directory Specification asks
/// of ~/.cache) are made 0700. ROOT is used only when it is missing, empty, or already a ggufs
/// cache (its CACHEDIR.TAG names ggufs; a folder of a cache written before the tag existed,
/// holding only KEY folders, is adopted).
///
/// No link is ever followed inside ROOT: ROOT is opened once with O_NOFOLLOW, and every later
/// step (chunks-v2, each KEY folder, each chunk, the tag) is taken relative to a handle opened
/// with O_NOFOLLOW, so a link planted at any level is neither read, written through nor
/// trimmed through. Every file is opened O_NONBLOCK and must be a regular file (a FIFO never
/// blocks a reader). The tag is written to a name of its own and renamed into place without
/// replacing anything; a chunk is fsync'ed before its rename, so after a power loss a chunk is
/// either whole or missing.
class ChunkCache {
 public:
  /// Opens (creating) the cache at `root`, trimmed to `limit_bytes` (bytes). Throws IoError,
  /// one line naming `root` and why, when `root` is a symbolic link or not a folder, cannot be
  /// listed, is owned by another user, is writable by group or others, or holds files the
  /// cache did not write. A folder that cannot be created, or a tag that cannot be written,
  /// leaves the cache disabled: chunks are then fetched every time.
  ChunkCache(std::filesystem::path root, std::uint64_t limit_bytes);
  ~ChunkCache();
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;

  /// $XDG_CACHE_HOME/ggufs, else $HOME/.cache/ggufs, else ${TMPDIR:-/tmp}/ggufs-cache-UID (UID:
  /// the effective user id; the constructor makes it 0700, and refuses it when another user
  /// made it first).
  static std::filesystem::path default_root();

  /// The key (64 hex digits) of a remote file's identity.
  static std::string key(const std::string& url, const std::string& etag,
                         const std::string& last_modified, std::uint64_t size);

  /// Whether chunk `n` of `key` is stored whole (`chunk_bytes` long).
  bool has(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes) const;

  /// Copies bytes [from, from + len) of chunk `n` into `dst`; false when the chunk is missing
  /// or not `chunk_bytes` long (it is then fetched again). A read marks the chunk used (its
  /// modification time becomes now, at most once a minute), which orders the trim.
  bool read(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes, std::uint64_t from,
            std::uint64_t len, char* dst) const;

  /// Stores chunk `n` (written under a name unique to this process and thread, fsync'ed, then
  /// renamed: no reader, in this mount or another, ever sees part of a chunk). Trims the cache
  /// now and then. I/O failures only cost fetching again: nothing but std::bad_alloc is thrown.
  void store(const std::string& key, std::uint64_t n, const std::vector<char>& bytes);

  /// Deletes the least recently used chunks (stored or read longest ago) until the cache holds
  /// at most 90 % of its limit (when it holds more than the limit), and part files older than
  /// ten minutes (of a process that died). Throws nothing but std::bad_alloc.
  void trim();

  /// The folder of the chunks (ROOT/chunks-v2).
  const std::filesystem::path& chunks_dir() const { return chunks_; }

 private:
  // The KEY folder of `key`, opened O_NOFOLLOW (made first when `create`); -1 when it is
  // missing, a link, not the user's own or `key` is not a key.
  int open_key(const std::string& key, bool create) const;

  std::filesystem::path root_, chunks_;
  std::uint64_t limit_;
  int chunks_fd_ = -1;  // ROOT/chunks-v2, opened O_NOFOLLOW; -1: the cache is disabled
  std::mutex trim_mu_;
  std::uint64_t written_since_trim_ = 0;  // guarded by trim_mu_
};

}  // namespace ggufs
