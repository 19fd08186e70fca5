// Remote models from a server that lies: tests/support/lying_server.py serves a model honestly
// except for one lie at a time (a shifted or wrong Content-Range, a short or long body, gzip,
// redirects to ftp or to itself, a changed ETag, silence, a drip, 416, garbage), told to the chunks
// from 7 MiB on, or from byte 0 to fail the mount. Through a real mount (ggufs -f, its log
// captured): a read that needs a lying chunk fails with EIO within the read timeout; no byte that
// differs from the local file is ever returned, nor cached (the same URL, honest again, reads
// right); the daemon logs a line naming the URL and the reason, never the URL's query string; the
// rest of the tree keeps answering and the mount unmounts cleanly. Expected bytes come from the
// local file only.
//
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "http_server.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

constexpr int kTensors = 8;
constexpr std::size_t kTensorBytes = 1 << 20;  // t0..t7, 1 MiB each, just after a small header
// Lies are told from chunk 7 (ggufs fetches 1 MiB chunks): t7 lies whole, t6 from its second
// chunk on; t0..t5 and the read-ahead (4 chunks) after t0 and t1 stay honest.
constexpr std::uint64_t kLieFrom = std::uint64_t{7} << 20;
constexpr const char* kSecret = "secret123";

#define GGUFS_REQUIRE_PYTHON()                    \
  if (::access("/usr/bin/python3", X_OK) != 0)    \
  GTEST_SKIP() << "/usr/bin/python3 is missing: " \
                  "the lying server (tests/support/lying_server.py) needs it"

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The model: F32 tensors t0..t7 whose element j of ti is i * 2^20 + j (exact in F32, so every
// 4 bytes of tensor data differ from all others: a shifted range never reads as right).
struct Model {
  fs::path file;
  std::string bytes;                  // the local file
  std::vector<std::uint64_t> offset;  // where ti's data is in it

  // ti's bytes, from the local file.
  std::string expected(int i) const {
    return bytes.substr(offset[static_cast<std::size_t>(i)], kTensorBytes);
  }
};

Model write_model(const fs::path& dir) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  std::vector<std::string> data;
  for (int i = 0; i < kTensors; ++i) {
    std::vector<std::uint8_t> b(kTensorBytes);
    for (std::size_t j = 0; j < kTensorBytes / 4; ++j) {
      const float v = static_cast<float>((static_cast<std::size_t>(i) << 20) + j);
      std::memcpy(b.data() + 4 * j, &v, 4);
    }
    data.emplace_back(b.begin(), b.end());
    g.add_tensor("t" + std::to_string(i), GGML_TYPE_F32, {kTensorBytes / 4}, std::move(b));
  }
  Model m;
  m.file = dir / "model.gguf";
  g.write_file(m.file.string());
  m.bytes = read_text(m.file);
  // Where each tensor's bytes are in the file, found by looking (not by parsing it).
  for (const std::string& d : data) {
    const auto at = m.bytes.find(d);
    if (at == std::string::npos) throw std::runtime_error("tensor bytes not found in the file");
    m.offset.push_back(at);
  }
  return m;
}

// Whether every byte of `got` equals `want` at the same offset (`got` is what a read returned,
// maybe before it failed).
::testing::AssertionResult no_wrong_byte(const std::string& got, const std::string& want) {
  if (got.size() > want.size()) {
    return ::testing::AssertionFailure()
           << "returned " << got.size() << " bytes of a file of " << want.size();
  }
  const auto diff = std::mismatch(got.begin(), got.end(), want.begin());
  if (diff.first != got.end()) {
    return ::testing::AssertionFailure() << "byte " << (diff.first - got.begin()) << " of "
                                         << got.size() << " returned differs from the local file";
  }
  return ::testing::AssertionSuccess() << got.size() << " bytes, all right";
}

// tests/support/lying_server.py serving `file` with `options` (see the script); its stderr (a line
// per request and the lie told) goes to `log`.
class LyingServer : public PythonServer {
 public:
  LyingServer(const fs::path& file, const std::string& options, const fs::path& log)
      : PythonServer("lying_server.py", quote(file) + " " + options, log), log_(log) {}
  /// Honest from now on (SIGUSR1): same file, same ETag and Last-Modified, same URL.
  void become_honest() const {
    signal(SIGUSR1);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::string log() const { return fs::exists(log_) ? read_text(log_) : ""; }

 private:
  fs::path log_;
};

// Whether `server` told the lie `name` at least once (so that a test passes for the right
// reason, not because nothing asked for the lying range).
::testing::AssertionResult lied(const LyingServer& server, const std::string& name) {
  if (server.log().find("-> " + name + "\n") != std::string::npos) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "the server never lied (" << name << "):\n"
                                       << server.log();
}

// The ggufs options of every mount here.
// -v: the daemon's every log line (the mount's, each file opened) is checked for the secret too.
std::vector<std::string> mount_options(const fs::path& cache) {
  return {"-v", "-o", "cache_dir=" + cache.string(), "-o", "read_timeout=5"};
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

// `ggufs -f OPTIONS URL MOUNTPOINT` as a child whose stderr (the daemon's log) goes to a file.
// The destructor unmounts (lazily if need be), then ends and reaps the daemon.
class Daemon {
 public:
  Daemon(const std::string& url, const fs::path& mnt, const fs::path& log,
         const std::vector<std::string>& options)
      : mnt_(mnt), log_(log) {
    fs::create_directories(mnt);
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) ::dup2(fd, STDERR_FILENO);
      std::vector<const char*> argv = {"ggufs", "-f"};
      for (const auto& o : options) argv.push_back(o.c_str());
      argv.push_back(url.c_str());
      argv.push_back(mnt.c_str());
      argv.push_back(nullptr);
      ::execv(GGUFS_BINARY, const_cast<char* const*>(argv.data()));
      ::_exit(127);
    }
    for (int i = 0; i < 3000 && !is_mounted(mnt_) && alive(); ++i) ::usleep(10000);
  }
  ~Daemon() {
    if (is_mounted(mnt_)) unmount_now(mnt_);
    if (wait_exit(5)) return;
    ::kill(pid_, SIGTERM);
    if (wait_exit(5)) return;
    ::kill(pid_, SIGKILL);
    wait_exit(30);
    if (is_mounted(mnt_)) run("fusermount3 -uz " + quote(mnt_) + " 2>&1");
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  bool mounted() const { return is_mounted(mnt_); }
  std::string log() const { return fs::exists(log_) ? read_text(log_) : ""; }

  /// fusermount3 -u succeeds and the daemon then exits with status 0 within 10 s.
  ::testing::AssertionResult unmount_cleanly() {
    const RunResult r = run("timeout -s KILL 20 fusermount3 -u " + quote(mnt_) + " 2>&1");
    if (r.exit_code != 0) {
      return ::testing::AssertionFailure() << "fusermount3 -u failed: " << r.output;
    }
    if (!wait_exit(10)) return ::testing::AssertionFailure() << "the daemon did not exit";
    if (!WIFEXITED(status_) || WEXITSTATUS(status_) != 0) {
      return ::testing::AssertionFailure() << "the daemon ended with status " << status_;
    }
    return ::testing::AssertionSuccess();
  }

 private:
  bool alive() { return !wait_exit(0); }
  // Whether the daemon has exited (waiting up to `seconds` for it).
  bool wait_exit(int seconds) {
    if (exited_ || pid_ <= 0) return true;
    for (int i = 0; i <= seconds * 100; ++i) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) return exited_ = true;
      if (seconds > 0) ::usleep(10000);
    }
    return false;
  }

  fs::path mnt_, log_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
};

// A read with -o read_timeout=5 that has not ended after this many seconds is hung: it is
// killed (timeout -s KILL) and the test fails. A hang guard, not a measure of speed: nothing in
// these tests asserts how long anything took.
constexpr int kReadBoundS = 20;

// The exit status of `timeout -s KILL` when it killed the command: 128 + SIGKILL.
constexpr int kKilled = 137;

// What one read of a whole file returned: exit status, the bytes, the tool's stderr and time.
struct Got {
  int status = -1;
  std::string bytes, err;
};

// Reads `p` whole with `tool` ("dd" or "cat"), killed after `limit_s` seconds (a hung read must
// not hang the test; status kKilled then). `scratch` is a file name prefix of this read's own.
Got read_with(const std::string& tool, const fs::path& p, const fs::path& scratch,
              int limit_s = kReadBoundS) {
  const fs::path out = scratch.string() + ".out", err = scratch.string() + ".err";
  const std::string limit = "timeout -s KILL " + std::to_string(limit_s) + " ";
  const std::string cmd =
      tool == "dd" ? limit + "dd if=" + quote(p) + " of=" + quote(out) + " bs=65536 status=none"
                   : limit + "cat " + quote(p) + " >" + quote(out);
  Got g;
  g.status = run(cmd + " 2>" + quote(err)).exit_code;
  g.bytes = fs::exists(out) ? read_text(out) : "";
  g.err = fs::exists(err) ? read_text(err) : "";
  return g;
}

// `got` failed with EIO, and returned no byte that differs from `want`.
void expect_eio(const Got& got, const std::string& want, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_NE(got.status, 0) << "the read succeeded";
  EXPECT_NE(got.err.find("Input/output error"), std::string::npos)
      << "status " << got.status << ", stderr: " << got.err;
  EXPECT_TRUE(no_wrong_byte(got.bytes, want));
  EXPECT_NE(got.status, kKilled) << "the read hung: killed after " << kReadBoundS << " s";
}

// `got` returned exactly `want`.
void expect_right(const Got& got, const std::string& want, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_TRUE(no_wrong_byte(got.bytes, want));
  EXPECT_EQ(got.bytes.size(), want.size());
  EXPECT_NE(got.status, kKilled) << "the read hung: killed after " << kReadBoundS << " s";
}

// `got` returned exactly `want`, or failed with EIO having returned no wrong byte.
void expect_right_or_eio(const Got& got, const std::string& want, const std::string& what) {
  if (got.status == 0) {
    expect_right(got, want, what);
  } else {
    expect_eio(got, want, what);
  }
}

// A line of `log` that names `shown` (the URL without its query) and one of `reasons` (any
// case).
::testing::AssertionResult logged(const std::string& log, const std::string& shown,
                                  const std::vector<std::string>& reasons) {
  std::size_t from = 0;
  while (from < log.size()) {
    auto end = log.find('\n', from);
    if (end == std::string::npos) end = log.size();
    const std::string line = lower(log.substr(from, end - from));
    from = end + 1;
    if (line.find(lower(shown)) == std::string::npos) continue;
    for (const auto& r : reasons) {
      if (line.find(r) != std::string::npos) return ::testing::AssertionSuccess();
    }
  }
  std::string want;
  for (const auto& r : reasons) want += " '" + r + "'";
  return ::testing::AssertionFailure()
         << "no line of the daemon's log names " << shown << " and one of" << want << ":\n"
         << log;
}

::testing::AssertionResult no_secret(const std::string& text, const std::string& what) {
  if (text.find(kSecret) == std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " holds the URL's query string:\n" << text;
}

// The lies told after the mount, and words of which the daemon's log line must hold one.
struct Lie {
  std::string name;
  std::vector<std::string> reasons;
  // The lie shows another file than the one mounted (size or identity): every later tensor
  // read may fail, never with a wrong byte.
  bool file_changed = false;
};

void PrintTo(const Lie& lie, std::ostream* os) { *os << lie.name; }

std::string lie_test_name(const ::testing::TestParamInfo<Lie>& info) {
  std::string n = info.param.name;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

// Words that name the reasons precisely ("bytes", "range" or "time" alone would match any
// line: every line names the byte range asked).
const std::vector<Lie> kReadLies = {
    {"shifted-range", {"content-range"}},
    {"wrong-end", {"content-range", "longer", "shorter"}},
    {"wrong-total", {"size", "changed"}, true},
    {"no-content-range", {"content-range"}},
    {"short-close", {"partial", "short", "closed", "remaining"}},
    {"short-length", {"content-range", "content-length", "short"}},
    {"long-body", {"longer", "content-length", "too long"}},
    {"gzip", {"encoding", "gzip"}},
    {"redirect-ftp", {"redirect", "ftp", "scheme"}},
    {"redirect-loop", {"redirect"}},
    {"etag-change", {"changed", "etag"}, true},
    {"silent", {"timeout", "timed out", "in time", "no answer"}},
    {"drip", {"timeout", "timed out", "in time", "progress", "slow", "stall"}},
    {"status-416", {"416"}},
    {"not-http", {"not http", "http/0.9", "weird server reply", "unsupported protocol"}},
};

class MountLiesRead : public ::testing::TestWithParam<Lie> {};

TEST_P(MountLiesRead, EioNoWrongByteLoggedRestAnswersAndNothingCached) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON();
  const Lie& lie = GetParam();
  TempDir dir;
  const Model model = write_model(dir.path());
  const fs::path cache = dir.path() / "cache", mnt = dir.path() / "mnt", ftp = dir.path() / "ftp";
  LyingServer server(
      model.file,
      "--lie " + lie.name + " --after " + std::to_string(kLieFrom) + " --log " + quote(ftp),
      dir.path() / "server.log");
  ASSERT_NE(server.port(), 0);
  const std::string url = server.url(std::string("model.gguf?X-Amz-Signature=") + kSecret);
  const std::string shown = "127.0.0.1:" + std::to_string(server.port()) + "/model.gguf";
  Mount local(model.file);
  ASSERT_TRUE(local.mounted()) << local.output();
  const std::string tsv = read_text(local / "tensors.tsv");
  const auto scratch = [&](const std::string& name) { return dir.path() / name; };
  {
    Daemon d(url, mnt, dir.path() / "daemon.log", mount_options(cache));
    ASSERT_TRUE(d.mounted()) << d.log() << server.log();
    // Honest chunks, the read-ahead too.
    expect_right(read_with("cat", mnt / "raw/t0", scratch("t0")), model.expected(0), "raw/t0");
    // t5's chunks are honest, the read-ahead after them is not: t5 reads right (a lie in the
    // read-ahead must not fail the read that needs only honest chunks).
    const Got t5 = read_with("cat", mnt / "raw/t5", scratch("t5"));
    if (lie.file_changed) {
      expect_right_or_eio(t5, model.expected(5), "raw/t5, read-ahead into the lie");
    } else {
      expect_right(t5, model.expected(5), "raw/t5, read-ahead into the lie");
    }
    // The lying chunks: EIO, and nothing wrong returned before it.
    for (const char* tool : {"dd", "cat"}) {
      for (const char* kind : {"raw", "f32"}) {
        const std::string what = std::string(tool) + " " + kind + "/t7";
        expect_eio(read_with(tool, mnt / kind / "t7", scratch(std::string(tool) + kind)),
                   model.expected(7), what);
      }
    }
    expect_eio(read_with("dd", mnt / "raw/t6", scratch("t6")), model.expected(6),
               "dd raw/t6 (its second chunk lies)");
    EXPECT_TRUE(logged(d.log(), shown, lie.reasons));
    EXPECT_TRUE(lied(server, lie.name));
    // The rest of the tree still answers.
    EXPECT_EQ(read_text(mnt / "metadata/general.architecture"), "llama\n");
    EXPECT_EQ(read_text(mnt / "tensors.tsv"), tsv);
    const Got t1 = read_with("dd", mnt / "f32/t1", scratch("t1"));
    if (lie.file_changed) {
      expect_right_or_eio(t1, model.expected(1), "f32/t1 after the lie");
    } else {
      expect_right(t1, model.expected(1), "f32/t1 after the lie");
    }
    EXPECT_TRUE(d.unmount_cleanly()) << d.log();
    EXPECT_TRUE(no_secret(d.log(), "the daemon's log"));
  }
  // Nothing the lie brought was cached: the same URL, honest again, reads right everywhere.
  server.become_honest();
  {
    Daemon d(url, mnt, dir.path() / "daemon2.log", mount_options(cache));
    ASSERT_TRUE(d.mounted()) << d.log() << server.log();
    for (int i = kTensors - 1; i >= 0; --i) {
      const std::string t = "t" + std::to_string(i);
      expect_right(read_with("cat", mnt / "raw" / t, scratch("again" + t)), model.expected(i),
                   "honest again: raw/" + t);
    }
    expect_right(read_with("dd", mnt / "f32/t7", scratch("againf32")), model.expected(7),
                 "honest again: f32/t7");
    EXPECT_TRUE(d.unmount_cleanly()) << d.log();
    EXPECT_TRUE(no_secret(d.log(), "the daemon's log"));
  }
  EXPECT_FALSE(fs::exists(ftp)) << "something connected to the ftp listener:\n" << read_text(ftp);
}

INSTANTIATE_TEST_SUITE_P(MountLies, MountLiesRead, ::testing::ValuesIn(kReadLies), lie_test_name);

// Lies from byte 0 on, which ggufs cannot mount through: exit code 2, one line naming the URL
// (not its query), within the time bounds; the header chunk it refused is not cached.
const std::vector<Lie> kMountLies = {
    {"shifted-range", {}}, {"wrong-end", {}},    {"no-content-range", {}},
    {"short-close", {}},   {"short-length", {}}, {"long-body", {}},
    {"gzip", {}},          {"redirect-ftp", {}}, {"redirect-loop", {}},
    {"status-416", {}},    {"not-http", {}},     {"silent", {}},
    {"drip", {}},
};

class MountLiesAtMount : public ::testing::TestWithParam<Lie> {};

TEST_P(MountLiesAtMount, ExitsTwoWithOneLineNamingTheUrl) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON();
  const Lie& lie = GetParam();
  TempDir dir;
  const Model model = write_model(dir.path());
  const fs::path cache = dir.path() / "cache", ftp = dir.path() / "ftp";
  LyingServer server(model.file, "--lie " + lie.name + " --log " + quote(ftp),
                     dir.path() / "server.log");
  ASSERT_NE(server.port(), 0);
  const std::string url = server.url(std::string("model.gguf?X-Amz-Signature=") + kSecret);
  const std::string shown = "127.0.0.1:" + std::to_string(server.port()) + "/model.gguf";
  const std::string options = joined(mount_options(cache));
  {
    // Killed (exit status kKilled, not 2) if it has not given up after 30 s.
    Mount m(url, options, "timeout -s KILL 30");
    EXPECT_FALSE(m.mounted()) << "mounted through the lie";
    EXPECT_EQ(m.exit_code(), 2) << m.output();
    EXPECT_EQ(std::count(m.output().begin(), m.output().end(), '\n'), 1) << m.output();
    EXPECT_NE(m.output().find(shown), std::string::npos) << m.output();
    EXPECT_TRUE(no_secret(m.output(), "the message"));
    EXPECT_TRUE(lied(server, lie.name));
  }
  EXPECT_FALSE(fs::exists(ftp)) << "something connected to the ftp listener:\n" << read_text(ftp);
  // Honest again: the same URL mounts and reads right (no lying header chunk was cached).
  server.become_honest();
  Mount m(url, options);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
  for (int i = 0; i < kTensors; i += 3) {
    const std::string t = "t" + std::to_string(i);
    expect_right(read_with("cat", m / "raw" / t, dir.path() / t), model.expected(i), "raw/" + t);
  }
}

INSTANTIATE_TEST_SUITE_P(MountLies, MountLiesAtMount, ::testing::ValuesIn(kMountLies),
                         lie_test_name);

// A lie told twice, of a kind worth another try (the connection closes mid-body): the retries
// get the right bytes, and a read never shows the cut answer.
TEST(MountLiesTransient, ACutAnswerIsRetriedAndReadsRight) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON();
  TempDir dir;
  const Model model = write_model(dir.path());
  const fs::path mnt = dir.path() / "mnt";
  LyingServer server(model.file, "--lie short-close --count 2 --after " + std::to_string(kLieFrom),
                     dir.path() / "server.log");
  ASSERT_NE(server.port(), 0);
  Daemon d(server.url("model.gguf"), mnt, dir.path() / "daemon.log",
           mount_options(dir.path() / "cache"));
  ASSERT_TRUE(d.mounted()) << d.log() << server.log();
  expect_right(read_with("dd", mnt / "raw/t7", dir.path() / "t7"), model.expected(7), "raw/t7");
  EXPECT_TRUE(lied(server, "short-close"));
  expect_right(read_with("cat", mnt / "f32/t6", dir.path() / "t6"), model.expected(6), "f32/t6");
  EXPECT_TRUE(d.unmount_cleanly()) << d.log();
}

// A server that accepts and never answers: reads fail with EIO (the read timeout, 5 s, ends
// them; none hangs), the tree answers while 16 readers still wait on the silence, and a read
// of the same range right after fails without asking the server again (the failed fetch is
// remembered).
TEST(MountLiesTiming, SilentServerFailsReadsInTimeAndTheTreeStillAnswers) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_PYTHON();
  TempDir dir;
  const Model model = write_model(dir.path());
  const fs::path cache = dir.path() / "cache", mnt = dir.path() / "mnt";
  LyingServer server(model.file, "--lie silent --after " + std::to_string(kLieFrom),
                     dir.path() / "server.log");
  ASSERT_NE(server.port(), 0);
  const std::string url = server.url(std::string("model.gguf?X-Amz-Signature=") + kSecret);
  const std::string shown = "127.0.0.1:" + std::to_string(server.port()) + "/model.gguf";
  Mount local(model.file);
  ASSERT_TRUE(local.mounted()) << local.output();
  const std::string tsv = read_text(local / "tensors.tsv");
  Daemon d(url, mnt, dir.path() / "daemon.log", mount_options(cache));
  ASSERT_TRUE(d.mounted()) << d.log() << server.log();

  // 16 readers of 4 KiB blocks of t7 (raw/ and f32/), all at once: all wait on the silence.
  constexpr int kReaders = 16;
  std::array<Got, kReaders> got;
  std::atomic<int> ended{0};
  std::vector<std::thread> readers;
  for (int k = 0; k < kReaders; ++k) {
    readers.emplace_back([&, k] {
      const fs::path p = mnt / (k % 2 ? "raw/t7" : "f32/t7");
      const fs::path err = dir.path() / ("reader" + std::to_string(k) + ".err");
      got[static_cast<std::size_t>(k)].status =
          run("timeout -s KILL " + std::to_string(kReadBoundS) + " dd if=" + quote(p) +
              " of=/dev/null bs=4096 count=1 skip=" + std::to_string(k * 13) + " status=none 2>" +
              quote(err))
              .exit_code;
      got[static_cast<std::size_t>(k)].err = read_text(err);
      ++ended;
    });
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  // Meanwhile the tree answers (none of it was read before: no page cache helps), each answer
  // given while every reader still waits: a tree queued behind the silent fetches would answer
  // only once the read timeout had ended them.
  const auto answered = [&](const std::string& what) {
    EXPECT_EQ(ended.load(), 0) << what << " answered only after a reader waiting on the silent "
                               << "server had ended";
  };
  const auto guarded = [](const std::string& cmd) {
    return run("timeout -s KILL " + std::to_string(kReadBoundS) + " " + cmd + " 2>&1");
  };
  const RunResult ls = guarded("ls -l " + quote(mnt) + " " + quote(mnt / "raw") + " " +
                               quote(mnt / "f32") + " " + quote(mnt / "metadata"));
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  answered("ls");
  const RunResult arch = guarded("cat " + quote(mnt / "metadata/general.architecture"));
  EXPECT_EQ(arch.output, "llama\n");
  answered("cat metadata/general.architecture");
  const RunResult listing = guarded("cat " + quote(mnt / "tensors.tsv"));
  EXPECT_EQ(listing.output, tsv);
  answered("cat tensors.tsv");

  for (auto& t : readers) t.join();
  for (int k = 0; k < kReaders; ++k) {
    SCOPED_TRACE("reader " + std::to_string(k));
    const Got& g = got[static_cast<std::size_t>(k)];
    EXPECT_NE(g.status, 0);
    EXPECT_NE(g.status, kKilled) << "the read hung: killed after " << kReadBoundS
                                 << " s with read_timeout=5";
    EXPECT_NE(g.err.find("Input/output error"), std::string::npos)
        << "status " << g.status << ": " << g.err;
  }
  // Right after: the same range fails without a new request (the server logs each one).
  const auto requests = [&] {
    const std::string log = server.log();
    std::size_t n = 0;
    for (std::size_t at = log.find(" Range: "); at != std::string::npos;
         at = log.find(" Range: ", at + 1)) {
      ++n;
    }
    return n;
  };
  const std::size_t before = requests();
  EXPECT_GT(before, 0u) << "no request in the server's log:\n" << server.log();
  const Got again = read_with("dd", mnt / "raw/t7", dir.path() / "again");
  expect_eio(again, model.expected(7), "raw/t7 right after");
  EXPECT_EQ(requests(), before) << "the read right after asked the server again:\n" << server.log();
  EXPECT_TRUE(logged(d.log(), shown, {"timeout", "timed out", "in time", "no answer"}));
  EXPECT_TRUE(lied(server, "silent"));
  EXPECT_TRUE(d.unmount_cleanly()) << d.log();
  EXPECT_TRUE(no_secret(d.log(), "the daemon's log"));
}

}  // namespace
}  // namespace ggufs::test
