// s3:// models through a real mount: moto_server on loopback checks every request's SigV4
// signature; ggufs mounts s3://BUCKET/KEY with credentials from the environment or from ~/.aws
// files, in path and virtual-host style, and every byte read is checked against a local mount.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ggufs/ggml_type.h"
#include "ggufs/gguf_writer.h"
#include "moto_server.h"
#include "mount_util.h"
#include "split_fixture.h"

namespace ggufs::test {
namespace {

// `dir`/model.gguf: `n` F32 tensors "w<i>" of `floats` values (i - j / 512) and one F16 tensor.
std::filesystem::path write_model(const std::filesystem::path& dir, int n, std::size_t floats) {
  GgufWriter g;
  g.add_string("general.architecture", "llama");
  g.add_string("general.name", "s3 test");
  for (int i = 0; i < n; ++i) {
    std::vector<std::uint8_t> bytes(floats * 4);
    for (std::size_t j = 0; j < floats; ++j) {
      const float v = static_cast<float>(i) - static_cast<float>(j % 512) / 512.0f;
      std::memcpy(bytes.data() + 4 * j, &v, 4);
    }
    g.add_tensor("w" + std::to_string(i), GGML_TYPE_F32, {floats / 4, 4}, bytes);
  }
  std::vector<std::uint8_t> half(2 * 1024);
  for (std::size_t j = 0; j < 1024; ++j) half[2 * j + 1] = static_cast<std::uint8_t>(0x3c + j % 3);
  g.add_tensor("h", GGML_TYPE_F16, {1024}, half);
  const auto file = dir / "model.gguf";
  g.write_file(file.string());
  return file;
}

// The environment of a ggufs command: none of the caller's AWS settings, then `vars`
// ("NAME=value …", values quoted by the caller where needed).
std::string aws_env(const std::string& vars) {
  std::string cmd = "env";
  for (const char* v :
       {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
        "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
        "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"}) {
    cmd += std::string(" -u ") + v;
  }
  return cmd + " " + vars;
}

std::string key_env(const MotoS3& s3, const std::string& endpoint) {
  return aws_env("AWS_ACCESS_KEY_ID=" + s3.key() + " AWS_SECRET_ACCESS_KEY=" + quote(s3.secret()) +
                 " AWS_ENDPOINT_URL=" + endpoint);
}

// Every file of `local`'s metadata/, raw/, f32/, npy/ and tensors.tsv equals `remote`'s.
void expect_same_tree(const Mount& local, const Mount& remote) {
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
  // gguf.json equal but for the shards' paths: the s3:// names instead of local paths.
  auto remote_json = nlohmann::json::parse(read_text(remote / "gguf.json"));
  auto local_json = nlohmann::json::parse(read_text(local / "gguf.json"));
  const std::size_t shards = local_json.contains("shards") ? local_json["shards"].size() : 0;
  ASSERT_EQ(remote_json.contains("shards") ? remote_json["shards"].size() : 0, shards);
  for (std::size_t i = 0; i < shards; ++i) {
    const std::string local_path = local_json["shards"][i]["path"];
    const std::string remote_path = remote_json["shards"][i]["path"];
    EXPECT_TRUE(remote_path.starts_with("s3://")) << remote_path;
    EXPECT_EQ(std::filesystem::path(remote_path).filename(),
              std::filesystem::path(local_path).filename());
    local_json["shards"][i].erase("path");
    remote_json["shards"][i].erase("path");
  }
  EXPECT_EQ(remote_json, local_json);
}

TEST(S3Mount, PathStyleWithKeysFromTheEnvironmentEveryByteEqual) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_MOTO();
  TempDir served, cache;
  const auto file = write_model(served.path(), 4, 1 << 20);  // 4 tensors of 4 MiB
  MotoS3 s3;
  s3.upload("models", served.path());
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount remote("s3://models/model.gguf", "-o cache_dir=" + cache.path().string(),
               key_env(s3, s3.endpoint()));
  ASSERT_TRUE(remote.mounted()) << remote.output();
  expect_same_tree(local, remote);
  for (const char* range : {"bs=1 skip=3 count=5", "bs=4093 skip=1001 count=7"}) {
    SCOPED_TRACE(range);
    const auto dd = [&](const std::filesystem::path& p) {
      return run("dd status=none if=" + quote(p) + " " + range).output;
    };
    EXPECT_EQ(dd(remote / "f32/w3"), dd(local / "f32/w3"));
  }
  EXPECT_EQ(remote.output().find(s3.secret()), std::string::npos);
}

TEST(S3Mount, VirtualHostStyle) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_MOTO();
  TempDir served, cache;
  const auto file = write_model(served.path(), 2, 1 << 18);
  MotoS3 s3;
  s3.upload("models", served.path());
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  // libcurl resolves *.localhost to the loopback address itself; moto takes the bucket from
  // the Host header (models.localhost:PORT).
  Mount remote("s3://models/model.gguf", "-o s3_virtual_host -o cache_dir=" + cache.path().string(),
               key_env(s3, "http://localhost:" + std::to_string(s3.port())));
  ASSERT_TRUE(remote.mounted()) << remote.output();
  expect_same_tree(local, remote);
}

TEST(S3Mount, ProfileInAwsFilesWithTemporaryCredentials) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_MOTO();
  TempDir served, cache, home;
  const auto file = write_model(served.path(), 2, 1 << 18);
  MotoS3 s3;
  s3.upload("models", served.path());
  // The assumed role's session token is several hundred bytes on one line.
  std::filesystem::create_directories(home.path() / ".aws");
  std::ofstream(home.path() / ".aws" / "credentials")
      << "[default]\naws_access_key_id = AKIADEFAULTNOTUSED00\naws_secret_access_key = x\n\n"
      << "[tester]\naws_access_key_id = " << s3.session_key()
      << "\naws_secret_access_key = " << s3.session_secret()
      << "\naws_session_token = " << s3.session_token() << "\n";
  std::ofstream(home.path() / ".aws" / "config")
      << "[profile tester]\nregion = us-east-1\nendpoint_url = " << s3.endpoint()
      << "\ns3 =\n  addressing_style = path\n";
  Mount local(file);
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount remote("s3://models/model.gguf", "-o cache_dir=" + cache.path().string(),
               aws_env("HOME=" + quote(home.path()) + " AWS_PROFILE=tester"));
  ASSERT_TRUE(remote.mounted()) << remote.output();
  expect_same_tree(local, remote);

  // The same profile through AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE elsewhere.
  TempDir other_home;
  std::filesystem::rename(home.path() / ".aws", other_home.path() / "aws");
  Mount moved(
      "s3://models/model.gguf", "-o cache_dir=" + cache.path().string(),
      aws_env("HOME=" + quote(home.path()) + " AWS_PROFILE=tester" +
              " AWS_SHARED_CREDENTIALS_FILE=" + quote(other_home.path() / "aws/credentials") +
              " AWS_CONFIG_FILE=" + quote(other_home.path() / "aws/config")));
  ASSERT_TRUE(moved.mounted()) << moved.output();
  EXPECT_EQ(read_text(moved / "raw/w1"), read_text(local / "raw/w1"));
}

TEST(S3Mount, SplitModel) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_MOTO();
  TempDir served, cache;
  const std::string prefix = write_split(served.path(), 3);
  MotoS3 s3;
  s3.upload("shards", served.path());
  Mount local(shard_path(prefix, 1, 3));
  ASSERT_TRUE(local.mounted()) << local.output();
  Mount remote("s3://shards/m-00001-of-00003.gguf", "-o cache_dir=" + cache.path().string(),
               key_env(s3, s3.endpoint()));
  ASSERT_TRUE(remote.mounted()) << remote.output();
  expect_same_tree(local, remote);
  const auto t3b = tensor_bytes(7);
  EXPECT_EQ(read_text(remote / "raw/t3.b"), std::string(t3b.begin(), t3b.end()));
}

TEST(S3Mount, RefusalsNameTheS3ErrorAndNeverTheSecret) {
  GGUFS_REQUIRE_FUSE();
  GGUFS_REQUIRE_MOTO();
  TempDir served, cache;
  write_model(served.path(), 1, 1024);
  MotoS3 s3;
  s3.upload("models", served.path());
  const std::string cache_opt = "-o cache_dir=" + cache.path().string();
  const auto expect_refusal = [&](const std::string& name, const std::string& env,
                                  const std::string& code, const std::string& secret) {
    SCOPED_TRACE(code);
    Mount m(name, cache_opt, env);
    EXPECT_FALSE(m.mounted());
    EXPECT_EQ(m.exit_code(), 2) << m.output();
    EXPECT_NE(m.output().find(code), std::string::npos) << m.output();
    EXPECT_NE(m.output().find(name), std::string::npos) << m.output();
    EXPECT_EQ(std::count(m.output().begin(), m.output().end(), '\n'), 1) << m.output();
    EXPECT_EQ(m.output().find(secret), std::string::npos) << m.output();
  };
  const std::string wrong = "wrong" + s3.secret().substr(5);
  expect_refusal("s3://models/model.gguf",
                 aws_env("AWS_ACCESS_KEY_ID=" + s3.key() + " AWS_SECRET_ACCESS_KEY=" +
                         quote(wrong) + " AWS_ENDPOINT_URL=" + s3.endpoint()),
                 "SignatureDoesNotMatch", wrong);
  // moto answers an access key it does not know with 403 InvalidAccessKeyId.
  expect_refusal("s3://models/model.gguf",
                 aws_env("AWS_ACCESS_KEY_ID=AKIAUNKNOWNKEY000000 AWS_SECRET_ACCESS_KEY=" +
                         quote(s3.secret()) + " AWS_ENDPOINT_URL=" + s3.endpoint()),
                 "InvalidAccessKeyId", s3.secret());
  expect_refusal("s3://models/nosuch.gguf", key_env(s3, s3.endpoint()), "NoSuchKey", s3.secret());
  expect_refusal("s3://nosuchbucket/model.gguf", key_env(s3, s3.endpoint()), "NoSuchBucket",
                 s3.secret());
  // No credentials anywhere (HOME without ~/.aws).
  TempDir home;
  expect_refusal("s3://models/model.gguf",
                 aws_env("HOME=" + quote(home.path()) + " AWS_ENDPOINT_URL=" + s3.endpoint()),
                 "no AWS credentials", s3.secret());
}

}  // namespace
}  // namespace ggufs::test
