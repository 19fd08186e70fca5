// Mount tests on fixtures written by our own writer (always on; no shared data needed):
// the tree, stat, cat, dd with odd ranges, numpy, read-only behaviour and the CLI.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/quantize.h"
#include "ggufs_version.h"
#include "mount_util.h"

namespace ggufs::test {
namespace {

class SampleMount : public ::testing::Test {
 protected:
  void SetUp() override {
    GGUFS_REQUIRE_FUSE();
    sample_ = dir_.path() / "sample.gguf";
    const RunResult w = run(std::string(GGUFS_SAMPLE_BINARY) + " " + quote(sample_) + " 2>&1");
    ASSERT_EQ(w.exit_code, 0) << w.output;
    mount_ = std::make_unique<Mount>(sample_);
    ASSERT_TRUE(mount_->mounted()) << mount_->output();
  }
  void TearDown() override { mount_.reset(); }

  TempDir dir_;
  std::filesystem::path sample_;
  std::unique_ptr<Mount> mount_;
};

TEST_F(SampleMount, RootListsTheContractInOrder) {
  const RunResult r = run("ls -U " + quote(mount_->path()));
  // hf/ and mlx/ too: the sample is a consistent llama, so the mount offers them and warns of
  // nothing.
  EXPECT_EQ(
      r.output,
      "gguf.json\ntensors.tsv\nmetadata\nraw\nf32\nnpy\nf16\nmodel.gguf\nmodel.safetensors\nhf\n"
      "mlx\n");
  EXPECT_EQ(mount_->output().find("warning"), std::string::npos) << mount_->output();
  EXPECT_EQ(run("cat " + quote(*mount_ / "metadata/general.architecture")).output, "llama\n");
}

TEST_F(SampleMount, StatIsExactAndReadOnly) {
  struct stat st {};
  ASSERT_EQ(::stat((*mount_ / "raw/blk.0.attn_k.weight").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 256 * 128 * 2);  // F16
  EXPECT_EQ(st.st_mode & 07777, 0444u);
  ASSERT_EQ(::stat((*mount_ / "f32/blk.0.ffn_up.weight").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 256 * 512 * 4);
  ASSERT_EQ(::stat((*mount_ / "raw/blk.0.ffn_up.weight").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 256 / 256 * 144 * 512);  // Q4_K: 144 bytes per 256 elements
  ASSERT_EQ(::stat((*mount_ / "f32").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0555u);
  EXPECT_TRUE(S_ISDIR(st.st_mode));

  EXPECT_EQ(::open((*mount_ / "raw/token_embd.weight").c_str(), O_WRONLY), -1);
  EXPECT_TRUE(errno == EROFS || errno == EACCES) << std::strerror(errno);
  EXPECT_EQ(::open((*mount_ / "new").c_str(), O_CREAT | O_WRONLY, 0644), -1);
  EXPECT_EQ(::stat((*mount_ / "f32/no-such-tensor").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(SampleMount, F32OfAnF32TensorIsItsRawBytes) {
  const auto raw = read_file(*mount_ / "raw/output_norm.weight");
  const auto f32 = read_file(*mount_ / "f32/output_norm.weight");
  ASSERT_EQ(raw.size(), 256u * 4);
  EXPECT_EQ(raw, f32);
}

TEST_F(SampleMount, OddRangesEqualTheWholeFile) {
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.ffn_up.weight",
                           "blk.0.ffn_down.weight"}) {
    const auto p = *mount_ / ("f32/" + std::string(name));
    const auto whole = read_file(p);
    // Ranges that start and end inside a float, inside a block, and across chunk borders.
    const int size = static_cast<int>(whole.size());
    for (auto [skip, count] :
         {std::pair{1, 3}, {5, 1021}, {1023, 2049}, {4097, size - 4097 - 3}, {size - 7, 7}}) {
      const RunResult r = run("dd if=" + quote(p) + " bs=1 skip=" + std::to_string(skip) +
                              " count=" + std::to_string(count) + " status=none");
      ASSERT_EQ(r.exit_code, 0);
      ASSERT_EQ(r.output.size(), static_cast<std::size_t>(count)) << name;
      EXPECT_EQ(0, std::memcmp(r.output.data(), whole.data() + skip, count)) << name << " " << skip;
    }
  }
}

TEST_F(SampleMount, QuantizedTensorsDecodeCloseToTheirSmoothSource) {
  // The sample's values are smooth functions in [-1, 1]; a decode that is off by a block, a
  // nibble order or a scale would be far from them, while quantization error is small.
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.ffn_up.weight", "blk.0.ffn_down.weight"}) {
    const auto b = read_file(*mount_ / ("f32/" + std::string(name)));
    ASSERT_EQ(b.size() % 4, 0u);
    float max_abs = 0;
    for (std::size_t i = 0; i < b.size(); i += 4) {
      float v;
      std::memcpy(&v, b.data() + i, 4);
      ASSERT_TRUE(std::isfinite(v)) << name;
      max_abs = std::max(max_abs, std::fabs(v));
    }
    EXPECT_GT(max_abs, 0.1f) << name;
    EXPECT_LT(max_abs, 1.5f) << name;
  }
}

TEST_F(SampleMount, NumpyLoadsNpyAndF32) {
  GGUFS_REQUIRE_NUMPY();
  const std::string script =
      "import numpy as np, sys\n"
      "a = np.load(sys.argv[1] + '/npy/blk.0.ffn_down.weight.npy', mmap_mode='r')\n"
      "b = np.fromfile(sys.argv[1] + '/f32/blk.0.ffn_down.weight', dtype=np.float32)\n"
      "c = np.memmap(sys.argv[1] + '/f32/blk.0.ffn_down.weight', dtype=np.float32, mode='r')\n"
      "assert a.shape == (256, 512), a.shape\n"
      "assert a.dtype == np.float32\n"
      "assert np.array_equal(a.reshape(-1), b)\n"
      "assert np.array_equal(c, b)\n"
      "print('ok')\n";
  const RunResult r =
      run("/usr/bin/python3 -c " + quote(script) + " " + quote(mount_->path()) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "ok\n");
}

TEST_F(SampleMount, GgufJsonAndTensorsTsv) {
  GGUFS_REQUIRE_NUMPY();
  const std::string script =
      "import json, sys\n"
      "d = json.load(open(sys.argv[1] + '/gguf.json'))\n"
      "names = [t['name'] for t in d['tensors']]\n"
      "rows = open(sys.argv[1] + '/tensors.tsv').read().splitlines()\n"
      "assert [r.split('\\t')[0] for r in rows[1:]] == names, rows\n"
      "print(len(names), d['header']['tensor_count'])\n";
  const RunResult r =
      run("/usr/bin/python3 -c " + quote(script) + " " + quote(mount_->path()) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "12 12\n");
}

// Key and tensor names that are not usable file names stay reachable under percent-escapes.
TEST(MountNames, UnusableNamesAreEscaped) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_string("a/b", "slash");
  g.add_string("..", "dots");
  g.add_string("100%", "percent");
  g.add_tensor("../evil", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 0));
  const auto file = dir.path() / "names.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(run("cat " + quote(m / "metadata/a%2Fb")).output, "slash\n");
  EXPECT_EQ(run("cat " + quote(m / "metadata/%2E%2E")).output, "dots\n");
  EXPECT_EQ(run("cat " + quote(m / "metadata/100%25")).output, "percent\n");
  EXPECT_EQ(std::filesystem::file_size(m / "raw/..%2Fevil"), 16u);
  EXPECT_EQ(run("ls -U " + quote(m / "metadata")).output, "a%2Fb\n%2E%2E\n100%25\n");
}

TEST(MountCli, ExitCodes) {
  TempDir dir;
  const std::string bin = GGUFS_BINARY;
  EXPECT_EQ(run(bin + " >/dev/null 2>&1").exit_code, 1);
  EXPECT_EQ(run(bin + " --version").output, std::string("ggufs ") + GGUFS_VERSION + "\n");
  EXPECT_EQ(run(bin + " -h >/dev/null 2>&1").exit_code, 0);
  const RunResult missing =
      run(bin + " " + quote(dir.path() / "nope.gguf") + " " + quote(dir.path()) + " 2>&1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("nope.gguf: cannot open"), std::string::npos) << missing.output;
  write_file(dir.path() / "bad.gguf", std::vector<std::uint8_t>(100, 'x'));
  const RunResult bad =
      run(bin + " " + quote(dir.path() / "bad.gguf") + " " + quote(dir.path()) + " 2>&1");
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.output.find("bad.gguf: at byte 0: not a GGUF file"), std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace ggufs::test

namespace ggufs::test {
namespace {

TEST(MountTypes, RemovedAndUnknownTypeIdsAreListedNotServed) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  GgufWriter g;
  g.add_tensor("ok", GGML_TYPE_F32, {4}, std::vector<std::uint8_t>(16, 0));
  g.add_tensor("removed", 4, {32}, {});  // Q4_2: removed from GGUF, size unknown
  g.add_tensor("future", 99, {32}, {});
  const auto file = dir.path() / "types.gguf";
  g.write_file(file.string());
  Mount m(file);
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_NE(m.output().find("warning: "), std::string::npos) << m.output();
  EXPECT_NE(m.output().find("removed or unknown type ids 4 (1 tensors), 99 (1 tensors)"),
            std::string::npos)
      << m.output();
  // The whole-model views: model.gguf is the file; model.safetensors leaves both out and says so.
  EXPECT_NE(m.output().find("model.safetensors leaves out 2 tensor(s) that cannot be decoded"),
            std::string::npos)
      << m.output();
  EXPECT_EQ(read_text(m / "model.gguf"), read_text(file));
  EXPECT_EQ(run("ls -U " + quote(m / "raw")).output, "ok\n");
  EXPECT_EQ(run("ls -U " + quote(m / "f32")).output, "ok\n");
  const std::string tsv = read_text(m / "tensors.tsv");
  EXPECT_NE(tsv.find("\nremoved\ttype_4\t32\t"), std::string::npos) << tsv;
  EXPECT_NE(tsv.find("\nfuture\ttype_99\t32\t"), std::string::npos) << tsv;
}

TEST(MountLifecycle, ForegroundSigtermUnmountsCleanly) {
  GGUFS_REQUIRE_FUSE();
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "test");
  const auto mnt = dir.path() / "mnt";
  std::filesystem::create_directory(mnt);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execl(GGUFS_BINARY, "ggufs", "-f", "-s", file.c_str(), mnt.c_str(), nullptr);
    ::_exit(127);
  }
  for (int i = 0; i < 500 && !is_mounted(mnt); ++i) ::usleep(10000);
  const bool mounted = is_mounted(mnt);
  std::string content = mounted ? read_text(mnt / "metadata/general.architecture") : "";
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (is_mounted(mnt)) run("fusermount3 -uz " + quote(mnt));  // never leave a mount behind
  ASSERT_TRUE(mounted);
  EXPECT_EQ(content, "test\n");
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_FALSE(is_mounted(mnt));
}

}  // namespace
}  // namespace ggufs::test

namespace ggufs::test {
namespace {

// Without a raised read-ahead, page-cache reads reach the daemon as 128 KiB requests (see the
// README's performance notes). The daemon raises it just after the mount answers, so poll.
TEST(MountReadAhead, IsRaisedTo4032KiBByDefaultAndSettable) {
  GGUFS_REQUIRE_FUSE();
  if (::geteuid() != 0) GTEST_SKIP() << "setting read_ahead_kb needs root";
  TempDir dir;
  const auto file = write_one_key_model(dir.path(), "test");
  for (const auto& [options, expected] :
       {std::pair<std::string, std::string>{"", "4032"}, {"-o read_ahead_kb=512", "512"}}) {
    Mount m(file, options);
    ASSERT_TRUE(m.mounted()) << m.output();
    std::string value;
    for (int i = 0; i < 200 && (value = read_ahead_kb(m.path())) != expected; ++i) ::usleep(10000);
    EXPECT_EQ(value, expected) << "options: " << options;
  }
}

}  // namespace
}  // namespace ggufs::test
