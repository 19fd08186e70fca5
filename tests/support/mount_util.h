// Helpers of the mount tests: run commands, mount ggufs for real and always unmount.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/tree.h"
#include "test_util.h"

namespace ggufs::test {

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout, and stderr where the command redirects it
};

/// Runs `cmd` with /bin/sh and captures its stdout.
inline RunResult run(const std::string& cmd) {
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string quote(const std::filesystem::path& p) {
  std::string out = "'";
  for (char c : p.string()) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The folders of every per-tensor view (kTensorViews), in order.
inline std::vector<std::string> view_folders() {
  std::vector<std::string> out;
  for (const TensorView& v : kTensorViews) out.emplace_back(v.folder);
  return out;
}

/// True when /usr/bin/python3 has numpy.
inline bool have_numpy() {
  return run("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1").exit_code == 0;
}

#define GGUFS_REQUIRE_FUSE()                 \
  if (!std::filesystem::exists("/dev/fuse")) \
  GTEST_SKIP() << "/dev/fuse is missing: mount tests need FUSE"

#define GGUFS_REQUIRE_NUMPY()       \
  if (!::ggufs::test::have_numpy()) \
  GTEST_SKIP() << "/usr/bin/python3 has no numpy (apt python3-numpy)"

/// Writes `dir`/m.gguf: a model with one metadata key, general.architecture = `architecture`, and
/// no tensors (for tests of the command and the mount itself). Returns its path.
inline std::filesystem::path write_one_key_model(const std::filesystem::path& dir,
                                                 const std::string& architecture) {
  GgufWriter g;
  g.add_string("general.architecture", architecture);
  const auto file = dir / "m.gguf";
  g.write_file(file.string());
  return file;
}

/// Writes `file` (creating its folders): a model whose general.architecture is `arch`, with one
/// F32 tensor "t.weight" of ne {4}, each of its 16 bytes 7 (for tests of libraries of models).
inline void write_arch_model(const std::filesystem::path& file, const std::string& arch) {
  std::filesystem::create_directories(file.parent_path());
  GgufWriter g;
  g.add_string("general.architecture", arch);
  g.add_tensor("t.weight", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 7));
  g.write_file(file.string());
}

/// True while a ggufs FUSE file system (live or stale) is mounted at `p` (/proc/mounts).
inline bool is_mounted(const std::filesystem::path& p) {
  return read_text("/proc/mounts").find(" " + p.string() + " fuse.ggufs ") != std::string::npos;
}

/// The read_ahead_kb of the FUSE bdi of the mount at `p` ("" where it cannot be read).
inline std::string read_ahead_kb(const std::filesystem::path& p) {
  const RunResult dev = run("mountpoint -d " + quote(p));
  if (dev.exit_code != 0) return "";
  std::string d = dev.output;
  while (!d.empty() && d.back() == '\n') d.pop_back();
  std::ifstream in("/sys/class/bdi/" + d + "/read_ahead_kb");
  std::string v;
  in >> v;
  return v;
}

/// Unmounts `p`, lazily (fusermount3 -uz) when a plain unmount fails, so that no test leaves a
/// mount behind.
inline void unmount_now(const std::filesystem::path& p) {
  if (run("fusermount3 -u " + quote(p) + " 2>&1").exit_code != 0) {
    run("fusermount3 -uz " + quote(p) + " 2>&1");
  }
}

/// Unmounts `mnt` on destruction if it is still mounted (a test that fails midway).
struct UnmountGuard {
  std::filesystem::path mnt;
  ~UnmountGuard() {
    if (is_mounted(mnt)) unmount_now(mnt);
  }
};

/// A real ggufs mount of `file` in a fresh temporary folder; unmounted by the destructor even
/// when the test fails. `env`, if given, prefixes the command (e.g. "env -u HOME VAR=value").
class Mount {
 public:
  explicit Mount(const std::filesystem::path& file, const std::string& options = "",
                 const std::string& env = "") {
    mountpoint_ = dir_.path() / "mnt";
    std::filesystem::create_directory(mountpoint_);
    const RunResult r = run(env + " " + GGUFS_BINARY + " " + options + " " + quote(file) + " " +
                            quote(mountpoint_) + " 2>&1");
    exit_code_ = r.exit_code;
    output_ = r.output;
    mounted_ = exit_code_ == 0;
  }
  ~Mount() {
    if (!mounted_) return;
    // A daemon that died while mounted (a crash, or a sanitizer finding in the sanitizer build,
    // whose report a detached daemon cannot print) leaves "Transport endpoint is not connected".
    // statfs always reaches the daemon; stat may be answered from cached attributes.
    struct statfs sfs {};
    if (::statfs(mountpoint_.c_str(), &sfs) != 0 && errno == ENOTCONN) {
      ADD_FAILURE() << "the ggufs daemon of " << mountpoint_
                    << " died while mounted (rerun the test's mount with ggufs -f to see why)";
    }
    unmount_now(mountpoint_);
  }
  Mount(const Mount&) = delete;
  Mount& operator=(const Mount&) = delete;

  bool mounted() const { return mounted_; }
  int exit_code() const { return exit_code_; }
  const std::string& output() const { return output_; }
  std::filesystem::path operator/(const std::string& rel) const { return mountpoint_ / rel; }
  const std::filesystem::path& path() const { return mountpoint_; }

 private:
  TempDir dir_;
  std::filesystem::path mountpoint_;
  int exit_code_ = -1;
  std::string output_;
  bool mounted_ = false;
};

}  // namespace ggufs::test
