// A GGUF file on an HTTP(S) server, read with range requests through libcurl and kept in a
// bounded on-disk chunk cache, so a remote model is never downloaded whole.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "ggufs/byte_source.h"

namespace ggufs {

/// How remote files are fetched and cached.
struct RemoteOptions {
  /// Directory of the chunk cache; empty: $XDG_CACHE_HOME/ggufs, else ~/.cache/ggufs.
  std::string cache_dir;
  std::uint64_t cache_limit_bytes = std::uint64_t{4} << 30;  ///< the cache is trimmed to this
  std::uint32_t chunk_bytes = 1 << 20;   ///< unit of fetching and caching (bytes)
  std::uint32_t max_tries = 5;           ///< per chunk, for timeouts, resets, 5xx and 429
  std::uint32_t first_backoff_ms = 100;  ///< doubled after each failed try, at most 2 s
  std::uint32_t timeout_s = 30;          ///< per request, and for stalls of 10 s
  std::uint32_t readahead_chunks = 4;    ///< fetched ahead of sequential reads
  /// CA certificates (PEM) to verify https servers with; empty: the system's.
  std::string ca_file;
  /// Bearer token for Authorization (from GGUFS_HTTP_TOKEN or a token file; never logged).
  std::string bearer_token;
};

/// Whether `path` names a remote file (http:// or https://).
bool is_url(const std::string& path);

/// Reads a remote file by byte ranges. On construction, fetches the first chunk to learn the
/// size (Content-Range) and the file's identity (ETag, Last-Modified); every later response
/// must carry the same identity, so a file changed on the server is never mixed with the cached
/// old one (Fault::kModified). A server that answers a range request with the whole file (200)
/// is refused, never downloaded. Chunks are cached under cache_dir/<sha256 of URL, ETag,
/// Last-Modified and size>/; sequential reads fetch the next chunks ahead, concurrently.
/// Thread-safe. Throws IoError (naming the URL, never the token) when the file cannot be fetched.
class HttpSource final : public ByteSource {
 public:
  HttpSource(std::string url, RemoteOptions options);
  ~HttpSource() override;
  HttpSource(const HttpSource&) = delete;
  HttpSource& operator=(const HttpSource&) = delete;

  std::uint64_t size() const override;
  std::size_t read_at(std::uint64_t offset, void* dst, std::size_t n) const override;

  /// Bytes received from the server so far (bodies of successful responses).
  std::uint64_t bytes_fetched() const;
  /// Requests that were retried so far.
  std::uint64_t retries() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ggufs
