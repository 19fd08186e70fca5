// Remote models through a real mount: nginx on loopback serves the files, ggufs mounts the URL,
// and every byte read through the mount is checked against the local file; the bytes nginx sent
// show that a mount and a one-tensor read fetch little more than they need.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "ggufs/model.h"
#include "http_server.h"
#include "mount_util.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

// A model of `n` F32 tensors "t<i>" of `floats` values each (values i + j / 1024).
std::filesystem::path write_model(const std::filesystem::path& dir, int n, std::size_t floats) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  for (int i = 0; i < n; ++i) {
    std::vector<std::uint8_t> bytes(floats * 4);
    for (std::size_t j = 0; j < floats; ++j) {
      const float v = static_cast<float>(i) + static_cast<float>(j % 1024) / 1024.0f;
      std::memcpy(bytes.data() + 4 * j, &v, 4);
    }
    g.add_tensor("t" + std::to_string(i), GGML_TYPE_F32, {floats}, bytes);
  }
  const auto file = dir / "model.gguf";
  g.write_file(file.string());
  return file;
}

TEST(MountRemote, EveryByteEqualsTheLocalFileAndOneTensorFetchesLittle) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  const auto file = write_model(served.path(), 8, 2 << 20);  // 8 tensors of 8 MiB
  Nginx server(served.path());
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount remote(server.url("model.gguf"), "-o cache_dir=" + cache.path().string());
  ASSERT_TRUE(remote.mounted()) << remote.output();
  // Mounting fetched the header's chunk, not the 64 MiB of tensor data.
  const std::uint64_t at_mount = server.bytes_sent();
  EXPECT_LE(at_mount, 1u << 20) << server.log();

  // One tensor: its 8 MiB and at most the chunks around it and ahead of it.
  EXPECT_EQ(read_text(remote / "raw/t5"), read_text(local / "raw/t5"));
  const std::uint64_t one = server.bytes_sent() - at_mount;
  EXPECT_GE(one, 8u << 20);
  EXPECT_LE(one, (8u << 20) + (6u << 20)) << server.log();

  std::vector<std::string> folders = view_folders();
  folders.insert(folders.begin(), "metadata");
  for (const std::string& dir : folders) {
    for (const auto& e : std::filesystem::directory_iterator(local / dir)) {
      const std::string name = e.path().filename().string();
      SCOPED_TRACE(std::string(dir) + "/" + name);
      EXPECT_TRUE(read_text(remote / dir / name) == read_text(e.path()));
    }
  }
  EXPECT_EQ(read_text(remote / "tensors.tsv"), read_text(local / "tensors.tsv"));
  // Odd ranges, through dd.
  for (const char* range : {"bs=1 skip=3 count=5", "bs=4093 skip=1001 count=7"}) {
    SCOPED_TRACE(range);
    const auto dd = [&](const std::filesystem::path& p) {
      return run("dd status=none if=" + quote(p) + " " + range).output;
    };
    EXPECT_EQ(dd(remote / "f32/t3"), dd(local / "f32/t3"));
  }
}

TEST(MountRemote, SplitModelOnTheServer) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  write_split(served.path(), 3);
  Nginx server(served.path());
  Mount m(server.url("m-00001-of-00003.gguf"), "-o cache_dir=" + cache.path().string());
  ASSERT_TRUE(m.mounted()) << m.output();
  const auto t3b = tensor_bytes(7);
  EXPECT_EQ(read_text(m / "raw/t3.b"), std::string(t3b.begin(), t3b.end()));
  EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
}

TEST(MountRemote, RefusalsAreClear) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  write_model(served.path(), 2, 1 << 20);
  Nginx server(served.path());
  const std::string cache_opt = "-o cache_dir=" + cache.path().string();
  {
    Mount m(server.url("noranges/model.gguf"), cache_opt);
    EXPECT_FALSE(m.mounted());
    EXPECT_EQ(m.exit_code(), 2) << m.output();
    EXPECT_NE(m.output().find("ignores byte ranges"), std::string::npos) << m.output();
  }
  {
    Mount m(server.url("auth/model.gguf"), cache_opt);
    EXPECT_FALSE(m.mounted());
    EXPECT_NE(m.output().find("HTTP status 401"), std::string::npos) << m.output();
  }
  {
    const RunResult r =
        run("GGUFS_HTTP_TOKEN=secret-token " + std::string(GGUFS_BINARY) + " --info " +
            quote(server.url("auth/model.gguf")) + " " + cache_opt + " 2>&1");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("general.architecture = \"llama\""), std::string::npos) << r.output;
  }
  {
    const auto token = cache.path() / "token";
    std::ofstream(token) << "secret-token\n";
    Mount m(server.url("auth/model.gguf"), cache_opt + " -o token_file=" + token.string());
    ASSERT_TRUE(m.mounted()) << m.output();
    EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
    EXPECT_EQ(m.output().find("secret-token"), std::string::npos);
  }
}

TEST(MountRemote, AServerFaultFailsOnlyTheReadsItTouches) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  const auto file = write_model(served.path(), 4, 1 << 20);  // 4 tensors of 4 MiB
  Nginx server(served.path());
  // Everything from byte 8 MiB on answers 503 (t2 and t3, roughly).
  FaultProxy proxy(server.port(), "--fail-from " + std::to_string(8 << 20));
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount m(proxy.url("model.gguf"), "-o cache_dir=" + cache.path().string());
  ASSERT_TRUE(m.mounted()) << m.output();
  const RunResult bad = run("cat " + quote(m / "raw/t3") + " >/dev/null 2>&1; echo $?");
  EXPECT_EQ(bad.output, "1\n");  // cat got EIO
  const RunResult msg = run("cat " + quote(m / "raw/t3") + " 2>&1 >/dev/null");
  EXPECT_NE(msg.output.find("Input/output error"), std::string::npos) << msg.output;
  EXPECT_EQ(read_text(m / "raw/t0"), read_text(local / "raw/t0"));  // the daemon goes on
  EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
}

}  // namespace
}  // namespace ggufs::test

namespace ggufs::test {
namespace {

// The children of `pid` that are zombies (exited, never reaped). A process that ends while /proc
// is listed (any other process of the machine) is skipped: its status file is gone.
std::vector<int> zombie_children(int pid) {
  std::vector<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "status");
    if (!in) continue;
    const std::string status((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    if (status.find("\nPPid:\t" + std::to_string(pid) + "\n") != std::string::npos &&
        status.find("\nState:\tZ") != std::string::npos) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

TEST(MountRemote, ACacheFolderOfOtherFilesIsRefusedAndKept) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, home;
  write_model(served.path(), 1, 1024);
  std::ofstream(home.path() / "thesis.tex") << "years of work";
  Nginx server(served.path());
  Mount m(server.url("model.gguf"), "-o cache_dir=" + home.path().string());
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 2) << m.output();
  EXPECT_NE(m.output().find("not ggufs's chunk cache"), std::string::npos) << m.output();
  EXPECT_EQ(read_text(home.path() / "thesis.tex"), "years of work");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(home.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(MountRemote, TheDaemonKeepsNoZombieAndErrorsSayNothingOfShards) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  write_model(served.path(), 1, 1024);
  Nginx server(served.path());
  Mount m(server.url("model.gguf"), "-o cache_dir=" + cache.path().string());
  ASSERT_TRUE(m.mounted()) << m.output();
  const std::vector<int> daemons = pids_with(m.path().string());
  ASSERT_FALSE(daemons.empty());
  for (int pid : daemons) EXPECT_TRUE(zombie_children(pid).empty()) << "daemon " << pid;
  // A missing single-file model: one plain line, no word of shards.
  Mount missing(server.url("nothing.gguf"), "-o cache_dir=" + cache.path().string());
  EXPECT_EQ(missing.exit_code(), 2) << missing.output();
  EXPECT_NE(missing.output().find("HTTP status 404"), std::string::npos) << missing.output();
  EXPECT_EQ(missing.output().find("shard"), std::string::npos) << missing.output();
}

}  // namespace
}  // namespace ggufs::test
