// Range requests to one remote file, with every answer checked before its bytes are used.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ggufs/error.h"
#include "ggufs/http_source.h"
#include "ggufs/remote_location.h"

namespace ggufs {

using Clock = std::chrono::steady_clock;

/// What identifies a remote file: every answer must repeat what the first one said.
struct RemoteIdentity {
  std::uint64_t size = 0;  ///< bytes, from the first answer's Content-Range total
  std::string etag, last_modified;
};

/// The outcome of one range: its bytes, or why there are none.
struct RangeResult {
  std::vector<char> bytes;
  std::string error;  ///< empty on success
  Fault fault = Fault::kReadError;
};

/// Fetches byte ranges of one remote file with libcurl (several at once through the multi
/// interface), retrying transient failures (timeouts, resets, 5xx, 429) with backoff until the
/// read's deadline. An answer is used only when it is a 206 whose Content-Range names exactly
/// the range asked and the file's total size, whose body has exactly that many bytes, with no
/// Content-Encoding other than identity, and the same ETag and Last-Modified as the first
/// answer; anything else fails the range (RFC 9110 sections 14.4 and 15.3.7). Redirects are
/// followed to http and https only, five at most. Thread-safe.
class RangeFetcher {
 public:
  RangeFetcher(RemoteLocation where, RemoteOptions options);

  /// Fetches the first range and adopts the file's identity from it. `last` may lie past the
  /// end of the file. Throws IoError (naming the file, the answer and what was wrong).
  std::vector<char> fetch_first(std::uint64_t last, Clock::time_point deadline);

  /// Fetches `ranges` (inclusive [first, last] byte pairs within the file) until `deadline`;
  /// one result per range, in order. Never throws for a failed range.
  std::vector<RangeResult> fetch(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                                 Clock::time_point deadline);

  const RemoteIdentity& identity() const { return id_; }
  /// The name for messages (the user's name of the file, without any query string).
  const std::string& shown() const { return shown_; }
  std::uint64_t bytes_fetched() const { return fetched_; }
  std::uint64_t retries() const { return retried_; }

 private:
  struct Answer;
  std::string judge(const Answer& a, int curl_code, std::uint64_t first, std::uint64_t last,
                    bool& fatal, Fault& fault) const;

  RemoteLocation where_;
  RemoteOptions opt_;
  std::string shown_;
  RemoteIdentity id_;  // set once by fetch_first, read-only afterwards
  bool adopted_ = false;
  std::atomic<std::uint64_t> fetched_{0}, retried_{0};
};

}  // namespace ggufs
