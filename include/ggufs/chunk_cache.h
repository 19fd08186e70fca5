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
///   ROOT/chunks-v2/KEY/N              chunk N (bytes [N × chunk size, …)) of one remote file
///   ROOT/chunks-v2/KEY/.N.PID.TID.SEQ.part   a chunk being written (renamed to N when whole)
/// KEY is the sha256 (hex) of the file's identity: URL, ETag, Last-Modified and size. URLs and
/// credentials never appear in a name. Only chunks that passed every check of the answer that
/// brought them are stored, so a file here is trusted when its size is the chunk's size.
///
/// ROOT is used only when it is missing, empty, or already a ggufs cache (its CACHEDIR.TAG
/// names ggufs; a folder of a cache written before the tag existed, holding only KEY folders,
/// is adopted). Any other folder is refused.
class ChunkCache {
 public:
  /// Opens (creating) the cache at `root`, trimmed to `limit_bytes`. Throws IoError naming
  /// `root` when it holds files the cache did not write. A folder that cannot be created or
  /// written leaves the cache disabled: chunks are then fetched every time.
  ChunkCache(std::filesystem::path root, std::uint64_t limit_bytes);

  /// $XDG_CACHE_HOME/ggufs, else ~/.cache/ggufs, else TMPDIR/ggufs-cache.
  static std::filesystem::path default_root();

  /// The key (64 hex digits) of a remote file's identity.
  static std::string key(const std::string& url, const std::string& etag,
                         const std::string& last_modified, std::uint64_t size);

  /// Whether chunk `n` of `key` is stored whole (`chunk_bytes` long).
  bool has(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes) const;

  /// Copies bytes [from, from + len) of chunk `n` into `dst`; false when the chunk is missing
  /// or not `chunk_bytes` long (it is then fetched again).
  bool read(const std::string& key, std::uint64_t n, std::uint64_t chunk_bytes, std::uint64_t from,
            std::uint64_t len, char* dst) const;

  /// Stores chunk `n` (written under a name unique to this process and thread, then renamed:
  /// no reader, in this mount or another, ever sees part of a chunk). Trims the cache now and
  /// then. Failures only cost fetching again.
  void store(const std::string& key, std::uint64_t n, const std::vector<char>& bytes);

  /// Deletes the oldest chunks until the cache holds at most 90 % of its limit (when it holds
  /// more than the limit), and part files older than ten minutes (of a process that died).
  void trim();

  /// The folder of the chunks (ROOT/chunks-v2).
  const std::filesystem::path& chunks_dir() const { return chunks_; }

 private:
  std::filesystem::path root_, chunks_;
  std::uint64_t limit_;
  bool enabled_ = false;
  std::mutex trim_mu_;
  std::uint64_t written_since_trim_ = 0;  // guarded by trim_mu_
};

}  // namespace ggufs
