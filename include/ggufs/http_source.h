// A GGUF file on an HTTP(S) server, an S3 bucket or the Hugging Face Hub, read with range
// requests through libcurl and kept in a bounded on-disk chunk cache, so a remote model is
// never downloaded whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "ggufs/byte_source.h"
#include "ggufs/remote_location.h"

namespace ggufs {

/// How remote files are fetched and cached.
struct RemoteOptions {
  /// Directory of the chunk cache; empty: ChunkCache::default_root().
  std::string cache_dir;
  std::uint64_t cache_limit_bytes = std::uint64_t{4} << 30;  ///< the cache is trimmed to this
  std::uint32_t chunk_bytes = 1 << 20;   ///< unit of fetching and caching (bytes)
  std::uint32_t max_tries = 5;           ///< per chunk, for timeouts, resets, 5xx and 429
  std::uint32_t first_backoff_ms = 100;  ///< doubled after each failed try, at most 2 s
  std::uint32_t timeout_s = 30;          ///< per request
  /// Total bound of one read in seconds, retries and waiting for other readers' fetches
  /// included (-o read_timeout; at most 60). A read still unanswered then fails with EIO.
  std::uint32_t read_timeout_s = 45;
  /// A transfer slower than this many bytes per second for 10 s is a stall, tried again.
  std::uint32_t min_speed_bps = 1024;
  /// How long a failed fetch is remembered (ms): reads of the same chunks meanwhile (the
  /// kernel's retry, readers queued behind it) fail at once instead of trying again.
  std::uint32_t failure_memory_ms = 5000;
  std::uint32_t readahead_chunks = 4;  ///< fetched ahead of sequential reads
  /// CA certificates (PEM) to verify https servers with; empty: the system's.
  std::string ca_file;
  /// Bearer token for plain http(s) URLs (from GGUFS_HTTP_TOKEN or a token file; never logged).
  std::string bearer_token;
  S3Settings s3;  ///< how s3:// names are resolved
};

/// Whether `path` names a remote file (http://, https://, s3:// or hf://).
bool is_url(const std::string& path);

/// Opens `name`: an HttpSource for remote names (is_url), else a FileSource. Throws IoError.
std::unique_ptr<ByteSource> open_source(const std::string& name, const RemoteOptions& remote);

/// Sets, for the reads this thread makes while it lives, the time by which they must be
/// answered (reads queued in the daemon count their wait); without one a read gets
/// RemoteOptions::read_timeout_s from its start.
class ReadDeadline {
 public:
  explicit ReadDeadline(std::chrono::steady_clock::time_point when);
  ~ReadDeadline();
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;
  /// The deadline set on this thread, or the epoch when none is.
  static std::chrono::steady_clock::time_point current();

 private:
  std::chrono::steady_clock::time_point previous_;
};

/// Reads a remote file by byte ranges. On construction, resolves the name (resolve_remote),
/// then fetches the first chunk to learn the size (Content-Range) and the file's identity
/// (ETag, Last-Modified); every later answer must carry the same identity, so a file changed on
/// the server is never mixed with the cached old one (Fault::kModified, for every later read).
/// A server that answers a range request with the whole file (200) is refused, never
/// downloaded. Every answer is checked (RangeFetcher) before its bytes are used or cached;
/// chunks live in a ChunkCache; sequential reads fetch the next chunks ahead, concurrently.
/// A failed fetch is remembered for failure_memory_ms. Thread-safe. Throws IoError (naming
/// the file, never a secret or a URL's query string) when the file cannot be fetched; for S3,
/// the message names the S3 error code (NoSuchKey, AccessDenied, SignatureDoesNotMatch).
class HttpSource final : public ByteSource {
 public:
  HttpSource(const std::string& name, RemoteOptions options);
  ~HttpSource() override;
  HttpSource(const HttpSource&) = delete;
  HttpSource& operator=(const HttpSource&) = delete;

  std::uint64_t size() const override;
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override;
  bool remote() const override { return true; }
  /// The name as given, without a URL's query string (which may hold a presigned signature).
  std::string name() const override;

  /// Bytes received from the server so far (bodies of successful answers).
  std::uint64_t bytes_fetched() const;
  /// Requests that were retried so far.
  std::uint64_t retries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ggufs
