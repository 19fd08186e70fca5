// The ggufs command on hostile files (refused with exit code 3 and the offset, or mounted and
// served safely) and on a stale mount point left by a daemon killed with SIGKILL.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "corpus.h"
#include "ggufs/gguf_writer.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

// `name` is not a const std::string&: a temporary string bound to it would make GCC 14's
// -Wdangling-reference take the returned reference for one into it.
const corpus::Hostile& hostile(const std::vector<corpus::Hostile>& all, const char* name) {
  for (const auto& h : all) {
    if (h.name == name) return h;
  }
  throw std::runtime_error(std::string("no hostile file ") + name);
}

TEST(MountHostile, RefusedWithExitCode3AndTheOffset) {
  GGUFS_REQUIRE_FUSE();
  const auto all = corpus::hostile_files();
  TempDir dir;
  for (const char* name :
       {"header.magic_ggml", "header.kv_count_2^64-1", "kv.array_length_2^61",
        "kv.key_duplicate_escape_sequence", "tensor.elements_wrap_to_0",
        "tensor.name_duplicate_escape_sequence", "data.overlap", "data.offset_wraps"}) {
    SCOPED_TRACE(name);
    const corpus::Hostile& h = hostile(all, name);
    ASSERT_FALSE(h.accepted);
    const auto file = dir.path() / (std::string(name) + ".gguf");
    write_file(file, h.bytes);
    Mount m(file);  // unmounts should the command wrongly mount
    EXPECT_FALSE(m.mounted());
    EXPECT_EQ(m.exit_code(), 3);
    const std::string want =
        "ggufs: " + file.string() + ": at byte " + std::to_string(h.offset) + ": ";
    EXPECT_EQ(m.output().rfind(want, 0), 0u) << m.output();
    EXPECT_NE(m.output().find(h.problem), std::string::npos) << m.output();
    // One line, and no byte from the file reaches the terminal unescaped.
    EXPECT_EQ(m.output().find('\n'), m.output().size() - 1) << m.output();
    EXPECT_EQ(m.output().find('\x1b'), std::string::npos) << m.output();
  }
}

TEST(MountHostile, HarmlessOnesAreMountedAndEveryFileReads) {
  GGUFS_REQUIRE_FUSE();
  const auto all = corpus::hostile_files();
  TempDir dir;
  int mounted = 0;
  for (const auto& h : all) {
    if (!h.accepted) continue;
    SCOPED_TRACE(h.name);
    const auto file = dir.path() / (h.name + ".gguf");
    write_file(file, h.bytes);
    Mount m(file);
    ASSERT_TRUE(m.mounted()) << m.output();
    const RunResult r =
        run("find " + quote(m.path()) + " -type f -exec cat {} + >/dev/null 2>&1; echo $?");
    EXPECT_EQ(r.output, "0\n");
    ++mounted;
  }
  EXPECT_GE(mounted, 8);
}

// A mount point left stale: ggufs -f is killed with SIGKILL while mounted.
class StaleMount : public ::testing::Test {
 protected:
  void SetUp() override {
    GGUFS_REQUIRE_FUSE();
    file_ = write_one_key_model(dir_.path(), "stale");
    mnt_ = dir_.path() / "mnt";
    std::filesystem::create_directory(mnt_);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::execl(GGUFS_BINARY, "ggufs", "-f", file_.c_str(), mnt_.c_str(), nullptr);
      ::_exit(127);
    }
    for (int i = 0; i < 500 && !is_mounted(mnt_); ++i) ::usleep(10000);
    const bool up = is_mounted(mnt_);
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(up) << "ggufs -f did not mount";
    // The kernel aborts the connection once nothing holds /dev/fuse open any more; a request
    // caught in flight by the abort answers ECONNABORTED. Wait for the settled state: a stale
    // mount, ENOTCONN to every new request.
    struct statfs sfs {};
    for (int i = 0; i < 500; ++i) {
      if (::statfs(mnt_.c_str(), &sfs) == -1 && errno == ENOTCONN) break;
      ::usleep(10000);
    }
  }
  void TearDown() override {
    if (!mnt_.empty() && is_mounted(mnt_)) run("fusermount3 -uz " + quote(mnt_));
    EXPECT_FALSE(!mnt_.empty() && is_mounted(mnt_));
  }
  RunResult mount(const std::string& options) {
    return run(std::string(GGUFS_BINARY) + " " + options + " " + quote(file_) + " " + quote(mnt_) +
               " 2>&1");
  }

  TempDir dir_;
  std::filesystem::path file_, mnt_;
};

TEST_F(StaleMount, IsDetectedAndTheFixIsPrinted) {
  // statfs always reaches the (dead) daemon; stat may be served from cached attributes.
  struct statfs sfs {};
  ASSERT_EQ(::statfs(mnt_.c_str(), &sfs), -1);
  ASSERT_EQ(errno, ENOTCONN);
  struct stat st {};
  const RunResult r = mount("");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find(mnt_.string() + ": Transport endpoint is not connected"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\n  fusermount3 -u " + mnt_.string() + "\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("-o force"), std::string::npos) << r.output;
  // The printed command works.
  EXPECT_EQ(run("fusermount3 -u " + quote(mnt_) + " 2>&1").exit_code, 0);
  EXPECT_EQ(::stat(mnt_.c_str(), &st), 0) << std::strerror(errno);
  const RunResult again = mount("");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(read_text(mnt_ / "metadata/general.architecture"), "stale\n");
  EXPECT_EQ(run("fusermount3 -u " + quote(mnt_) + " 2>&1").exit_code, 0);
}

TEST_F(StaleMount, ForceClearsItAndMounts) {
  const RunResult r = mount("-o force");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("cleared a stale mount"), std::string::npos) << r.output;
  EXPECT_EQ(read_text(mnt_ / "metadata/general.architecture"), "stale\n");
  EXPECT_EQ(run("fusermount3 -u " + quote(mnt_) + " 2>&1").exit_code, 0);
  // Only one mount was left at the mount point: after the unmount it is a plain folder again.
  EXPECT_FALSE(is_mounted(mnt_));
}

TEST(MountForce, IsHarmlessOnAHealthyMountPoint) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "fine");
  Mount m(file, "-o ro,force");
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(without_warnings(m.output()), "");  // its only warning: no hf/ for "fine"
  EXPECT_EQ(read_text(m / "metadata/general.architecture"), "fine\n");
}

TEST(MountHelp, DocumentsForce) {
  const RunResult r = run(std::string(GGUFS_BINARY) + " --help 2>&1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("force "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fusermount3 -uz"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace ggufs::test

namespace ggufs::test {
namespace {

TEST(MountNames, KeysTooLongForAFileNameAreListedAndRead) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_string("short", "s");
  g.add_string(std::string(300, 'k'), "long");
  g.add_string(std::string(2000, '/'), "escaped to 6000 bytes");
  const auto file = dir.path() / "long.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  const RunResult ls = run("ls -U " + quote(m / "metadata") + " 2>&1");
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  std::string escaped;
  for (int i = 0; i < 66; ++i) escaped += "%2F";  // 198 bytes: byte 200 is inside an escape
  EXPECT_EQ(ls.output, "short\n" + std::string(200, 'k') + "%~1\n" + escaped + "%~2\n");
  EXPECT_EQ(read_text(m / ("metadata/" + std::string(200, 'k') + "%~1")), "long\n");
}

}  // namespace
}  // namespace ggufs::test

namespace ggufs::test {
namespace {

// The options of the mount at `mnt` as /proc/mounts lists them ("" when not mounted).
std::string mount_options(const std::filesystem::path& mnt) {
  const std::string mounts = read_text("/proc/mounts");
  const std::string key = " " + mnt.string() + " fuse.ggufs ";
  const std::size_t at = mounts.find(key);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size(), end = mounts.find(' ', begin);
  return "," + mounts.substr(begin, end - begin) + ",";
}

TEST(MountSecurity, ReadOnlyDefaultPermissionsOwnedByTheUserNoAllowOther) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "secure");
  {
    Mount m(file);
    ASSERT_TRUE(m.mounted()) << m.output();
    const std::string opts = mount_options(m.path());
    EXPECT_NE(opts.find(",ro,"), std::string::npos) << opts;
    EXPECT_NE(opts.find(",default_permissions,"), std::string::npos) << opts;
    EXPECT_EQ(opts.find("allow_other"), std::string::npos) << opts;
    struct stat st {};
    ASSERT_EQ(::stat((m / "metadata/general.architecture").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::getuid());
    EXPECT_EQ(st.st_gid, ::getgid());
    EXPECT_EQ(st.st_mode & 07777, 0444u);
    const int fd = ::open((m / "metadata/general.architecture").c_str(), O_WRONLY);
    EXPECT_EQ(fd, -1);
    EXPECT_TRUE(errno == EROFS || errno == EACCES) << std::strerror(errno);
    if (fd >= 0) ::close(fd);
  }
  Mount shared(file, "-o allow_other");
  ASSERT_TRUE(shared.mounted()) << shared.output();
  EXPECT_NE(mount_options(shared.path()).find(",allow_other,"), std::string::npos)
      << mount_options(shared.path());
}

}  // namespace
}  // namespace ggufs::test
