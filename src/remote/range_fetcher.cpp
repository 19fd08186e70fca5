// Range requests with libcurl, the checks of every answer and the retry rules. See
// range_fetcher.h.
#include "range_fetcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "curl_library.h"
#include "ggufs/names.h"

namespace ggufs {
namespace {

// libcurl's handles, freed however a fetch ends.
struct EasyFree {
  void operator()(CURL* h) const { curl_library().easy_cleanup(h); }
};
struct MultiFree {
  void operator()(CURLM* m) const { curl_library().multi_cleanup(m); }
};
struct SlistFree {
  void operator()(curl_slist* l) const { curl_library().slist_free_all(l); }
};
using Easy = std::unique_ptr<CURL, EasyFree>;
using Multi = std::unique_ptr<CURLM, MultiFree>;
using Slist = std::unique_ptr<curl_slist, SlistFree>;

constexpr std::size_t kErrorBodyBytes = 4096;  // of a refusal: enough for an S3 error document

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ')) {
    s.remove_suffix(1);
  }
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

// "bytes FIRST-LAST/TOTAL" with FIRST <= LAST < TOTAL (RFC 9110 section 14.4), or nullopt.
struct ContentRange {
  std::uint64_t first, last, total;
};
std::optional<ContentRange> parse_content_range(const std::string& v) {
  if (!v.starts_with("bytes ")) return std::nullopt;
  std::uint64_t n[3] = {0, 0, 0};
  const char seps[3] = {'-', '/', '\0'};
  std::size_t pos = 6;
  for (int i = 0; i < 3; ++i) {
    const std::size_t start = pos;
    while (pos < v.size() && v[pos] >= '0' && v[pos] <= '9' && pos - start < 19) {
      n[i] = n[i] * 10 + static_cast<std::uint64_t>(v[pos] - '0');
      ++pos;
    }
    if (pos == start) return std::nullopt;
    if (seps[i] != '\0') {
      if (pos >= v.size() || v[pos] != seps[i]) return std::nullopt;
      ++pos;
    }
  }
  if (pos != v.size() || n[0] > n[1] || n[1] >= n[2]) return std::nullopt;
  return ContentRange{n[0], n[1], n[2]};
}

// The text of element <name> in an S3 error document ("" when absent).
std::string xml_element(const std::string& doc, const std::string& name) {
  const std::string open = "<" + name + ">", close = "</" + name + ">";
  const auto a = doc.find(open);
  if (a == std::string::npos) return "";
  const auto b = doc.find(close, a + open.size());
  if (b == std::string::npos) return "";
  return doc.substr(a + open.size(), std::min<std::size_t>(b - a - open.size(), 200));
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

long ms_until(Clock::time_point deadline) {
  return static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
}

}  // namespace

// What one answer said: status, the headers that are checked, and the body.
struct RangeFetcher::Answer {
  long status = 0;
  bool has_content_range = false;
  std::string content_range, etag, last_modified, content_encoding;
  std::vector<char> body;
  std::size_t asked = 0;            // bytes asked for: a longer body is refused as it arrives
  std::string refusal;              // start of a non-206 body (an S3 error document)
  bool refused_whole_file = false;  // a 200 to a range request: the transfer was cut short
  bool too_long = false;
  char curl_error[CURL_ERROR_SIZE] = {};  // libcurl's own words (CURLOPT_ERRORBUFFER)

  static size_t on_header(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Answer*>(user);
    const std::string_view line(data, size * n);
    if (line.starts_with("HTTP/")) {  // a new answer (after a redirect): start over
      a->has_content_range = false;
      a->content_range.clear();
      a->etag.clear();
      a->last_modified.clear();
      a->content_encoding.clear();
      a->body.clear();  // keeps its reserved room
      a->refusal.clear();
      const auto sp = line.find(' ');
      a->status = sp == std::string_view::npos ? 0 : std::strtol(line.data() + sp + 1, nullptr, 10);
      return size * n;
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return size * n;
    const std::string name = lower(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (name == "content-range") {
      a->has_content_range = true;
      a->content_range = value;
    }
    if (name == "etag") a->etag = value;
    if (name == "last-modified") a->last_modified = value;
    if (name == "content-encoding") a->content_encoding = value;
    return size * n;
  }

  static size_t on_body(char* data, size_t size, size_t n, void* user) {
    auto* a = static_cast<Answer*>(user);
    const std::size_t len = size * n;
    if (a->status == 200) {  // the server ignores Range: do not download the whole file
      a->refused_whole_file = true;
      return 0;
    }
    if (a->status != 206) {
      a->refusal.append(
          data, std::min(len, kErrorBodyBytes - std::min(kErrorBodyBytes, a->refusal.size())));
      return len;
    }
    if (a->body.size() + len > a->asked) {
      a->too_long = true;
      return 0;
    }
    a->body.insert(a->body.end(), data, data + len);
    return len;
  }
};

RangeFetcher::RangeFetcher(RemoteLocation where, RemoteOptions options)
    : where_(std::move(where)), opt_(std::move(options)), shown_(display_url(where_.name)) {
  curl_library();  // loaded now: a missing libcurl fails the open, not a later read
}

// What is wrong with answer `a` to the request for bytes [first, last], or "" when it is
// right. `fatal`: another try would get the same answer.
std::string RangeFetcher::judge(const Answer& a, int curl_code, std::uint64_t first,
                                std::uint64_t last, bool& fatal, Fault& fault) const {
  const auto code = static_cast<CURLcode>(curl_code);
  fatal = true;
  fault = Fault::kReadError;
  if (a.refused_whole_file) {
    return "the server ignores byte ranges (it answered a range request with the whole file); "
           "ggufs reads remote models by ranges only and does not download them whole";
  }
  if (a.too_long) return "the answer's body is longer than the range asked";
  switch (code) {
    case CURLE_OK:
      break;
    case CURLE_UNSUPPORTED_PROTOCOL:  // the last answer seen tells which
      return a.status >= 300 && a.status < 400
                 ? fmt::format("HTTP status {}: redirected to a scheme other than http or https",
                               a.status)
                 : "the answer is not HTTP";
    case CURLE_TOO_MANY_REDIRECTS:
      return "too many redirects (more than 5)";
    case CURLE_WEIRD_SERVER_REPLY:
      return "the answer is not HTTP";
    case CURLE_OPERATION_TIMEDOUT:
      fatal = false;
      return a.status ? fmt::format("HTTP status {}: no progress in time", a.status)
                      : "no answer in time";
    case CURLE_BAD_FUNCTION_ARGUMENT:  // a request libcurl will not make: its words say which
      return a.curl_error[0] ? fmt::format("{} ({})", curl_library().easy_strerror(code),
                                           printable(a.curl_error))
                             : curl_library().easy_strerror(code);
    default:
      fatal = !retryable(code);
      return curl_library().easy_strerror(code);
  }
  if (a.status == 429 || a.status >= 500) {
    fatal = false;
    return fmt::format("HTTP status {}", a.status);
  }
  if (a.status == 416) {
    fault = Fault::kTruncated;
    return "HTTP status 416 (range not satisfiable): the file is shorter than it was";
  }
  if (a.status != 206) {
    if (where_.s3) {
      const std::string s3_code = xml_element(a.refusal, "Code");
      const std::string message = xml_element(a.refusal, "Message");
      if (!s3_code.empty()) {
        return fmt::format("HTTP status {}: {}{}{}", a.status, printable(s3_code),
                           message.empty() ? "" : ": ", printable(message));
      }
    }
    return fmt::format("HTTP status {}", a.status);
  }
  if (!a.content_encoding.empty() && lower(a.content_encoding) != "identity") {
    return fmt::format("the answer is encoded (Content-Encoding '{}'): not the file's bytes",
                       printable(a.content_encoding));
  }
  if (!a.has_content_range) return "a 206 answer without Content-Range";
  const auto range = parse_content_range(a.content_range);
  if (!range) return fmt::format("unusable Content-Range '{}'", printable(a.content_range));
  const std::uint64_t total = adopted_ ? id_.size : range->total;
  if (adopted_) {
    std::string changed;
    if (range->total != id_.size) changed = fmt::format("size {} → {}", id_.size, range->total);
    if (a.etag != id_.etag) {
      changed = fmt::format("ETag '{}' → '{}'", printable(id_.etag), printable(a.etag));
    }
    if (a.last_modified != id_.last_modified) {
      changed = fmt::format("Last-Modified '{}' → '{}'", printable(id_.last_modified),
                            printable(a.last_modified));
    }
    if (!changed.empty()) {
      fault = Fault::kModified;
      return fmt::format("the file changed on the server ({}); its tensors are no longer served",
                         changed);
    }
  }
  const std::uint64_t want_last = std::min(last, total - 1);
  if (range->first != first || range->last != want_last) {
    return fmt::format("Content-Range '{}' does not answer the range asked (bytes {}-{}/{})",
                       printable(a.content_range), first, want_last, total);
  }
  if (a.body.size() != want_last - first + 1) {
    fatal = false;  // a connection cut short: worth another try
    return fmt::format("short answer: {} bytes of {}", a.body.size(), want_last - first + 1);
  }
  return "";
}

std::vector<char> RangeFetcher::fetch_first(std::uint64_t last, Clock::time_point deadline) {
  auto results = fetch({{0, last}}, deadline);
  if (!results[0].error.empty()) throw IoError(results[0].error, results[0].fault);
  return std::move(results[0].bytes);
}

std::vector<RangeResult> RangeFetcher::fetch(
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
    Clock::time_point deadline) {
  const CurlLibrary& curl = curl_library();
  Slist headers;
  const RemoteAuth& auth = where_.auth;
  if (!auth.aws_region.empty()) {
    // The body of a GET is empty: S3 takes this instead of its hash (SigV4, "UNSIGNED-PAYLOAD").
    headers.reset(curl.slist_append(headers.release(), "x-amz-content-sha256: UNSIGNED-PAYLOAD"));
    if (!auth.aws_session_token.empty()) {
      headers.reset(curl.slist_append(headers.release(),
                                      ("x-amz-security-token: " + auth.aws_session_token).c_str()));
    }
  }
  const std::string sigv4 = "aws:amz:" + auth.aws_region + ":s3";

  std::vector<RangeResult> out(ranges.size());
  std::vector<std::size_t> todo(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) todo[i] = i;
  std::uint32_t backoff = opt_.first_backoff_ms;
  for (std::uint32_t attempt = 1; !todo.empty(); ++attempt) {
    const long budget_ms = std::min<long>(ms_until(deadline), opt_.timeout_s * 1000L);
    std::vector<Answer> answers(todo.size());
    std::vector<Easy> handles;
    const Multi multi(curl.multi_init());
    for (std::size_t k = 0; k < todo.size(); ++k) {
      const auto [first, last] = ranges[todo[k]];
      Answer& a = answers[k];
      a.asked = static_cast<std::size_t>(last - first + 1);
      a.body.reserve(a.asked);  // no regrowth
      Easy h(curl.easy_init());
      if (!h || !multi) {
        out[todo[k]].error = fmt::format("{}: cannot start a transfer (libcurl)", shown_);
        continue;
      }
      CURL* e = h.get();
      curl.easy_setopt(e, CURLOPT_URL, where_.url.c_str());
      curl.easy_setopt(e, CURLOPT_RANGE, fmt::format("{}-{}", first, last).c_str());
      curl.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
      curl.easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
      curl.easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
      curl.easy_setopt(e, CURLOPT_MAXREDIRS, 5L);
      curl.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
      curl.easy_setopt(e, CURLOPT_TIMEOUT_MS, std::max(budget_ms, 1L));
      curl.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, std::clamp(budget_ms, 1L, 10000L));
      // A silent or drip-feeding server is a stall: cut it and try again.
      curl.easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(opt_.min_speed_bps));
      curl.easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 10L);
      curl.easy_setopt(e, CURLOPT_HEADERFUNCTION, Answer::on_header);
      curl.easy_setopt(e, CURLOPT_HEADERDATA, &a);
      curl.easy_setopt(e, CURLOPT_WRITEFUNCTION, Answer::on_body);
      curl.easy_setopt(e, CURLOPT_WRITEDATA, &a);
      curl.easy_setopt(e, CURLOPT_USERAGENT, "ggufs");
      if (!opt_.ca_file.empty()) curl.easy_setopt(e, CURLOPT_CAINFO, opt_.ca_file.c_str());
      if (headers) curl.easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
      if (!auth.bearer_token.empty()) {
        // libcurl's own bearer auth: never sent to another host or port after a redirect.
        curl.easy_setopt(e, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
        curl.easy_setopt(e, CURLOPT_XOAUTH2_BEARER, auth.bearer_token.c_str());
      }
      curl.easy_setopt(e, CURLOPT_ERRORBUFFER, a.curl_error);
      // An S3 key is a name, not a path: "a/../b" is its own object.
      if (where_.path_as_is) curl.easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
      if (!auth.aws_region.empty()) {
        curl.easy_setopt(e, CURLOPT_AWS_SIGV4, sigv4.c_str());
        curl.easy_setopt(e, CURLOPT_USERNAME, auth.aws_access_key_id.c_str());
        curl.easy_setopt(e, CURLOPT_PASSWORD, auth.aws_secret_access_key.c_str());
      }
      curl.multi_add_handle(multi.get(), e);
      handles.push_back(std::move(h));
    }
    int running = 0;
    do {
      curl.multi_perform(multi.get(), &running);
      if (running) curl.multi_poll(multi.get(), nullptr, 0, 200, nullptr);
    } while (running);
    std::vector<CURLcode> codes(handles.size(), CURLE_OK);
    while (CURLMsg* msg = curl.multi_info_read(multi.get(), &running)) {
      if (msg->msg != CURLMSG_DONE) continue;
      for (std::size_t k = 0; k < handles.size(); ++k) {
        if (handles[k].get() == msg->easy_handle) codes[k] = msg->data.result;
      }
    }
    std::vector<std::size_t> again;
    for (std::size_t k = 0; k < handles.size(); ++k) {
      curl.multi_remove_handle(multi.get(), handles[k].get());
      const auto [first, last] = ranges[todo[k]];
      bool fatal = false;
      Fault fault = Fault::kReadError;
      Answer& a = answers[k];
      const std::string why = judge(a, codes[k], first, last, fatal, fault);
      RangeResult& r = out[todo[k]];
      if (why.empty()) {
        fetched_ += a.body.size();
        if (!adopted_) {  // the first answer of all: fetch_first, one range, one thread
          id_.size = parse_content_range(a.content_range)->total;
          id_.etag = a.etag;
          id_.last_modified = a.last_modified;
          adopted_ = true;
        }
        r.bytes = std::move(a.body);
        r.error.clear();
        continue;
      }
      r.error = fmt::format("{}: bytes {}-{}: {}", shown_, first, last, why);
      r.fault = fault;
      const bool time_left = ms_until(deadline) > static_cast<long>(backoff);
      if (!fatal && attempt < opt_.max_tries && time_left) {
        again.push_back(todo[k]);
      } else if (!fatal) {
        r.error += time_left ? fmt::format(" (after {} tries)", attempt)
                             : fmt::format(" (no answer within the read's bound of {} s)",
                                           opt_.read_timeout_s);
      }
    }
    if (!again.empty()) {
      retried_ += again.size();
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff));
      backoff = std::min<std::uint32_t>(backoff * 2, 2000);
    }
    todo = std::move(again);
  }
  return out;
}

}  // namespace ggufs
