// Read requests above 1 MiB (-o max_read): with libfuse 3.17, which sizes its buffer and INIT's
// max_pages by max_write (lib/fuse_lowlevel.c, do_init), and a kernel whose
// fs.fuse.max_pages_limit (Linux 6.13) allows them, the kernel sends ggufs requests of up to
// max_read; the bytes stay the same.
//
// How a test knows the size of the requests: libfuse's debug log (ggufs -d) prints every reply
// with its size ("outsize: N", the 16-byte reply header included).
#define FUSE_USE_VERSION 314
#include <fmt/format.h>
#include <fuse3/fuse_lowlevel.h>  // FUSE_MAJOR_VERSION, FUSE_MINOR_VERSION: the libfuse of ggufs
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMaxPagesLimit = "/proc/sys/fs/fuse/max_pages_limit";

// Raises fs.fuse.max_pages_limit to `pages` for the life of the object, then puts the old value
// back (it only shapes FUSE connections made meanwhile).
class MaxPagesLimit {
 public:
  explicit MaxPagesLimit(unsigned pages) {
    std::ifstream(kMaxPagesLimit) >> old_;
    if (old_ < pages) set(pages);
  }
  ~MaxPagesLimit() {
    if (changed_) set(old_);
  }
  MaxPagesLimit(const MaxPagesLimit&) = delete;
  MaxPagesLimit& operator=(const MaxPagesLimit&) = delete;

 private:
  void set(unsigned pages) {
    std::ofstream(kMaxPagesLimit) << pages << "\n";
    changed_ = true;
  }
  unsigned old_ = 0;
  bool changed_ = false;
};

// The largest reply to a READ in libfuse's debug log `log` (bytes of data, header excluded), and
// how many READs there were. libfuse prints "unique: U, opcode: READ (15), ..." for a request
// and "   unique: U, success, outsize: N" for its reply.
struct Reads {
  std::size_t count = 0;
  std::size_t largest = 0;
};
Reads reads_in(const std::string& log) {
  const std::regex request(R"(unique: (\d+), opcode: READ \(15\))");
  const std::regex reply(R"(unique: (\d+), success, outsize: (\d+))");
  std::set<std::string> reads;
  Reads r;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, request)) {
      reads.insert(m[1]);
      ++r.count;
    } else if (std::regex_search(line, m, reply) && reads.contains(m[1])) {
      r.largest = std::max<std::size_t>(r.largest, std::stoull(m[2]) - 16);
    }
  }
  return r;
}

TEST(MountRequestSize, RequestsAboveOneMiBWhereLibfuseAndTheKernelAllow) {
  GGUFS_REQUIRE_FUSE();
  if (FUSE_MAJOR_VERSION * 100 + FUSE_MINOR_VERSION < 317) {
    GTEST_SKIP() << "libfuse " << FUSE_MAJOR_VERSION << "." << FUSE_MINOR_VERSION
                 << " keeps requests at 1 MiB (3.17 sizes its buffer by max_write)";
  }
  if (!fs::exists(kMaxPagesLimit)) {
    GTEST_SKIP() << "no " << kMaxPagesLimit << " (Linux 6.13): requests stay at 1 MiB";
  }
  if (::geteuid() != 0) GTEST_SKIP() << "raising fs.fuse.max_pages_limit needs root";
  const MaxPagesLimit limit(4096);  // 16 MiB

  // One F32 tensor of 40 MiB, bytes i * 2654435761 >> 24 (not a repeating page).
  TempDir dir;
  const fs::path model = dir.path() / "big.gguf";
  const std::uint64_t n = 10u << 20;
  std::vector<std::uint8_t> data(n * 4);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
  }
  GgufWriter w;
  w.add_string("general.architecture", "test");
  w.add_tensor("t.weight", GGML_TYPE_F32, {n}, data);
  w.write_file(model.string());
  const std::string expected = sha256_hex(data.data(), data.size());

  const fs::path mnt = dir.path() / "mnt";
  const fs::path log = dir.path() / "log";
  fs::create_directory(mnt);
  UnmountGuard guard{mnt};
  // -d: libfuse's debug log, in the foreground; the shell returns at once (no output of the
  // daemon may stay on run()'s pipe, which it reads to its end).
  ASSERT_EQ(run(fmt::format("{} -d -o max_read=16777216 {} {} >/dev/null 2>{} &", GGUFS_BINARY,
                            quote(model), quote(mnt), quote(log)))
                .exit_code,
            0);
  for (int i = 0; i < 500 && !is_mounted(mnt); ++i) ::usleep(10000);
  ASSERT_TRUE(is_mounted(mnt)) << read_text(log);
  for (int i = 0; i < 200 && !fs::exists(mnt / "raw"); ++i) ::usleep(10000);
  // In the foreground the daemon raises the read-ahead (to four requests, 64 MiB) just after the
  // mount answers; read before that, page-cache reads arrive as 128 KiB requests.
  std::string ra;
  for (int i = 0; i < 500 && (ra = read_ahead_kb(mnt)) != "65536"; ++i) ::usleep(10000);
  ASSERT_EQ(ra, "65536") << "the daemon did not raise the mount's read-ahead";

  // Stored bytes (raw/, and f32/ of an F32 tensor), and decoded ones behind a header (npy/).
  EXPECT_EQ(sha256_of(mnt / "raw" / "t.weight"), expected);
  EXPECT_EQ(sha256_of(mnt / "f32" / "t.weight"), expected);
  const std::vector<std::uint8_t> npy = read_file(mnt / "npy" / "t.weight.npy");
  ASSERT_GT(npy.size(), data.size());
  EXPECT_EQ(sha256_hex(npy.data() + npy.size() - data.size(), data.size()), expected);
  unmount_now(mnt);
  for (int i = 0; i < 500 && !pids_with(mnt.string()).empty(); ++i) ::usleep(10000);

  const Reads r = reads_in(read_text(log));
  ASSERT_GT(r.count, 0u) << "no READ in the debug log:\n" << read_text(log).substr(0, 4000);
  // 120 MiB read: with 1 MiB requests at least 120 READs, with 16 MiB ones far fewer.
  EXPECT_GT(r.largest, std::size_t{1} << 20) << r.count << " READs";
  EXPECT_LE(r.largest, std::size_t{16} << 20);
  EXPECT_LT(r.count, 60u);
}

// Requests of a whole 1 MiB (-o max_read=1048576, which libfuse 3.14 allows too) of stored
// bytes that start inside a page: splicing them needs 257 pipe slots, one more than a 1 MiB
// pipe has, so they must be copied, not spliced (where the pipe cannot grow: pipe-max-size is
// 1 MiB for a process without CAP_SYS_RESOURCE). Spliced, the read waited for ever.
TEST(MountRequestSize, WholeMiBRequestsAtOffsetsInsideAPageAreServed) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const fs::path model = dir.path() / "m.gguf";
  std::vector<std::uint8_t> data(24u << 20);
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 24);
  }
  GgufWriter w;
  w.add_string("general.architecture", "test");
  w.add_tensor("t.weight", GGML_TYPE_F32, {data.size() / 4}, data);
  w.write_file(model.string());
  const std::uint64_t data_offset = fs::file_size(model) - data.size();
  ASSERT_NE(data_offset % 4096, 0u) << "the test needs tensor data that starts inside a page";

  Mount m(model, "-o max_read=1048576");
  ASSERT_TRUE(m.mounted()) << m.output();
  // timeout: a read that hangs fails the test instead of stalling the suite.
  const RunResult r = run("timeout 60 sha256sum " + quote(m / "raw" / "t.weight"));
  ASSERT_EQ(r.exit_code, 0) << "the read did not complete within 60 s";
  EXPECT_EQ(r.output.substr(0, 64), sha256_hex(data.data(), data.size()));
}

TEST(MountRequestSize, MaxReadOutOfRangeIsAUsageError) {
  TempDir dir;
  const fs::path model = write_one_key_model(dir.path(), "test");
  for (const char* bad : {"4095", "67108865", "x"}) {
    const RunResult r = run(fmt::format("{} -o max_read={} {} {} 2>&1", GGUFS_BINARY, bad,
                                        quote(model), quote(dir.path() / "mnt")));
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_FALSE(is_mounted(dir.path() / "mnt"));
  }
}

}  // namespace
}  // namespace ggufs::test
