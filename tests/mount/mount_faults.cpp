// Faults under a real mount: the backing file modified in place, renamed over, or unreadable
// (it lives on another FUSE mount whose daemon is killed). Affected reads fail with EIO, the
// rest of the tree keeps working, the daemon stays up and logs one line per kind of fault.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

// Reads the whole file at `p`; returns 0 or the errno of the failing open/read.
int read_errno(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY);
  if (fd < 0) return errno;
  std::vector<char> buf(1 << 20);
  ssize_t r = 0;
  while ((r = ::read(fd, buf.data(), buf.size())) > 0) {
  }
  const int err = r < 0 ? errno : 0;
  ::close(fd);
  return err;
}

// A model with two F32 tensors of `n` elements each (values i and -i).
void write_model(const std::filesystem::path& path, std::size_t n) {
  GgufWriter g;
  g.add_string("general.architecture", "faults");
  std::vector<std::uint8_t> a(4 * n), b(4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = static_cast<float>(i), y = -x;
    std::memcpy(a.data() + 4 * i, &x, 4);
    std::memcpy(b.data() + 4 * i, &y, 4);
  }
  g.add_tensor("a", GGML_TYPE_F32, {n}, std::move(a));
  g.add_tensor("b", GGML_TYPE_F32, {n}, std::move(b));
  g.write_file(path.string());
}

// `ggufs -f FILE MOUNTPOINT` as a child with stderr going to a file, so a test can read what the
// daemon logs. The destructor unmounts (lazily if needed) and reaps it.
class ForegroundDaemon {
 public:
  ForegroundDaemon(const std::filesystem::path& file, const std::filesystem::path& mnt,
                   const std::filesystem::path& log)
      : mnt_(mnt) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) ::dup2(fd, 2);
      ::execl(GGUFS_BINARY, "ggufs", "-f", file.c_str(), mnt.c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 500 && !is_mounted(mnt_); ++i) ::usleep(10000);
  }
  ~ForegroundDaemon() {
    if (is_mounted(mnt_)) unmount_now(mnt_);
    if (pid_ > 0 && alive()) ::kill(pid_, SIGTERM);
    reap();
  }
  bool mounted() const { return is_mounted(mnt_); }
  // True while the daemon process runs.
  bool alive() {
    if (exited_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }
  void kill9() {
    ::kill(pid_, SIGKILL);
    reap();
  }

 private:
  void reap() {
    if (exited_ || pid_ <= 0) return;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exited_ = true;
  }
  std::filesystem::path mnt_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

// Lines of `log` that contain `what`.
int count_lines(const std::filesystem::path& log, const std::string& what) {
  std::ifstream in(log);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(what) != std::string::npos;
  return n;
}

class MountFaults : public ::testing::Test {
 protected:
  void SetUp() override {
    GGUFS_REQUIRE_FUSE();
    file_ = dir_.path() / "m.gguf";
    log_ = dir_.path() / "daemon.log";
    mnt_ = dir_.path() / "mnt";
    std::filesystem::create_directory(mnt_);
    write_model(file_, 1 << 16);
  }

  TempDir dir_;
  std::filesystem::path file_, log_, mnt_;
};

TEST_F(MountFaults, ModifiedInPlaceFailsEveryTensorReadAndLogsOnce) {
  ForegroundDaemon d(file_, mnt_, log_);
  ASSERT_TRUE(d.mounted());
  {
    // Same size, other bytes (and a new modification time): nothing of it can be trusted.
    std::fstream f(file_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-16, std::ios::end);
    f.write("0123456789abcdef", 16);
  }
  for (const char* p : {"raw/a", "f32/a", "npy/b.npy", "raw/b"}) {
    EXPECT_EQ(read_errno(mnt_ / p), EIO) << p;
  }
  EXPECT_EQ(read_text(mnt_ / "metadata/general.architecture"), "faults\n");
  EXPECT_EQ(read_errno(mnt_ / "gguf.json"), 0);
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(count_lines(log_, "modified while mounted"), 1) << read_text(log_);
}

TEST_F(MountFaults, RenamedOverFailsTensorReads) {
  ForegroundDaemon d(file_, mnt_, log_);
  ASSERT_TRUE(d.mounted());
  const auto other = dir_.path() / "other.gguf";
  write_model(other, 1 << 16);  // same layout and size, a different file
  std::filesystem::rename(other, file_);
  EXPECT_EQ(read_errno(mnt_ / "f32/a"), EIO);
  EXPECT_EQ(read_errno(mnt_ / "raw/b"), EIO);
  EXPECT_EQ(read_text(mnt_ / "metadata/general.architecture"), "faults\n");
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(count_lines(log_, "replaced by another file"), 1) << read_text(log_);
}

TEST_F(MountFaults, DeletedPathKeepsServingTheSameBytes) {
  Mount m(file_);
  ASSERT_TRUE(m.mounted()) << m.output();
  std::filesystem::remove(file_);  // our descriptor keeps the inode and its bytes
  const auto a = read_file(m / "f32/a");
  ASSERT_EQ(a.size(), 4u << 16);
  float last;
  std::memcpy(&last, a.data() + a.size() - 4, 4);
  EXPECT_EQ(last, 65535.0f);
}

TEST_F(MountFaults, TruncationIsLoggedOnceAndOnlyTheTailFails) {
  ForegroundDaemon d(file_, mnt_, log_);
  ASSERT_TRUE(d.mounted());
  std::filesystem::resize_file(file_, std::filesystem::file_size(file_) - 4096);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(read_errno(mnt_ / "f32/b"), EIO);
  EXPECT_EQ(read_errno(mnt_ / "raw/b"), EIO);
  EXPECT_EQ(read_errno(mnt_ / "npy/b.npy"), EIO);
  EXPECT_EQ(read_errno(mnt_ / "f32/a"), 0);  // "a" lies before the new end
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(count_lines(log_, "truncated while mounted"), 1) << read_text(log_);
}

// Log lines quote tensor names from the file: a crafted name must not reach the terminal raw.
TEST_F(MountFaults, LoggedNamesHaveControlBytesEscaped) {
  GgufWriter g;
  g.add_string("general.architecture", "faults");
  g.add_tensor("evil\x1b[2J", GGML_TYPE_F32, {1024}, std::vector<std::uint8_t>(4096, 0));
  g.write_file(file_.string());
  ForegroundDaemon d(file_, mnt_, log_);
  ASSERT_TRUE(d.mounted());
  std::filesystem::resize_file(file_, std::filesystem::file_size(file_) - 8);
  EXPECT_EQ(read_errno(mnt_ / "f32/evil%1B[2J"), EIO);
  const std::string log = read_text(log_);
  EXPECT_NE(log.find("evil%1B[2J"), std::string::npos) << log;
  EXPECT_EQ(log.find('\x1b'), std::string::npos) << log;
}

// The backing file is itself a file of another ggufs mount (the raw/ file of a tensor that holds
// a whole GGUF file); killing that daemon makes every read of the backing file fail (ENOTCONN),
// as a dead disk or network mount would.
TEST_F(MountFaults, UnreadableBackingFileFailsReadsAndTheDaemonStaysUp) {
  const auto outer_bytes = read_file(file_);
  GgufWriter inner;
  inner.add_tensor("payload", GGML_TYPE_I8, {outer_bytes.size()}, outer_bytes);
  const auto inner_file = dir_.path() / "inner.gguf";
  inner.write_file(inner_file.string());
  const auto inner_mnt = dir_.path() / "inner-mnt";
  std::filesystem::create_directory(inner_mnt);
  ForegroundDaemon inner_daemon(inner_file, inner_mnt, dir_.path() / "inner.log");
  ASSERT_TRUE(inner_daemon.mounted());

  ForegroundDaemon d(inner_mnt / "raw/payload", mnt_, log_);
  ASSERT_TRUE(d.mounted());
  inner_daemon.kill9();
  // Tensor "b" lies past what parsing read (and the inner mount's read-ahead), so its bytes must
  // come from the dead daemon.
  EXPECT_EQ(read_errno(mnt_ / "f32/b"), EIO);
  EXPECT_EQ(read_errno(mnt_ / "f32/b"), EIO);
  // raw/ (spliced from the backing file): EIO too, not the read's own ENOTCONN.
  EXPECT_EQ(read_errno(mnt_ / "raw/b"), EIO);
  EXPECT_EQ(read_text(mnt_ / "metadata/general.architecture"), "faults\n");
  EXPECT_TRUE(d.alive());
  EXPECT_EQ(count_lines(log_, "failed"), 1) << read_text(log_);
  // The outer mount unmounts cleanly; the inner one is stale and is cleared lazily.
  EXPECT_EQ(run("fusermount3 -u " + quote(mnt_) + " 2>&1").exit_code, 0);
  run("fusermount3 -uz " + quote(inner_mnt) + " 2>&1");
  EXPECT_FALSE(is_mounted(inner_mnt));
}

}  // namespace
}  // namespace ggufs::test
