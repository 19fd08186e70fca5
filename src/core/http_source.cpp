// Range requests with libcurl (the multi interface fetches several chunks at once), the chunk
// cache on disk, and the retry rules. See http_source.h.
#include "ggufs/http_source.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "ggufs/error.h"
#include "ggufs/names.h"

namespace ggufs {
namespace fs = std::filesystem;

namespace {

std::once_flag g_curl_init;

// What one response said: status, the headers that identify the file, and the body.
struct Response {
  long status = 0;
  std::string content_range, etag, last_modified;
  std::vector<char> body;
  bool refused_whole_file = false;  // a 200 to a range request: the transfer was cut short
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' '))
    s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Response*>(user);
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {  // a new response (after a redirect): start over
    r->content_range.clear();
    r->etag.clear();
    r->last_modified.clear();
    r->body.clear();  // keeps its reserved room
    r->refused_whole_file = false;
    const auto sp = line.find(' ');
    if (sp != std::string_view::npos) r->status = std::strtol(line.data() + sp + 1, nullptr, 10);
    return size * n;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  const std::string name = lower(line.substr(0, colon));
  const std::string value = trim(line.substr(colon + 1));
  if (name == "content-range") r->content_range = value;
  if (name == "etag") r->etag = value;
  if (name == "last-modified") r->last_modified = value;
  return size * n;
}

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<Response*>(user);
  if (r->status == 200) {  // the server ignores Range: do not download the whole file
    r->refused_whole_file = true;
    return 0;
  }
  r->body.insert(r->body.end(), data, data + size * n);
  return size * n;
}

// The total size from "bytes FIRST-LAST/TOTAL", or nullopt.
std::optional<std::uint64_t> content_range_total(const std::string& v) {
  const auto slash = v.rfind('/');
  if (!v.starts_with("bytes ") || slash == std::string::npos || v.substr(slash + 1) == "*") {
    return std::nullopt;
  }
  return std::strtoull(v.c_str() + slash + 1, nullptr, 10);
}

std::string sha256_hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), md, &len, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < len; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

fs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "ggufs";
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "ggufs";
  }
  return fs::temp_directory_path() / "ggufs-cache";
}

// Transient failures, worth another try after a pause.
bool retryable(CURLcode c) {
  switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_COULDNT_CONNECT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_url(const std::string& path) {
  return path.starts_with("http://") || path.starts_with("https://");
}

struct HttpSource::Impl {
  std::string url;
  RemoteOptions opt;
  std::uint64_t size = 0;
  std::string etag, last_modified;  // the identity every response must repeat
  fs::path root;                    // the cache
  fs::path dir;                     // this file's chunks
  std::atomic<std::uint64_t> fetched{0}, retried{0};
  std::atomic<std::int64_t> last_chunk{-2};  // for sequential read-ahead
  std::mutex trim_mu;
  std::mutex flight_mu;  // guards in_flight
  std::condition_variable flight_cv;
  std::set<std::uint64_t> in_flight;  // chunks some thread is fetching
  std::atomic<std::uint64_t> written_since_trim{0};

  std::uint64_t chunk_count() const { return (size + opt.chunk_bytes - 1) / opt.chunk_bytes; }
  std::uint64_t chunk_begin(std::uint64_t c) const { return c * opt.chunk_bytes; }
  std::uint64_t chunk_len(std::uint64_t c) const {
    return std::min<std::uint64_t>(opt.chunk_bytes, size - chunk_begin(c));
  }
  fs::path chunk_path(std::uint64_t c) const { return dir / std::to_string(c); }

  CURL* make_handle(std::uint64_t first, std::uint64_t last, Response* r,
                    curl_slist* headers) const {
    CURL* h = curl_easy_init();
    if (!h) throw IoError(fmt::format("{}: cannot start a transfer (libcurl)", printable(url)));
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_RANGE, fmt::format("{}-{}", first, last).c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(opt.timeout_s));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);  // a stalled transfer is a timeout
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 10L);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "ggufs");
    if (!opt.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, opt.ca_file.c_str());
    if (headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    return h;
  }

  // What is wrong with `r` as the answer for bytes [first, last], or "" when it is right.
  // `fatal` is set for answers that another try would not change.
  std::string judge(const Response& r, CURLcode code, std::uint64_t first, std::uint64_t last,
                    bool& fatal, Fault& fault) const {
    fatal = false;
    fault = Fault::kReadError;
    if (r.refused_whole_file) {
      fatal = true;
      return "the server ignores byte ranges (it answered a range request with the whole file); "
             "ggufs reads remote models by ranges only and does not download them whole";
    }
    if (code != CURLE_OK) {
      fatal = !retryable(code);
      return curl_easy_strerror(code);
    }
    if (r.status == 429 || r.status >= 500) return fmt::format("HTTP status {}", r.status);
    if (r.status == 416) {
      fatal = true;
      fault = Fault::kTruncated;
      return "HTTP status 416: the file is shorter than it was";
    }
    if (r.status != 206) {
      fatal = true;
      return fmt::format("HTTP status {}", r.status);
    }
    if (size != 0) {  // after the first answer: the same file, the same size
      const auto total = content_range_total(r.content_range);
      if ((!etag.empty() && r.etag != etag) ||
          (!last_modified.empty() && r.last_modified != last_modified) ||
          (total && *total != size)) {
        fatal = true;
        fault = Fault::kModified;
        return "the file changed on the server (ETag, Last-Modified or size differ); its "
               "tensors are no longer served";
      }
      if (r.body.size() != last - first + 1) {
        return fmt::format("short answer: {} bytes of {}", r.body.size(), last - first + 1);
      }
    }
    return "";
  }

  // Fetches the byte ranges `ranges` at once (curl multi), retrying each as the rules allow.
  // Returns the bodies in order. Throws IoError when a range cannot be fetched.
  std::vector<std::vector<char>> fetch(
      const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
    std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    curl_slist* headers = nullptr;
    if (!opt.bearer_token.empty()) {
      headers = curl_slist_append(headers, ("Authorization: Bearer " + opt.bearer_token).c_str());
    }
    std::vector<std::vector<char>> out(ranges.size());
    std::vector<std::size_t> todo(ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) todo[i] = i;
    std::uint32_t backoff = opt.first_backoff_ms;
    for (std::uint32_t attempt = 1; !todo.empty(); ++attempt) {
      std::vector<Response> responses(todo.size());
      std::vector<CURL*> handles;
      CURLM* multi = curl_multi_init();
      for (std::size_t k = 0; k < todo.size(); ++k) {
        const auto [first, last] = ranges[todo[k]];
        responses[k].body.reserve(static_cast<std::size_t>(last - first + 1));  // no regrowth
        handles.push_back(make_handle(first, last, &responses[k], headers));
        curl_multi_add_handle(multi, handles.back());
      }
      int running = 0;
      do {
        curl_multi_perform(multi, &running);
        if (running) curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
      } while (running);
      std::vector<CURLcode> codes(todo.size(), CURLE_OK);
      while (CURLMsg* msg = curl_multi_info_read(multi, &running)) {
        if (msg->msg != CURLMSG_DONE) continue;
        for (std::size_t k = 0; k < handles.size(); ++k) {
          if (handles[k] == msg->easy_handle) codes[k] = msg->data.result;
        }
      }
      std::vector<std::size_t> again;
      std::string problem;
      Fault fault = Fault::kReadError;
      bool fatal = false;
      for (std::size_t k = 0; k < todo.size(); ++k) {
        curl_multi_remove_handle(multi, handles[k]);
        curl_easy_cleanup(handles[k]);
        const auto [first, last] = ranges[todo[k]];
        bool this_fatal = false;
        Fault this_fault = Fault::kReadError;
        const std::string why = judge(responses[k], codes[k], first, last, this_fatal, this_fault);
        if (why.empty()) {
          fetched += responses[k].body.size();
          if (size == 0) adopt_identity(responses[k]);
          out[todo[k]] = std::move(responses[k].body);
          continue;
        }
        again.push_back(todo[k]);
        if (problem.empty() || this_fatal) {
          problem = fmt::format("bytes {}-{}: {}", first, last, why);
          fault = this_fault;
          fatal = fatal || this_fatal;
        }
      }
      curl_multi_cleanup(multi);
      if (!again.empty() && (fatal || attempt >= opt.max_tries)) {
        curl_slist_free_all(headers);
        throw IoError(fmt::format("{}: {}{}", printable(url), problem,
                                  fatal ? "" : fmt::format(" (after {} tries)", attempt)),
                      fault);
      }
      if (!again.empty()) {
        retried += again.size();
        std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
        backoff = std::min<std::uint32_t>(backoff * 2, 2000);
      }
      todo = std::move(again);
    }
    curl_slist_free_all(headers);
    return out;
  }

  // The size and identity of the file from its first answer; the cache directory follows.
  void adopt_identity(const Response& r) {
    const auto total = content_range_total(r.content_range);
    if (!total) {
      throw IoError(
          fmt::format("{}: the answer to a range request has no usable Content-Range "
                      "('{}')",
                      printable(url), printable(r.content_range)));
    }
    size = *total;
    etag = r.etag;
    last_modified = r.last_modified;
    const std::string key =
        sha256_hex(fmt::format("{}\n{}\n{}\n{}", url, etag, last_modified, size));
    dir = root / key;
    std::error_code ec;
    fs::create_directories(dir, ec);  // no cache: chunks are fetched every time
  }

  // Bytes [from, from + len) of chunk `c` from the cache into `dst`; false when the chunk is not
  // there whole (a chunk file of another size is not trusted).
  bool read_cached(std::uint64_t c, std::uint64_t from, std::uint64_t len, char* dst) const {
    const int fd = ::open(chunk_path(c).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    std::uint64_t done = 0;
    if (::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) == chunk_len(c)) {
      while (done < len) {
        const ssize_t n = ::pread(fd, dst + done, len - done, static_cast<off_t>(from + done));
        if (n <= 0) break;
        done += static_cast<std::uint64_t>(n);
      }
    }
    ::close(fd);
    return done == len;
  }

  // Stores chunk `c` (written to a temporary name, then renamed: readers never see a part).
  void store(std::uint64_t c, const std::vector<char>& bytes) {
    const fs::path tmp = dir / fmt::format(".{}.{}.tmp", c, ::gettid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;  // an unwritable cache only costs refetching
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    std::error_code ec;
    if (done == bytes.size()) {
      fs::rename(tmp, chunk_path(c), ec);
    } else {
      fs::remove(tmp, ec);
    }
    if ((written_since_trim += bytes.size()) >= opt.cache_limit_bytes / 8) trim();
  }

  // Keeps the whole cache (every file's chunks) under its limit, oldest chunks out first.
  void trim() {
    const std::lock_guard lock(trim_mu);
    written_since_trim = 0;
    std::vector<std::pair<fs::file_time_type, fs::path>> files;
    std::uint64_t total = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      total += it->file_size(ec);
      files.emplace_back(it->last_write_time(ec), it->path());
    }
    if (total <= opt.cache_limit_bytes) return;
    std::sort(files.begin(), files.end());
    for (const auto& [when, path] : files) {
      if (total <= opt.cache_limit_bytes / 10 * 9) break;
      const std::uint64_t bytes = fs::file_size(path, ec);
      if (fs::remove(path, ec)) total -= bytes;
    }
  }
};

HttpSource::HttpSource(std::string url, RemoteOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->url = std::move(url);
  impl_->opt = std::move(options);
  impl_->opt.chunk_bytes = std::max<std::uint32_t>(impl_->opt.chunk_bytes, 4096);
  impl_->opt.max_tries = std::max<std::uint32_t>(impl_->opt.max_tries, 1);
  impl_->root = impl_->opt.cache_dir.empty() ? default_cache_dir() : fs::path(impl_->opt.cache_dir);
  // The first chunk tells the size and identity (and is most of a header).
  auto first = impl_->fetch({{0, impl_->opt.chunk_bytes - 1}});
  if (impl_->size > 0) {
    first[0].resize(static_cast<std::size_t>(impl_->chunk_len(0)));
    impl_->store(0, first[0]);
  }
}

HttpSource::~HttpSource() = default;

std::uint64_t HttpSource::size() const { return impl_->size; }

std::uint64_t HttpSource::bytes_fetched() const { return impl_->fetched; }

std::uint64_t HttpSource::retries() const { return impl_->retried; }

std::size_t HttpSource::read_at(std::uint64_t offset, void* dst, std::size_t n) const {
  Impl& s = *impl_;
  if (offset >= s.size || n == 0) return 0;
  n = static_cast<std::size_t>(std::min<std::uint64_t>(n, s.size - offset));
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
  // not fetched twice (the kernel sends several read-ahead requests at once).
  std::vector<std::uint64_t> missing;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  {
    std::unique_lock lock(s.flight_mu);
    for (std::uint64_t c = first; c <= until; ++c) {
      if (c > last && missing.empty()) break;
      if (s.in_flight.count(c) || std::filesystem::exists(s.chunk_path(c))) continue;
      s.in_flight.insert(c);
      missing.push_back(c);
      ranges.emplace_back(s.chunk_begin(c), s.chunk_begin(c) + s.chunk_len(c) - 1);
    }
  }
  const auto land = [&s, &missing] {
    const std::lock_guard lock(s.flight_mu);
    for (std::uint64_t c : missing) s.in_flight.erase(c);
    s.flight_cv.notify_all();
  };
  std::vector<std::vector<char>> bodies;
  if (!ranges.empty()) {
    try {
      bodies = s.fetch(ranges);
    } catch (...) {
      land();
      throw;
    }
    for (std::size_t i = 0; i < missing.size(); ++i) s.store(missing[i], bodies[i]);
    land();
  }
  {
    std::unique_lock lock(s.flight_mu);
    s.flight_cv.wait(lock, [&] {
      for (std::uint64_t c = first; c <= last; ++c) {
        if (s.in_flight.count(c)) return false;
      }
      return true;
    });
  }
  // Copy out of what was just fetched, else straight out of the cache (fetched again if a
  // cached chunk has gone or is damaged).
  auto* out = static_cast<char*>(dst);
  for (std::uint64_t c = first; c <= last; ++c) {
    const std::uint64_t lo = std::max(offset, s.chunk_begin(c));
    const std::uint64_t hi = std::min(offset + n, s.chunk_begin(c) + s.chunk_len(c));
    const auto it = std::find(missing.begin(), missing.end(), c);
    if (it == missing.end() &&
        s.read_cached(c, lo - s.chunk_begin(c), hi - lo, out + (lo - offset))) {
      continue;
    }
    const std::vector<char> chunk =
        it != missing.end()
            ? std::move(bodies[static_cast<std::size_t>(it - missing.begin())])
            : s.fetch({{s.chunk_begin(c), s.chunk_begin(c) + s.chunk_len(c) - 1}})[0];
    std::memcpy(out + (lo - offset), chunk.data() + (lo - s.chunk_begin(c)), hi - lo);
  }
  return n;
}

}  // namespace ggufs
