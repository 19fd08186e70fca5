// Which chunks a read needs, who fetches them, what is remembered of failures, and the cache.
// See http_source.h; the requests and their checks are in range_fetcher.cpp.
#include "ggufs/http_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "ggufs/chunk_cache.h"
#include "ggufs/error.h"
#include "range_fetcher.h"

namespace ggufs {

namespace {
thread_local Clock::time_point t_deadline{};

// Runs `f` when it goes out of scope: on every way out, an exception included.
template <class F>
class OnScopeExit {
 public:
  explicit OnScopeExit(F f) : f_(std::move(f)) {}
  ~OnScopeExit() { f_(); }
  OnScopeExit(const OnScopeExit&) = delete;
  OnScopeExit& operator=(const OnScopeExit&) = delete;

 private:
  F f_;
};
}  // namespace

bool is_url(const std::string& path) { return is_remote(path); }

ReadDeadline::ReadDeadline(Clock::time_point when) : previous_(t_deadline) { t_deadline = when; }
ReadDeadline::~ReadDeadline() { t_deadline = previous_; }
Clock::time_point ReadDeadline::current() { return t_deadline; }

struct HttpSource::Impl {
  RemoteOptions opt;
  std::unique_ptr<RangeFetcher> fetcher;
  std::unique_ptr<ChunkCache> cache;
  std::string key;  // of this file in the cache
  std::uint64_t size = 0;
  std::atomic<std::int64_t> last_chunk{-2};  // for sequential read-ahead

  struct Failure {
    Clock::time_point until;
    std::string why;
    Fault fault;
  };
  std::mutex mu;  // guards in_flight, failed, modified
  std::condition_variable landed;
  std::set<std::uint64_t> in_flight;  // chunks some thread is fetching
  std::map<std::uint64_t, Failure> failed;
  std::optional<Failure> modified;  // the file changed on the server: for good

  std::uint64_t chunk_count() const { return (size + opt.chunk_bytes - 1) / opt.chunk_bytes; }
  std::uint64_t chunk_begin(std::uint64_t c) const { return c * opt.chunk_bytes; }
  std::uint64_t chunk_len(std::uint64_t c) const {
    return std::min<std::uint64_t>(opt.chunk_bytes, size - chunk_begin(c));
  }

  Clock::time_point deadline() const {
    const Clock::time_point set = ReadDeadline::current();
    return set != Clock::time_point{} ? set
                                      : Clock::now() + std::chrono::seconds(opt.read_timeout_s);
  }

  // The remembered failure of chunk `c` that still holds, if any (mu held).
  const Failure* failure(std::uint64_t c, Clock::time_point now) const {
    if (modified) return &*modified;
    const auto it = failed.find(c);
    return it != failed.end() && it->second.until > now ? &it->second : nullptr;
  }
};

HttpSource::HttpSource(const std::string& name, RemoteOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.opt = std::move(options);
  s.opt.chunk_bytes = std::max<std::uint32_t>(s.opt.chunk_bytes, 4096);
  s.opt.max_tries = std::max<std::uint32_t>(s.opt.max_tries, 1);
  s.opt.read_timeout_s = std::clamp<std::uint32_t>(s.opt.read_timeout_s, 1, 60);
  RemoteLocation where = resolve_remote(name, s.opt.s3, s.opt.bearer_token, process_env());
  const std::string url = where.url;
  s.cache = std::make_unique<ChunkCache>(
      s.opt.cache_dir.empty() ? ChunkCache::default_root() : std::filesystem::path(s.opt.cache_dir),
      s.opt.cache_limit_bytes);
  s.fetcher = std::make_unique<RangeFetcher>(std::move(where), s.opt);
  // The first chunk tells the size and identity (and is most of a header).
  std::vector<char> first = s.fetcher->fetch_first(
      s.opt.chunk_bytes - 1, Clock::now() + std::chrono::seconds(s.opt.read_timeout_s));
  const RemoteIdentity& id = s.fetcher->identity();
  s.size = id.size;
  s.key = ChunkCache::key(url, id.etag, id.last_modified, id.size);
  if (s.size > 0) s.cache->store(s.key, 0, first);
}

HttpSource::~HttpSource() = default;

std::uint64_t HttpSource::size() const { return impl_->size; }

std::string HttpSource::name() const { return impl_->fetcher->shown(); }

std::unique_ptr<ByteSource> open_source(const std::string& name, const RemoteOptions& remote) {
  if (is_url(name)) return std::make_unique<HttpSource>(name, remote);
  return std::make_unique<FileSource>(name);
}

std::uint64_t HttpSource::bytes_fetched() const { return impl_->fetcher->bytes_fetched(); }

std::uint64_t HttpSource::retries() const { return impl_->fetcher->retries(); }

std::size_t HttpSource::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  Impl& s = *impl_;
  if (offset >= s.size || n == 0) return 0;
  n = static_cast<std::size_t>(std::min<std::uint64_t>(n, s.size - offset));
  const Clock::time_point deadline = s.deadline();
  const std::uint64_t first = offset / s.opt.chunk_bytes;
  const std::uint64_t last = (offset + n - 1) / s.opt.chunk_bytes;
  // Sequential reads (this range starts at or right after the last chunk read) may fetch the
  // chunks that follow too.
  const std::int64_t previous = s.last_chunk.exchange(static_cast<std::int64_t>(last));
  const bool sequential = static_cast<std::int64_t>(first) - previous <= 1 &&
                          static_cast<std::int64_t>(first) >= previous;
  const std::uint64_t until =
      std::min(s.chunk_count() - 1, last + (sequential ? s.opt.readahead_chunks : 0));

  // Only a read that must wait for the network fetches ahead, in the same batch: cached reads
  // never wait for chunks they do not need. A chunk another thread is fetching is waited for,
  // not fetched twice (the kernel sends several read-ahead requests at once); a chunk whose
  // fetch failed moments ago fails again at once.
  std::vector<std::uint64_t> missing;  // the chunks this read puts in flight
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  missing.reserve(until - first + 1);  // so that a chunk in flight is always in it (no throw)
  ranges.reserve(until - first + 1);
  // Takes this read's chunks out of flight and wakes the readers waiting for them (mu held).
  bool released = false;
  const auto release = [&] {
    for (std::uint64_t c : missing) s.in_flight.erase(c);
    released = true;
    s.landed.notify_all();
  };
  // On every way out, an exception included (from the fetch, or the cache: no memory, a library
  // that throws), else every later read of those chunks waits out read_timeout until remount.
  const OnScopeExit on_exit([&] {
    if (released || missing.empty()) return;
    const std::lock_guard lock(s.mu);
    release();
  });
  {
    const std::lock_guard lock(s.mu);
    const auto now = Clock::now();
    for (std::uint64_t c = first; c <= last; ++c) {
      if (const auto* f = s.failure(c, now)) throw IoError(f->why, f->fault);
    }
    for (std::uint64_t c = first; c <= until; ++c) {
      if (c > last && missing.empty()) break;
      if (s.in_flight.count(c) || s.failure(c, now) || s.cache->has(s.key, c, s.chunk_len(c))) {
        continue;
      }
      s.in_flight.insert(c);
      missing.push_back(c);
      ranges.emplace_back(s.chunk_begin(c), s.chunk_begin(c) + s.chunk_len(c) - 1);
    }
  }
  std::vector<RangeResult> results;
  if (!ranges.empty()) {
    results = s.fetcher->fetch(ranges, deadline);
    for (std::size_t i = 0; i < missing.size(); ++i) {
      if (results[i].error.empty()) s.cache->store(s.key, missing[i], results[i].bytes);
    }
    const std::lock_guard lock(s.mu);
    const auto until_time = Clock::now() + std::chrono::milliseconds(s.opt.failure_memory_ms);
    for (std::size_t i = 0; i < missing.size(); ++i) {
      const RangeResult& r = results[i];
      if (r.error.empty()) continue;
      if (r.fault == Fault::kModified) s.modified = Impl::Failure{until_time, r.error, r.fault};
      s.failed[missing[i]] = Impl::Failure{until_time, r.error, r.fault};
    }
    release();  // the waiters wake once mu is free, and see the failures just noted
  }
  {
    std::unique_lock lock(s.mu);
    const bool done = s.landed.wait_until(lock, deadline, [&] {
      for (std::uint64_t c = first; c <= last; ++c) {
        if (s.in_flight.count(c)) return false;
      }
      return true;
    });
    if (!done) {
      throw IoError(
          fmt::format("{}: bytes {}-{}: no answer within the read's bound of {} s "
                      "(waiting for another read's fetch)",
                      s.fetcher->shown(), offset, offset + n - 1, s.opt.read_timeout_s));
    }
    const auto now = Clock::now();
    for (std::uint64_t c = first; c <= last; ++c) {
      const auto it = std::find(missing.begin(), missing.end(), c);
      if (it != missing.end() &&
          results[static_cast<std::size_t>(it - missing.begin())].error.empty()) {
        continue;
      }
      if (const auto* f = s.failure(c, now)) throw IoError(f->why, f->fault);
    }
  }
  // Copy out of what was just fetched, else straight out of the cache (fetched again if a
  // cached chunk has gone or is damaged).
  auto* out = static_cast<char*>(dst);
  for (std::uint64_t c = first; c <= last; ++c) {
    const std::uint64_t lo = std::max(offset, s.chunk_begin(c));
    const std::uint64_t hi = std::min(offset + n, s.chunk_begin(c) + s.chunk_len(c));
    const auto it = std::find(missing.begin(), missing.end(), c);
    if (it == missing.end() && s.cache->read(s.key, c, s.chunk_len(c), lo - s.chunk_begin(c),
                                             hi - lo, out + (lo - offset))) {
      continue;
    }
    std::vector<char> chunk;
    if (it != missing.end()) {
      chunk = std::move(results[static_cast<std::size_t>(it - missing.begin())].bytes);
    } else {
      auto again =
          s.fetcher->fetch({{s.chunk_begin(c), s.chunk_begin(c) + s.chunk_len(c) - 1}}, deadline);
      if (!again[0].error.empty()) throw IoError(again[0].error, again[0].fault);
      chunk = std::move(again[0].bytes);
    }
    std::memcpy(out + (lo - offset), chunk.data() + (lo - s.chunk_begin(c)), hi - lo);
  }
  return n;
}

}  // namespace ggufs
