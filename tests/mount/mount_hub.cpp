// hf:// models through a real mount: nginx stands in for the Hub (checking the token) and for
// its CDN on another port; the token reaches the Hub and never the CDN.
#include <gtest/gtest.h>

#include "hub_server.h"
#include "mount_util.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

constexpr const char* kToken = "hf_TestTokenNeverLeaks";

// Files under the paths the Hub's resolve/ URLs name: OWNER/REPO/resolve/REVISION/PATH.
std::filesystem::path repo_dir(const std::filesystem::path& root, const std::string& revision) {
  const auto dir = root / "someone" / "tiny" / "resolve" / revision;
  std::filesystem::create_directories(dir);
  return dir;
}

std::string hub_env(const HubAndCdn& hub, const std::string& token_setting) {
  return "env -u HF_TOKEN -u HF_TOKEN_PATH HF_ENDPOINT=" + hub.endpoint() + " " + token_setting;
}

TEST(MountHub, TheTokenReachesTheHubAndNeverTheCdn) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache;
  const auto file = write_one_key_model(repo_dir(served.path(), "main"), "llama");
  HubAndCdn hub(served.path(), kToken);
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount m("hf://someone/tiny/m.gguf", "-o cache_dir=" + cache.path().string(),
          hub_env(hub, std::string("HF_TOKEN=") + kToken));
  ASSERT_TRUE(m.mounted()) << m.output();
  EXPECT_EQ(read_text(m / "metadata/general.architecture"), "llama\n");
  EXPECT_EQ(read_text(m / "gguf.json").size(), read_text(local / "gguf.json").size());
  // The Hub got the token on resolve/main; the CDN got every request without it.
  EXPECT_NE(hub.hub_log().find(std::string("302 \"Bearer ") + kToken +
                               "\" \"GET /someone/tiny/resolve/main/m.gguf"),
            std::string::npos)
      << hub.hub_log();
  EXPECT_NE(hub.cdn_log().find("206 \"-\" \"GET /someone/tiny/resolve/main/m.gguf"),
            std::string::npos)
      << hub.cdn_log();
  EXPECT_EQ(hub.cdn_log().find(kToken), std::string::npos) << hub.cdn_log();
  EXPECT_EQ(hub.cdn_log().find("Bearer"), std::string::npos) << hub.cdn_log();
  EXPECT_EQ(m.output().find(kToken), std::string::npos);
}

TEST(MountHub, TheTokenFileInHfHomeARevisionAndASplitModel) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache, hf_home;
  write_split(repo_dir(served.path(), "v1.0"), 3);
  std::ofstream(hf_home.path() / "token") << kToken << "\n";
  HubAndCdn hub(served.path(), kToken);
  Mount m("hf://someone/tiny@v1.0/m-00001-of-00003.gguf", "-o cache_dir=" + cache.path().string(),
          hub_env(hub, "HF_HOME=" + hf_home.path().string()));
  ASSERT_TRUE(m.mounted()) << m.output();
  const auto t3b = tensor_bytes(7);  // shard 3's second tensor (split_fixture.h)
  EXPECT_EQ(read_text(m / "raw/t3.b"), std::string(t3b.begin(), t3b.end()));
  EXPECT_NE(hub.cdn_log().find("GET /someone/tiny/resolve/v1.0/m-00003-of-00003.gguf"),
            std::string::npos)
      << hub.cdn_log();
  EXPECT_EQ(hub.cdn_log().find("Bearer"), std::string::npos) << hub.cdn_log();
}

TEST(MountHub, WithoutTheTokenTheMountIsRefused) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_NGINX();
  TempDir served, cache, empty_home;
  write_one_key_model(repo_dir(served.path(), "main"), "llama");
  HubAndCdn hub(served.path(), kToken);
  Mount m("hf://someone/tiny/m.gguf", "-o cache_dir=" + cache.path().string(),
          hub_env(hub, "HF_HOME=" + empty_home.path().string()));
  EXPECT_FALSE(m.mounted());
  EXPECT_EQ(m.exit_code(), 2) << m.output();
  EXPECT_NE(m.output().find("hf://someone/tiny/m.gguf"), std::string::npos) << m.output();
  EXPECT_NE(m.output().find("HTTP status 401"), std::string::npos) << m.output();
}

}  // namespace
}  // namespace ggufs::test
