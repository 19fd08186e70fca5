// Mount tests of how ggufs fits other tools: extended attributes (getfattr, getxattr(2)),
// --info/--json, mount conventions (mount point, fstab options, uid/gid, mount.fuse3),
// readiness (notify_pipe, systemd's notify socket) and logging (syslog, -q, -v, redact).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "info_fixture.h"
#include "mount_util.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

// getxattr(2) of `name` on `path`, or "<errno text>" when it fails.
std::string xattr(const std::filesystem::path& path, const char* name) {
  char buf[4096];
  const ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  if (n < 0) return "<" + std::string(std::strerror(errno)) + ">";
  return std::string(buf, static_cast<std::size_t>(n));
}

// `n` bytes at byte `offset` of `file`.
std::string file_bytes(const std::filesystem::path& file, std::uint64_t offset, std::size_t n) {
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(n, '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  return in ? out : std::string();
}

TEST(MountXattrs, TensorFilesCarryTypeShapeOffsetAndFile) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  std::vector<std::uint8_t> q4k(2 * 3 * 144);  // ne {512, 3}: 2 super-blocks per row
  for (std::size_t i = 0; i < q4k.size(); ++i) q4k[i] = static_cast<std::uint8_t>(i * 7 + 1);
  q4k[0] = q4k[1] = 0;  // d = +0 (F16): every value is finite
  g.add_tensor("first", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 0x3f));
  g.add_tensor("blk.0.w", GGML_TYPE_Q4_K, {512, 3}, q4k);
  const auto file = dir.path() / "x.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();

  for (const char* f : {"raw/blk.0.w", "f32/blk.0.w", "npy/blk.0.w.npy"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(xattr(m / f, "user.ggml.type"), "Q4_K");
    EXPECT_EQ(xattr(m / f, "user.ggml.ne"), "512,3");
    EXPECT_EQ(xattr(m / f, "user.ggml.shape"), "3,512");
    EXPECT_EQ(xattr(m / f, "user.gguf.file"), std::filesystem::canonical(file).string());
    EXPECT_EQ(xattr(m / f, "user.no.such"), "<" + std::string(std::strerror(ENODATA)) + ">");
  }
  // The offset is where the tensor's bytes really are in the file.
  const std::string offset = xattr(m / "raw/blk.0.w", "user.gguf.offset");
  ASSERT_FALSE(offset.empty());
  ASSERT_TRUE(std::all_of(offset.begin(), offset.end(), ::isdigit)) << offset;
  EXPECT_EQ(file_bytes(file, std::stoull(offset), q4k.size()), std::string(q4k.begin(), q4k.end()));
  EXPECT_EQ(xattr(m / "raw/first", "user.ggml.ne"), "4");

  // The list, and the size protocol of listxattr(2)/getxattr(2).
  const auto raw = m / "raw/blk.0.w";
  const ssize_t list_size = ::listxattr(raw.c_str(), nullptr, 0);
  ASSERT_GT(list_size, 0);
  std::string names(static_cast<std::size_t>(list_size), '\0');
  ASSERT_EQ(::listxattr(raw.c_str(), names.data(), names.size()), list_size);
  EXPECT_EQ(names, std::string("user.ggml.type\0user.ggml.ne\0user.ggml.shape\0user.gguf.offset\0"
                               "user.gguf.file\0",
                               76));
  EXPECT_EQ(::getxattr(raw.c_str(), "user.ggml.type", nullptr, 0), 4);
  char small[2];
  EXPECT_EQ(::getxattr(raw.c_str(), "user.ggml.type", small, sizeof small), -1);
  EXPECT_EQ(errno, ERANGE);

  // Directories and text files have none; the mount is read-only.
  EXPECT_EQ(::listxattr((m / "metadata").c_str(), nullptr, 0), 0);
  EXPECT_EQ(::listxattr((m / "gguf.json").c_str(), nullptr, 0), 0);
  EXPECT_EQ(::setxattr(raw.c_str(), "user.x", "1", 1, 0), -1);

  // getfattr, as the README shows it.
  const RunResult r = run("getfattr -d --absolute-names " + quote(m / "f32/blk.0.w") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("user.ggml.type=\"Q4_K\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("user.ggml.shape=\"3,512\""), std::string::npos) << r.output;
}

TEST(MountInfo, JsonIsTheMountsGgufJson) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_info_model(dir.path());
  const RunResult r = run(std::string(GGUFS_BINARY) + " --json " + quote(file));
  ASSERT_EQ(r.exit_code, 0);
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(r.output, read_text(m / "gguf.json") + "\n");
}

// The command refuses bad files and bad usage of --info and --json with their exit codes.
TEST(MountInfo, BadFilesAndUsageOfTheCommand) {
  TempDir dir;
  const auto bad = dir.path() / "bad.gguf";
  std::ofstream(bad) << "GGUF\x03\x00\x00\x00 too short for counts";
  RunResult r = run(std::string(GGUFS_BINARY) + " --info " + quote(bad) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("at byte"), std::string::npos) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --json " + quote(dir.path() / "missing.gguf") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --info 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = run(std::string(GGUFS_BINARY) + " --info " + quote(bad) + " /mnt 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

// Whether `done` becomes true within 10 s (polled).
bool eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::string ggufs() { return std::string(GGUFS_BINARY); }

TEST(MountConventions, MissingMountPointIsCreatedAndRemovedAtUnmount) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  const auto mnt = dir.path() / "new";
  UnmountGuard guard{mnt};
  RunResult r = run(ggufs() + " " + quote(file) + " " + quote(mnt) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(mnt / "metadata/general.architecture"), "llama\n");
  ASSERT_EQ(run("fusermount3 -u " + quote(mnt)).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return !std::filesystem::exists(mnt); }))
      << "the mount point ggufs created is still there";

  // A mount point that existed before stays.
  const auto kept = dir.path() / "kept";
  std::filesystem::create_directory(kept);
  UnmountGuard guard2{kept};
  r = run(ggufs() + " " + quote(file) + " " + quote(kept) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(run("fusermount3 -u " + quote(kept)).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(std::filesystem::is_directory(kept));

  // A mount that fails (invalid file) leaves no directory behind either.
  const auto bad = dir.path() / "bad.gguf";
  std::ofstream(bad) << "not a gguf file at all";
  r = run(ggufs() + " " + quote(bad) + " " + quote(mnt) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_FALSE(std::filesystem::exists(mnt));
}

TEST(MountConventions, FstabOptionsAreIgnoredAndOwnerIsSettable) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  Mount m(file,
          "-o ro,noauto,nofail,_netdev,user,users,auto,defaults,x-systemd.automount,"
          "x-systemd.device-timeout=5,noexec,nosuid,nodev,uid=1234,gid=5678");
  ASSERT_TRUE(m.mounted()) << m.output();
  struct stat st {};
  ASSERT_EQ(::stat((m / "metadata/general.architecture").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1234u);
  EXPECT_EQ(st.st_gid, 5678u);
  ASSERT_EQ(::stat((m / "metadata").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1234u);
  const std::string mounts = read_text("/proc/mounts");
  const auto line_at = mounts.find(" " + m.path().string() + " ");
  ASSERT_NE(line_at, std::string::npos);
  const std::string line = mounts.substr(line_at, mounts.find('\n', line_at) - line_at);
  EXPECT_NE(line.find("noexec"), std::string::npos) << line;
  EXPECT_NE(line.find("nosuid"), std::string::npos) << line;

  Mount bad(file, "-o uid=nobody");
  EXPECT_FALSE(bad.mounted());
  EXPECT_EQ(bad.exit_code(), 1) << bad.output();
}

TEST(MountConventions, AllowRootAndAllowOther) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  for (const char* opt : {"allow_root", "allow_other"}) {
    SCOPED_TRACE(opt);
    Mount m(file, std::string("-o ") + opt);
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
    // The kernel sees allow_other for both (libfuse checks allow_root's rule in the daemon).
    const std::string mounts = read_text("/proc/mounts");
    const auto line_at = mounts.find(" " + m.path().string() + " ");
    ASSERT_NE(line_at, std::string::npos);
    EXPECT_NE(mounts.find("allow_other", line_at), std::string::npos);
  }
}

TEST(MountConventions, FstabLineMountsThroughMountFuse3) {
  GGUFS_REQUIRE_FUSE();
  if (run("command -v mount.fuse3 || test -x /sbin/mount.fuse3").exit_code != 0) {
    GTEST_SKIP() << "mount.fuse3 is missing (apt fuse3)";
  }
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "from-fstab");
  const auto mnt = dir.path() / "mnt";
  std::filesystem::create_directory(mnt);
  const auto fstab = dir.path() / "fstab";
  std::ofstream(fstab) << file.string() << " " << mnt.string() << " fuse.ggufs ro,noauto 0 0\n";
  UnmountGuard guard{mnt};
  // mount(8) finds the line by its mount point and runs mount.fuse3, which runs `ggufs` from a
  // standard PATH (mount resets it): the binary under test is linked into /usr/local/bin for
  // the test, unless a ggufs is installed there already.
  const std::filesystem::path installed = "/usr/local/bin/ggufs";
  std::error_code ec;
  const bool ours = !std::filesystem::exists(std::filesystem::symlink_status(installed)) &&
                    (std::filesystem::create_symlink(GGUFS_BINARY, installed, ec), !ec);
  struct RemoveLink {
    bool ours;
    std::filesystem::path link;
    ~RemoveLink() {
      if (ours) std::filesystem::remove(link);
    }
  } remove_link{ours, installed};
  if (!ours && std::filesystem::canonical(installed, ec) != std::filesystem::path(GGUFS_BINARY)) {
    GTEST_SKIP() << installed << " is another ggufs (or cannot be linked): not testing it";
  }
  const RunResult r = run("mount -T " + quote(fstab) + " " + quote(mnt) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(is_mounted(mnt));
  EXPECT_EQ(read_text(mnt / "metadata/general.architecture"), "from-fstab\n");
  EXPECT_EQ(run("umount " + quote(mnt) + " 2>&1").exit_code, 0);
  EXPECT_FALSE(is_mounted(mnt));
}

TEST(MountReadiness, NotifyPipeSaysReadyOrError) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  const auto notes = dir.path() / "ready";
  {
    Mount m(file, "-o notify_pipe=" + notes.string());
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(read_text(notes), "READY=1\n");  // written before the command returned
  }
  const auto bad = dir.path() / "bad.gguf";
  std::ofstream(bad) << "GGUF";
  std::filesystem::remove(notes);
  Mount m(bad, "-o notify_pipe=" + notes.string());
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 3);
  EXPECT_EQ(read_text(notes), "ERROR=3\n");
}

// A unix datagram socket bound at `path` (a stand-in for systemd's notify socket or syslog's
// /dev/log); closed and unlinked on destruction.
class DatagramSink {
 public:
  explicit DatagramSink(std::filesystem::path path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    bound_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~DatagramSink() {
    if (fd_ >= 0) ::close(fd_);
    if (bound_) std::filesystem::remove(path_);
  }
  bool bound() const { return bound_; }
  // Every datagram received until one contains `what` (or `seconds` pass), concatenated.
  std::string receive_until(const std::string& what, int seconds = 10) {
    std::string all;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (all.find(what) == std::string::npos && std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) all.append(buf, static_cast<std::size_t>(n)).append("\n");
    }
    return all;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool bound_ = false;
};

TEST(MountReadiness, SystemdNotifySocketGetsReady) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  const auto mnt = dir.path() / "mnt";
  DatagramSink sink(dir.path() / "notify.sock");
  ASSERT_TRUE(sink.bound());
  UnmountGuard guard{mnt};
  // As systemd runs a Type=notify service: in the foreground, NOTIFY_SOCKET set.
  run("NOTIFY_SOCKET=" + quote(dir.path() / "notify.sock") + " " + ggufs() + " -f " + quote(file) +
      " " + quote(mnt) + " >/dev/null 2>&1 &");
  const std::string got = sink.receive_until("READY=1");
  EXPECT_NE(got.find("READY=1"), std::string::npos) << got;
  EXPECT_TRUE(is_mounted(mnt));
  EXPECT_EQ(read_text(mnt / "metadata/general.architecture"), "llama\n");
}

// The lines of syslog datagrams `all` sent by the daemon serving mount `m` ("ggufs[PID]: ..."):
// the daemons of tests running at the same time log to the same /dev/log. A failure when no
// daemon serves `m`: its lines could not be told from the others (and "none" would prove
// nothing).
std::string lines_of_daemon(const std::string& all, const Mount& m) {
  const std::vector<int> pids = pids_with(m.path().string());
  if (pids.empty()) ADD_FAILURE() << "no ggufs daemon serves " << m.path();
  std::string out;
  std::istringstream in(all);
  for (std::string line; std::getline(in, line);) {
    for (int pid : pids) {
      if (line.find(fmt::format("ggufs[{}]:", pid)) != std::string::npos) {
        out += line + "\n";
        break;
      }
    }
  }
  return out;
}

TEST(MountLogging, BackgroundDaemonLogsToSyslogWithVerboseAndRedact) {
  GGUFS_REQUIRE_FUSE();
  if (std::filesystem::exists("/dev/log")) {
    GTEST_SKIP() << "/dev/log exists (a syslog daemon runs): its messages cannot be read here";
  }
  DatagramSink syslog("/dev/log");
  if (!syslog.bound()) GTEST_SKIP() << "cannot bind /dev/log (not root?)";
  TempDir dir;
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_tensor("secret.weight", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 0));
  const auto file = dir.path() / "s.gguf";
  g.write_file(file.string());
  {
    Mount m(file, "-v");
    ASSERT_TRUE(m.mounted()) << m.output();
    read_text(m / "raw/secret.weight");
    const std::string got = lines_of_daemon(syslog.receive_until("open 'raw/secret.weight'"), m);
    EXPECT_NE(got.find("ggufs"), std::string::npos) << got;
    EXPECT_NE(got.find("mounted "), std::string::npos) << got;
    EXPECT_NE(got.find("open 'raw/secret.weight'"), std::string::npos) << got;
  }
  {
    Mount m(file, "-v -o redact");
    ASSERT_TRUE(m.mounted()) << m.output();
    read_text(m / "raw/secret.weight");
    const std::string got = lines_of_daemon(syslog.receive_until("open <redacted>"), m);
    EXPECT_NE(got.find("open <redacted>"), std::string::npos) << got;
    EXPECT_EQ(got.find("secret"), std::string::npos) << got;
  }
  {
    Mount m(file);  // default level: no info lines
    ASSERT_TRUE(m.mounted()) << m.output();
    read_text(m / "raw/secret.weight");
    const std::string got = lines_of_daemon(syslog.receive_until("never", 2), m);  // in 2 s
    EXPECT_EQ(got.find("open "), std::string::npos) << got;
  }
}

TEST(MountLogging, QuietSilencesWarnings) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_tensor("future", 99, {32}, {});  // an unknown type id: a warning at mount time
  const auto file = dir.path() / "w.gguf";
  g.write_file(file.string());
  Mount loud(file);
  ASSERT_TRUE(loud.mounted()) << loud.output();
  EXPECT_NE(loud.output().find("warning: "), std::string::npos) << loud.output();
  Mount quiet(file, "-q");
  ASSERT_TRUE(quiet.mounted()) << quiet.output();
  EXPECT_EQ(quiet.output(), "");
}

TEST(MountByteOrder, BigEndianAndVersion1FilesAreServedInHostOrder) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  TempDir dir;
  for (const auto& [version, big_endian] : {std::pair{3u, true}, std::pair{1u, false}}) {
    SCOPED_TRACE(fmt::format("version {}, big-endian {}", version, big_endian));
    GgufWriter g;
    g.set_format(version, big_endian);
    g.add_string("general.architecture", "llama");
    g.add("llama.block_count", Value{ValueType::kUint32, std::uint64_t{70000}});
    // F32 values 1.5 and -2 in the file's byte order; a Q8_0 block of zeros.
    std::vector<std::uint8_t> f32 = {0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0xc0};
    if (big_endian) f32 = {0x3f, 0xc0, 0x00, 0x00, 0xc0, 0x00, 0x00, 0x00};
    g.add_tensor("w", GGML_TYPE_F32, {2}, f32);
    g.add_tensor("q", GGML_TYPE_Q8_0, {32}, std::vector<std::uint8_t>(34, 0));
    const auto file = dir.path() / fmt::format("v{}{}.gguf", version, big_endian ? "be" : "");
    g.write_file(file.string());
    Mount m(file);
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(read_text(m / "metadata/llama.block_count"), "70000\n");
    const RunResult np = run("/usr/bin/python3 -c 'import numpy as np; print(np.fromfile(\"" +
                             (m / "f32/w").string() + "\", dtype=np.float32).tolist())'");
    EXPECT_EQ(np.output, "[1.5, -2.0]\n");
    EXPECT_EQ(read_text(m / "raw/w"), std::string(f32.begin(), f32.end()));  // as stored
    const std::string json = read_text(m / "gguf.json");
    EXPECT_NE(json.find(big_endian ? "\"byte_order\": \"big-endian\""
                                   : "\"byte_order\": \"little-endian\""),
              std::string::npos);
    EXPECT_NE(json.find(fmt::format("\"version\": {}", version)), std::string::npos);
    EXPECT_EQ(std::filesystem::exists(m / "f32/q"), !big_endian);
    EXPECT_TRUE(std::filesystem::exists(m / "raw/q"));
    if (big_endian) {
      EXPECT_NE(m.output().find("big-endian quantized blocks for Q8_0"), std::string::npos)
          << m.output();
    }
  }
}

TEST(MountSplit, ShardsMountAsOneTree) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NUMPY();
  TempDir dir;
  const std::string prefix = write_split(dir.path(), 3);
  // On a terminal (script(1) gives the command a pty), mounting says which shard it reads.
  const auto mnt = dir.path() / "mnt";
  UnmountGuard guard{mnt};
  const RunResult r = run(
      "script -qec " + quote(ggufs() + " " + quote(shard_path(prefix, 1, 3)) + " " + quote(mnt)) +
      " /dev/null 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("reading shard 3 of 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("read 3 shards"), std::string::npos) << r.output;
  ASSERT_TRUE(is_mounted(mnt));

  EXPECT_EQ(read_text(mnt / "metadata/general.architecture"), "llama\n");
  EXPECT_EQ(run("ls " + quote(mnt / "raw")).output, "t1.a\nt1.b\nt2.a\nt2.b\nt3.a\nt3.b\n");
  // t3.b is tensor 7 of the model, in the third shard: 7, 7.25, 7.5, 7.75.
  const RunResult np = run("/usr/bin/python3 -c 'import numpy as np; print(np.fromfile(\"" +
                           (mnt / "f32/t3.b").string() + "\", dtype=np.float32).tolist())'");
  EXPECT_EQ(np.output, "[7.0, 7.25, 7.5, 7.75]\n");
  const auto t3b = tensor_bytes(7);
  EXPECT_EQ(read_text(mnt / "raw/t3.b"), std::string(t3b.begin(), t3b.end()));
  EXPECT_EQ(xattr(mnt / "raw/t3.b", "user.gguf.file"),
            std::filesystem::canonical(shard_path(prefix, 3, 3)).string());
  EXPECT_EQ(xattr(mnt / "raw/t1.a", "user.gguf.file"),
            std::filesystem::canonical(shard_path(prefix, 1, 3)).string());
  const std::string json = read_text(mnt / "gguf.json");
  EXPECT_NE(json.find("\"shards\": ["), std::string::npos);
  EXPECT_NE(json.find(shard_path(prefix, 2, 3)), std::string::npos);
  EXPECT_NE(json.find("\"tensor_count\": 6"), std::string::npos);
  ASSERT_EQ(run("fusermount3 -u " + quote(mnt)).exit_code, 0);

  // A missing shard: exit 2, naming it.
  std::filesystem::remove(shard_path(prefix, 2, 3));
  Mount broken(shard_path(prefix, 1, 3));
  EXPECT_FALSE(broken.mounted());
  EXPECT_EQ(broken.exit_code(), 2) << broken.output();
  EXPECT_NE(broken.output().find(shard_path(prefix, 2, 3) + ": cannot open"), std::string::npos)
      << broken.output();
}

TEST(MountProgress, SlowStepsShowProgressOnATerminalOnly) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "llama");
  const auto mnt = dir.path() / "mnt";
  UnmountGuard guard{mnt};
  // Every step counts as slow with no delay (the default is 1 s).
  const std::string cmd =
      "GGUFS_PROGRESS_DELAY_MS=0 " + ggufs() + " " + quote(file) + " " + quote(mnt);
  RunResult r = run("script -qec " + quote(cmd) + " /dev/null 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ggufs: reading " + file.string() + ": done in"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rendering the metadata files: done in"), std::string::npos) << r.output;
  ASSERT_EQ(run("fusermount3 -u " + quote(mnt)).exit_code, 0);
  ASSERT_TRUE(eventually([&] { return !std::filesystem::exists(mnt); }));
  r = run(cmd + " 2>&1");  // not a terminal: nothing but the model's warnings (no hf/ for it)
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(without_warnings(r.output), "");
}

}  // namespace
}  // namespace ggufs::test
